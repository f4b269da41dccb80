#!/usr/bin/env python3
"""Plot criterion throughput results and print them as markdown tables.

Reads `<criterion-dir>/**/new/benchmark.json` (group_id, function_id,
value_str, throughput) and the `estimates.json` beside it (mean point
estimate, in ns), then for every selected group:

* writes `<out>/<group with '/' as '_'>.svg`: throughput (GiB/s) against
  size (log x axis), one line per implementation;
* prints a markdown table to stdout: one row per size, one column per
  implementation (GiB/s), plus "fusion best / ring" and
  "fusion best / aws-lc-rs" (fusion best = the fastest `fusion*` column).

By default the AEAD bench's groups are selected (`aes128gcm/...`,
`aes256gcm/...`, `chacha20poly1305/...`); `--groups '^tls/'` selects the
rustls-level bench instead (any criterion group whose ids are
`<implementation>/<size>` works).

Usage:
    python3 scripts/plot_bench.py --criterion-dir target/criterion --out docs/img

Uses matplotlib when it is importable, otherwise writes the SVG itself
(`--no-matplotlib` forces the latter).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

GIB = float(1 << 30)
DEFAULT_GROUPS = r"^(aes128gcm|aes256gcm|chacha20poly1305)/"

# Column order and colours: our backends best-first, then the references.
KNOWN_ORDER = [
    "fusion",
    "fusion-x86-vaes",
    "fusion-x86-aesni",
    "fusion-x86-avx2",
    "fusion-portable",
    "ring",
    "aws-lc-rs",
    "graviola",
]
KNOWN_COLOURS = {
    "fusion": "#d62728",
    "fusion-x86-vaes": "#d62728",
    "fusion-x86-aesni": "#ff7f0e",
    "fusion-x86-avx2": "#d62728",
    "fusion-portable": "#8c564b",
    "ring": "#1f77b4",
    "aws-lc-rs": "#2ca02c",
    "graviola": "#9467bd",
}
SPARE_COLOURS = ["#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#843c39"]
REFERENCES = ["ring", "aws-lc-rs"]


@dataclass
class Point:
    group: str
    implementation: str
    size: int  # bytes processed per iteration
    gib_per_s: float


def parse_size(value_str: str, throughput: dict | None) -> int | None:
    """The size a benchmark ran at: its throughput in bytes, else its value."""
    if throughput:
        for key in ("Bytes", "BytesDecimal"):
            if key in throughput:
                return int(throughput[key])
    try:
        return int(value_str)
    except (TypeError, ValueError):
        return None


def load(criterion_dir: Path, groups: re.Pattern) -> list[Point]:
    points = []
    for bench_json in sorted(criterion_dir.glob("**/new/benchmark.json")):
        try:
            bench = json.loads(bench_json.read_text())
            estimates = json.loads((bench_json.parent / "estimates.json").read_text())
        except (OSError, json.JSONDecodeError) as err:
            print(f"skipping {bench_json.parent}: {err}", file=sys.stderr)
            continue
        group = bench.get("group_id")
        implementation = bench.get("function_id")
        if not group or not implementation or not groups.search(group):
            continue
        size = parse_size(bench.get("value_str"), bench.get("throughput"))
        mean_ns = estimates.get("mean", {}).get("point_estimate")
        if size is None or not mean_ns:
            print(f"skipping {bench.get('full_id', bench_json)}: no size or mean", file=sys.stderr)
            continue
        points.append(Point(group, implementation, size, size / (mean_ns * 1e-9) / GIB))
    return points


def order_key(name: str):
    if name in KNOWN_ORDER:
        return (KNOWN_ORDER.index(name), name)
    # Unknown fusion backends before the portable one, anything else last.
    if name.startswith("fusion"):
        return (KNOWN_ORDER.index("fusion-portable") - 0.5, name)
    return (len(KNOWN_ORDER), name)


def colour_for(name: str, spare: dict[str, str]) -> str:
    if name in KNOWN_COLOURS:
        return KNOWN_COLOURS[name]
    if name not in spare:
        spare[name] = SPARE_COLOURS[len(spare) % len(SPARE_COLOURS)]
    return spare[name]


def human_size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def fmt_gib(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.3f}" if v < 1 else f"{v:.2f}"


def table(group: str, series: dict[str, dict[int, float]], impls: list[str]) -> str:
    sizes = sorted({s for data in series.values() for s in data})
    fusion = [i for i in impls if i.startswith("fusion")]
    refs = [r for r in REFERENCES if r in series] if fusion else []
    header = ["size"] + [f"{i} (GiB/s)" for i in impls] + [f"fusion best / {r}" for r in refs]
    lines = [f"### {group}", "", "| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    for size in sizes:
        row = [human_size(size)] + [fmt_gib(series[i].get(size)) for i in impls]
        best = max((series[i][size] for i in fusion if size in series[i]), default=None)
        for r in refs:
            ref = series[r].get(size)
            row.append(f"{best / ref:.2f}×" if best is not None and ref else "–")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def file_name(group: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", group).strip("_") + ".svg"


# ---------------------------------------------------------------- matplotlib


def plot_matplotlib(path: Path, group: str, series, impls, colours) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "plot_bench"  # stable ids: reproducible files
    fig, ax = plt.subplots(figsize=(8, 5))
    sizes = sorted({s for data in series.values() for s in data})
    for name in impls:
        xs = sorted(series[name])
        ax.plot(xs, [series[name][x] for x in xs], marker="o", label=name, color=colours[name])
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([human_size(s) for s in sizes])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("size (log scale)")
    ax.set_ylabel("throughput (GiB/s)")
    ax.set_title(group)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


# ------------------------------------------------------------- hand-made SVG


def nice_step(span: float, ticks: int = 8) -> float:
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def plot_svg(path: Path, group: str, series, impls, colours) -> None:
    width, height = 800, 500
    left, right, top, bottom = 70, 170, 40, 60
    pw, ph = width - left - right, height - top - bottom
    sizes = sorted({s for data in series.values() for s in data})
    ymax_data = max(v for data in series.values() for v in data.values())
    step = nice_step(ymax_data)
    ymax = step * math.ceil(ymax_data * 1.05 / step)
    lo, hi = math.log2(sizes[0]), math.log2(sizes[-1])
    if hi == lo:
        lo, hi = lo - 1, hi + 1

    def x(size: int) -> float:
        return left + (math.log2(size) - lo) / (hi - lo) * pw

    def y(v: float) -> float:
        return top + ph - v / ymax * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left + pw / 2}" y="{top - 15}" text-anchor="middle" font-size="15">'
        f"{escape(group)}</text>",
    ]
    # Grid and y ticks.
    i = 0
    while i * step <= ymax + 1e-9:
        v = i * step
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + pw}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
        i += 1
    # x ticks at the measured sizes.
    for s in sizes:
        out.append(f'<line x1="{x(s):.1f}" y1="{top}" x2="{x(s):.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{x(s):.1f}" y="{top + ph + 18}" text-anchor="middle">{human_size(s)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 15}" text-anchor="middle">size (log scale)</text>')
    out.append(
        f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + ph / 2})">throughput (GiB/s)</text>'
    )
    # One polyline per implementation, with a legend entry.
    for n, name in enumerate(impls):
        pts = sorted(series[name].items())
        colour = colours[name]
        coords = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in pts)
        out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for s, v in pts:
            out.append(
                f'<circle cx="{x(s):.1f}" cy="{y(v):.1f}" r="3.5" fill="{colour}">'
                f"<title>{escape(name)} {human_size(s)}: {v:.3f} GiB/s</title></circle>"
            )
        ly = top + 10 + n * 20
        lx = left + pw + 15
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 25}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<circle cx="{lx + 12.5}" cy="{ly}" r="3.5" fill="{colour}"/>')
        out.append(f'<text x="{lx + 32}" y="{ly + 4}">{escape(name)}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--criterion-dir", type=Path, required=True,
                        help="criterion output directory, e.g. target/criterion")
    parser.add_argument("--out", type=Path, required=True, help="directory for the SVG plots")
    parser.add_argument("--groups", default=DEFAULT_GROUPS,
                        help=f"regex selecting group ids (default: {DEFAULT_GROUPS!r})")
    parser.add_argument("--no-matplotlib", action="store_true",
                        help="write the SVG by hand even if matplotlib is installed")
    args = parser.parse_args()

    if not args.criterion_dir.is_dir():
        parser.error(f"{args.criterion_dir} is not a directory")
    points = load(args.criterion_dir, re.compile(args.groups))
    if not points:
        print(f"no benchmarks matching {args.groups!r} under {args.criterion_dir}", file=sys.stderr)
        return 1

    plot = plot_svg
    if not args.no_matplotlib:
        try:
            import matplotlib  # noqa: F401

            plot = plot_matplotlib
        except ImportError:
            print("matplotlib not found: writing SVG by hand", file=sys.stderr)

    by_group: dict[str, dict[str, dict[int, float]]] = {}
    for p in points:
        by_group.setdefault(p.group, {}).setdefault(p.implementation, {})[p.size] = p.gib_per_s

    args.out.mkdir(parents=True, exist_ok=True)
    spare: dict[str, str] = {}
    for group in sorted(by_group):
        series = by_group[group]
        impls = sorted(series, key=order_key)
        colours = {name: colour_for(name, spare) for name in impls}
        path = args.out / file_name(group)
        plot(path, group, series, impls, colours)
        print(table(group, series, impls))
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
