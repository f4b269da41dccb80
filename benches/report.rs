//! What rustls-fusion would do on this machine, before installing it:
//!
//! ```text
//! cargo run --release -p rustls-fusion-benches --bin report [-- --svg PATH]
//! ```
//!
//! Prints the CPU, the engines detected (the first is the one used), and for
//! each TLS 1.3 suite our speed against aws-lc-rs, ring and BoringSSL at 64
//! B, 1 KiB and 16 KiB: at the AEAD level (seal and open in place, 5-byte
//! AAD) and through rustls (client write + server read over an in-memory
//! connection, against the aws-lc-rs and ring rustls providers: BoringSSL
//! has none). Ratios are the reference's time over ours (above 1.00×: ours
//! is faster), the median over rounds of interleaved bursts of the ratio
//! within each round (`records.rs`, as `interleaved.rs` times them). Each
//! suite ends with a verdict: `faster` (every ratio ≥ 1.03), `same` (none
//! below 0.97) or `slower: …` with what to pin instead. The ratios are also
//! plotted to an SVG file (default `target/rustls-fusion-report.svg`).
//!
//! Runs for well under two minutes; pin it to one core
//! (`taskset -c 1 cargo run …`) on a busy machine. `OPENSSL_ia32cap`, if
//! set, limits aws-lc-rs and BoringSSL as in the benches (`lib.rs`).

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use rustls::crypto::CryptoProvider;
use rustls::SupportedCipherSuite;
use rustls_fusion::aead::Backend;
use rustls_fusion_benches::records::{self, median_ratio, time_records, Alg, Imp};
use rustls_fusion_benches::reference::Reference;
use rustls_fusion_benches::tls_link::{own_suite, providers, Link};

const SIZES: [usize; 3] = [64, 1024, 16384];
/// Rounds of interleaved bursts per measurement.
const ROUNDS: usize = 51;
/// Target burst lengths, µs: AEAD calls, rustls round trips.
const AEAD_BURST_US: f64 = 5000.0;
const TLS_BURST_US: f64 = 10000.0;
/// The references, in the order of the AEAD implementations below.
const REFS: [&str; 3] = ["aws-lc-rs", "ring", "BoringSSL"];
/// Verdict thresholds.
const FASTER: f64 = 1.03;
const SLOWER: f64 = 0.97;

struct Suite {
    alg: Alg,
    name: &'static str,
    tls: SupportedCipherSuite,
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Seal,
    Open,
    Rustls,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Self::Seal => "seal",
            Self::Open => "open",
            Self::Rustls => "rustls",
        }
    }
}

/// One size and level: our ratio against each reference (`None` where the
/// reference does not take part: BoringSSL through rustls).
struct Row {
    size: usize,
    level: Level,
    ratios: [Option<f64>; 3],
}

struct SuiteResult {
    name: &'static str,
    ours: Backend,
    rows: Vec<Row>,
    /// Every backend this CPU runs for the suite, with its worst AEAD ratio
    /// against any reference.
    worst: Vec<(Backend, f64)>,
    verdict: String,
}

/// A `\r`-updated progress bar on stderr.
struct Progress {
    done: usize,
    total: usize,
    label: String,
}

impl Progress {
    fn tick(&mut self) {
        self.done += 1;
        let width = 30;
        let filled = self.done * width / self.total.max(1);
        eprint!(
            "\r[{}{}] {:3}% {:<40}",
            "#".repeat(filled),
            "-".repeat(width - filled),
            self.done * 100 / self.total.max(1),
            self.label
        );
        let _ = std::io::stderr().flush();
    }

    fn finish(&self) {
        eprint!("\r{:80}\r", "");
    }
}

fn size_name(n: usize) -> String {
    if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} B")
    }
}

fn main() {
    let start = Instant::now();
    let svg_path = svg_path();
    print_cpu();
    let aes = rustls_fusion::aead::Aes128Gcm::backends();
    let chacha = rustls_fusion::aead::ChaCha20Poly1305::backends();
    for (what, list) in [("AES-GCM", &aes), ("ChaCha20-Poly1305", &chacha)] {
        let names: Vec<&str> = list.iter().map(|b| b.name()).collect();
        println!(
            "{what} engines here: {} (used: {})",
            names.join(", "),
            list[0].name()
        );
        if list[0] == Backend::Base {
            println!(
                "  This CPU runs the base provider's code for {what} (aws-lc-rs's AEAD): no \
                 engine of ours. rustls-fusion adds its nonce guard and nothing faster."
            );
        }
    }
    if let Ok(cap) = std::env::var("OPENSSL_ia32cap") {
        println!("OPENSSL_ia32cap={cap}: aws-lc-rs and BoringSSL are limited by it");
    }
    use rustls_fusion::cipher_suite as cs;
    let suites = [
        Suite {
            alg: Alg::Aes128,
            name: "AES-128-GCM",
            tls: cs::TLS13_AES_128_GCM_SHA256,
        },
        Suite {
            alg: Alg::Aes256,
            name: "AES-256-GCM",
            tls: cs::TLS13_AES_256_GCM_SHA384,
        },
        Suite {
            alg: Alg::ChaCha,
            name: "ChaCha20-Poly1305",
            tls: cs::TLS13_CHACHA20_POLY1305_SHA256,
        },
    ];
    let mut progress = Progress {
        done: 0,
        total: suites.len() * SIZES.len() * ROUNDS * 2,
        label: String::new(),
    };
    let results: Vec<SuiteResult> = suites
        .iter()
        .map(|s| measure(s, &mut progress, aes[0], chacha[0]))
        .collect();
    progress.finish();
    println!(
        "\nRatio: reference time / ours, above 1.00× is faster; the median over {ROUNDS} rounds \
         of interleaved bursts. AEAD: in place, 5-byte AAD. rustls: client write + server read."
    );
    for r in &results {
        print_suite(r);
    }
    println!();
    for r in &results {
        println!("{:<18} {}", format!("{}:", r.name), r.verdict);
    }
    match std::fs::write(&svg_path, svg(&results)) {
        Ok(()) => println!("\nplot: {}", svg_path.display()),
        Err(e) => println!("\nplot not written to {}: {e}", svg_path.display()),
    }
    println!("measured in {:.0} s", start.elapsed().as_secs_f64());
}

/// `--svg PATH`, else `rustls-fusion-report.svg` in the target directory
/// this binary was built into.
fn svg_path() -> PathBuf {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--svg" {
            return args.next().expect("--svg PATH").into();
        }
        if let Some(p) = a.strip_prefix("--svg=") {
            return p.into();
        }
    }
    // The binary is <target>/<profile>/report.
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()));
    target
        .unwrap_or_else(|| "target".into())
        .join("rustls-fusion-report.svg")
}

fn print_cpu() {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let model_name = field("model name").unwrap_or_else(|| "unknown".into());
    let mut details = Vec::new();
    if let Some(v) = field("vendor_id") {
        details.push(v);
    }
    if let Some(f) = field("cpu family") {
        details.push(format!("family {f}"));
    }
    if let Some(m) = field("model") {
        details.push(format!("model {m}"));
    }
    println!(
        "CPU: {model_name}{} ({}, {} logical CPUs)",
        if details.is_empty() {
            String::new()
        } else {
            format!(" [{}]", details.join(", "))
        },
        std::env::consts::ARCH,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
}

fn measure(
    suite: &Suite,
    progress: &mut Progress,
    aes_used: Backend,
    chacha_used: Backend,
) -> SuiteResult {
    let alg = suite.alg;
    let chacha = alg == Alg::ChaCha;
    let key = alg.key();
    let backends = alg.backends();
    // References first (in REFS order), then every backend of ours, the
    // used one first.
    let mut imps: Vec<(String, Imp)> = vec![
        (
            REFS[0].into(),
            Imp::Reference(Reference::aws_lc(chacha, &key)),
        ),
        (
            REFS[1].into(),
            Imp::Reference(Reference::ring(chacha, &key)),
        ),
        (
            REFS[2].into(),
            Imp::Reference(Reference::boringssl(chacha, &key)),
        ),
    ];
    for &b in &backends {
        imps.push((b.name().into(), Imp::ours(alg, &key, b)));
    }
    let mut rows = Vec::new();
    let mut worst = vec![f64::MAX; backends.len()];
    for &n in &SIZES {
        progress.label = format!("{} {} AEAD", suite.name, size_name(n));
        let iters = records::burst_iters(&imps, n, AEAD_BURST_US);
        let times = time_records(&imps, n, ROUNDS, iters, || progress.tick());
        for (op, level) in [(0, Level::Seal), (1, Level::Open)] {
            for (j, w) in worst.iter_mut().enumerate() {
                for r in 0..REFS.len() {
                    *w = w.min(median_ratio(&times[op], &[r], REFS.len() + j));
                }
            }
            rows.push(Row {
                size: n,
                level,
                ratios: [0, 1, 2].map(|r| Some(median_ratio(&times[op], &[r], REFS.len()))),
            });
        }
    }
    // Through rustls: fusion (as installed: its default engines), aws-lc-rs,
    // ring.
    for &n in &SIZES {
        progress.label = format!("{} {} rustls", suite.name, size_name(n));
        let data = vec![0xab; n];
        let mut links: Vec<Link> = providers()
            .iter()
            .map(|(name, provider)| {
                let own = own_suite(provider, suite.tls).expect("every provider has the suite");
                let provider = CryptoProvider {
                    cipher_suites: vec![own],
                    ..provider.clone()
                };
                let mut link = Link::new(&provider, own, n);
                assert_eq!(link.round(&data), n, "{name}: round trip");
                link
            })
            .collect();
        // Enough round trips for about TLS_BURST_US of the slowest.
        let mut slowest = 0f64;
        for link in &mut links {
            let t = Instant::now();
            for _ in 0..10 {
                black_box(link.round(black_box(&data)));
            }
            slowest = slowest.max(t.elapsed().as_nanos() as f64 / 10.0);
        }
        let iters = ((TLS_BURST_US * 1000.0 / slowest) as usize).max(5);
        let times = records::interleave(
            links.len(),
            ROUNDS,
            iters,
            |i| {
                black_box(links[i].round(black_box(&data)));
            },
            || progress.tick(),
        );
        // providers(): fusion, aws-lc-rs, ring.
        rows.push(Row {
            size: n,
            level: Level::Rustls,
            ratios: [
                Some(median_ratio(&times, &[1], 0)),
                Some(median_ratio(&times, &[2], 0)),
                None,
            ],
        });
    }
    let worst: Vec<(Backend, f64)> = backends.iter().copied().zip(worst).collect();
    let verdict = verdict(&rows, &worst, chacha, aes_used, chacha_used);
    SuiteResult {
        name: suite.name,
        ours: backends[0],
        rows,
        worst,
        verdict,
    }
}

fn verdict(
    rows: &[Row],
    worst: &[(Backend, f64)],
    chacha: bool,
    aes_used: Backend,
    chacha_used: Backend,
) -> String {
    let all: Vec<f64> = rows.iter().flat_map(|r| r.ratios).flatten().collect();
    if all.iter().all(|&r| r >= FASTER) {
        return "faster".into();
    }
    let lowest = all.iter().copied().fold(f64::MAX, f64::min);
    if lowest >= SLOWER {
        return "same".into();
    }
    // Where ours is slower: "16 KiB seal 0.86×" (the lowest of the row).
    let slow: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let low = r.ratios.iter().flatten().copied().fold(f64::MAX, f64::min);
            (low < SLOWER).then(|| format!("{} {} {low:.2}×", size_name(r.size), r.level.name()))
        })
        .collect();
    let slow = slow.join(", ");
    // Another engine of ours whose worst AEAD ratio is better and not slower.
    let (used, used_worst) = worst[0];
    let candidate = worst[1..]
        .iter()
        .copied()
        .filter(|&(b, w)| b != Backend::Base && w >= SLOWER && w > used_worst)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let base = "use the base provider (rustls::crypto::aws_lc_rs::default_provider())";
    if let Some((best, best_worst)) = candidate {
        let (aes, cha) = if chacha {
            (aes_used, best)
        } else {
            (best, chacha_used)
        };
        format!(
            "slower ({slow} on {used:?}): pin {best:?}, worst AEAD ratio {best_worst:.2}× here, \
             with rustls_fusion::provider_with_backends(Backend::{aes:?}, Backend::{cha:?})"
        )
    } else if all.iter().any(|&r| r >= FASTER) {
        format!(
            "slower at {slow}, faster elsewhere; no other engine of ours does better here: if \
             your traffic is mostly at the slower sizes, {base}"
        )
    } else {
        format!("slower ({slow}), nothing faster: {base}")
    }
}

fn print_suite(r: &SuiteResult) {
    println!("\n{} (ours: {})", r.name, r.ours.name());
    println!("| size | level | vs aws-lc-rs | vs ring | vs BoringSSL |");
    println!("|---|---|---|---|---|");
    for row in &r.rows {
        let mut line = format!("| {} | {} |", size_name(row.size), row.level.name());
        for ratio in row.ratios {
            match ratio {
                Some(x) => write!(line, " {x:.2}× |").unwrap(),
                None => line += " — |",
            }
        }
        println!("{line}");
    }
    let others: Vec<String> = r
        .worst
        .iter()
        .map(|(b, w)| format!("{} {w:.2}×", b.name()))
        .collect();
    println!(
        "worst AEAD ratio of each engine here: {}",
        others.join(", ")
    );
    println!("verdict: {}", r.verdict);
}

/// A hand-written SVG: one panel per suite, bars from the 1.00 line to each
/// ratio, per size and level, one colour per reference.
fn svg(results: &[SuiteResult]) -> String {
    const COLOURS: [&str; 3] = ["#e8890c", "#5b5bd6", "#2e8b57"];
    let all: Vec<f64> = results
        .iter()
        .flat_map(|r| &r.rows)
        .flat_map(|row| row.ratios)
        .flatten()
        .collect();
    let lo = all.iter().copied().fold(0.8f64, f64::min) - 0.05;
    let hi = all.iter().copied().fold(1.2f64, f64::max) + 0.05;
    let (lo, hi) = ((lo * 10.0).floor() / 10.0, (hi * 10.0).ceil() / 10.0);
    let groups = results.first().map_or(0, |r| r.rows.len());
    let (left, bar, gap, panel_h, plot_h, top) = (60.0, 12.0, 14.0, 250.0, 170.0, 50.0);
    let group_w = 3.0 * bar + gap;
    let width = left + groups as f64 * group_w + 20.0;
    let height = top + results.len() as f64 * panel_h + 10.0;
    let mut s = String::new();
    writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    )
    .unwrap();
    writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{left}" y="20" font-size="14" font-weight="bold">rustls-fusion: reference time / ours (above 1.00: ours is faster)</text>"#
    )
    .unwrap();
    for (k, name) in REFS.iter().enumerate() {
        let x = left + k as f64 * 110.0;
        writeln!(
            s,
            r#"<rect x="{x}" y="30" width="10" height="10" fill="{}"/><text x="{}" y="39">{name}</text>"#,
            COLOURS[k],
            x + 14.0
        )
        .unwrap();
    }
    for (p, r) in results.iter().enumerate() {
        let y0 = top + p as f64 * panel_h + 20.0;
        let y = |v: f64| y0 + (hi - v) / (hi - lo) * plot_h;
        // The verdict's first word in the heading, all of it as a tooltip.
        let short = r.verdict.split([' ', '(']).next().unwrap_or_default();
        writeln!(
            s,
            r#"<text x="{left}" y="{}" font-size="13" font-weight="bold">{} (ours: {}): {short}<title>{}</title></text>"#,
            y0 - 6.0,
            r.name,
            r.ours.name(),
            xml_escape(&r.verdict)
        )
        .unwrap();
        // Grid every 0.1, labelled every 0.2.
        let mut v = lo;
        while v <= hi + 1e-9 {
            let labelled = ((v * 10.0).round() as i64) % 2 == 0;
            writeln!(
                s,
                r##"<line x1="{left}" x2="{}" y1="{1:.1}" y2="{1:.1}" stroke="#e4e4e4"/>"##,
                width - 20.0,
                y(v)
            )
            .unwrap();
            if labelled {
                writeln!(
                    s,
                    r#"<text x="{}" y="{:.1}" text-anchor="end">{v:.1}</text>"#,
                    left - 6.0,
                    y(v) + 4.0
                )
                .unwrap();
            }
            v += 0.1;
        }
        for band in [SLOWER, FASTER] {
            writeln!(
                s,
                r##"<line x1="{left}" x2="{}" y1="{1:.1}" y2="{1:.1}" stroke="#999" stroke-dasharray="3,3"/>"##,
                width - 20.0,
                y(band)
            )
            .unwrap();
        }
        for (g, row) in r.rows.iter().enumerate() {
            let gx = left + g as f64 * group_w + gap / 2.0;
            for (k, ratio) in row.ratios.iter().enumerate() {
                let Some(v) = *ratio else { continue };
                let (a, b) = (y(v.max(1.0)), y(v.min(1.0)));
                writeln!(
                    s,
                    r#"<rect x="{:.1}" y="{a:.1}" width="{bar}" height="{:.1}" fill="{}"><title>{} {} vs {}: {v:.2}×</title></rect>"#,
                    gx + k as f64 * bar,
                    (b - a).max(0.5),
                    COLOURS[k],
                    size_name(row.size),
                    row.level.name(),
                    REFS[k]
                )
                .unwrap();
            }
            let cx = gx + 1.5 * bar;
            writeln!(
                s,
                r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                y0 + plot_h + 14.0,
                size_name(row.size),
                y0 + plot_h + 27.0,
                row.level.name()
            )
            .unwrap();
        }
        writeln!(
            s,
            r#"<line x1="{left}" x2="{}" y1="{1:.1}" y2="{1:.1}" stroke="black"/>"#,
            width - 20.0,
            y(1.0)
        )
        .unwrap();
    }
    s += "</svg>\n";
    s
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
