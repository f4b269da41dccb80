#!/usr/bin/env python3
"""Cycle models of the bulk loops on aarch64 cores, by llvm-mca (LLVM 19's
scheduling models): ChaCha20-Poly1305 on the `Aarch64Neon` engine against
aws-lc's own stitched loop (the assembly the aws-lc-sys crate ships), or
with `--aes`, AES-GCM on `Aarch64Aes` against aws-lc's.

    scripts/aarch64-mca.py BINARY [MODEL ...]
    scripts/aarch64-mca.py --aes BINARY [MODEL ...]

AES-GCM: one 8-block batch of the engine's seal and open (the loop of the
entry point with 80 or 112 `AESE` and at least 24 carry-less multiplies;
its forward branches dropped, as every step runs in a long record), each
build (with and without SHA-3's `EOR3`), against aws-lc's 8-block loops
(`aesv8_gcm_8x_*`, which aws-lc runs on Neoverse V1, V2 and N2) and its
4-block kernel (`aes_gcm_*_kernel`, elsewhere; one loop for every key
size, so only its AES-256 figure is a model of what runs).

BINARY is an aarch64 build that contains the engine (the instructions
bench: scripts/aarch64-counts.sh builds it). The engine's seal has one
vertical pass per 8 blocks (512 bytes): 10 double rounds, the first 8 of
which also absorb 32 bytes of Poly1305 each as two 16-byte blocks; the
compiler makes that two loops, a double round with its Poly1305 step and
one without. aws-lc's main seal loop runs 10 iterations of a double round
of 5 blocks with 32 bytes of Poly1305 per 320 bytes. Each loop body is
modelled alone (llvm-mca, 200 iterations, steady state), so the figures
leave out what runs once per pass: the input rows, the transposes and the
XOR with the data (docs/perf/aarch64.md sets the loops' share against
the instruction counts: about 79 % of the engine's pass, 93 % of aws-lc's). They
are models of the loops, not runs on hardware (docs/perf/aarch64.md).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

AES = len(sys.argv) > 1 and sys.argv[1] == "--aes"
ARGS = sys.argv[2:] if AES else sys.argv[1:]
MODELS = ARGS[1:] or ["neoverse-n1", "neoverse-v1", "neoverse-v2", "apple-m1"]
MCA = "llvm-mca-19"
BRANCH = re.compile(r"^(b\.\w+|b|cbz|cbnz|tbz|tbnz)$")


def disassemble(binary, *symbol):
    """Instructions (address, mnemonic, operands) of the functions whose
    mangled name contains every string of `symbol`."""
    out = subprocess.run(
        ["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", binary],
        capture_output=True, text=True, check=True,
    ).stdout
    ins, inside = [], False
    for line in out.splitlines():
        head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if head:
            inside = all(part in head.group(1) for part in symbol)
            continue
        m = re.match(r"\s*([0-9a-f]+):\t(\S+)\s*(.*)", line)
        if inside and m:
            ins.append((int(m.group(1), 16), m.group(2), re.sub(r"\s*//.*", "", m.group(3))))
    return ins


def loops(ins):
    """Loops (backward branches): (body without its branches, vector ops,
    multiplies). A Poly1305 step's forward branches (whether the run has a
    block left) are dropped: the body is modelled as if every step runs,
    as it does in a long record's passes."""
    at = {a: i for i, (a, _, _) in enumerate(ins)}
    found = []
    for i, (a, op, args) in enumerate(ins):
        t = re.match(r"([0-9a-f]+)", args)
        if BRANCH.match(op) and t and int(t.group(1), 16) <= a and int(t.group(1), 16) in at:
            body = ins[at[int(t.group(1), 16)]:i + 1]
            vec = sum(1 for _, _, x in body if re.search(r"\.(4s|16b|8h)", x))
            mul = sum(1 for _, o, _ in body if o in ("mul", "umulh"))
            found.append(([(o, x) for _, o, x in body if not BRANCH.match(o)], vec, mul))
    return found


def cycles(body, model):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        for op, args in body:
            f.write(f"\t{op}\t{args}\n")
        name = f.name
    out = subprocess.run(
        [MCA, "-mtriple=aarch64", f"-mcpu={model}", "-mattr=+aes,+sha3", "-iterations=200", name],
        capture_output=True, text=True, check=True,
    ).stdout
    os.unlink(name)
    return int(re.search(r"Total Cycles:\s+(\d+)", out).group(1)) / 200


def awslc_loop():
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    path = sorted(glob.glob(f"{home}/registry/src/*/aws-lc-sys-*/aws-lc/generated-src/"
                            "linux-aarch64/crypto/cipher_extra/chacha20_poly1305_armv8.S"))[-1]
    text = open(path).read().splitlines()
    start = text.index(".Lseal_main_loop_rounds:")
    body = []
    for line in text[start + 1:]:
        line = re.sub(r"//.*", "", line).strip()
        if not line or line.startswith("."):
            continue
        op, _, args = line.partition("\t")
        if op == "b.gt":  # the loop's back edge: one iteration ends here
            break
        if not BRANCH.match(op):
            body.append((op, args.strip()))
    return path, body


def aes_loop(binary, nr, *symbol):
    """The shortest loop of the functions named by `symbol` with one
    8-block batch: `8 * nr` `AESE` and at least 24 carry-less multiplies
    (4-block kernels: `4 * 14`); its body without branches."""
    ins = disassemble(binary, *symbol)
    at = {a: i for i, (a, _, _) in enumerate(ins)}
    best = None
    for i, (a, op, args) in enumerate(ins):
        t = re.search(r"(?:^|,\s*)([0-9a-f]{4,})(?:\s+<.*>)?$", args)
        if BRANCH.match(op) and t and int(t.group(1), 16) <= a and int(t.group(1), 16) in at:
            body = ins[at[int(t.group(1), 16)]:i + 1]
            aese = sum(1 for _, o, _ in body if o == "aese")
            clmul = sum(1 for _, o, _ in body if o in ("pmull", "pmull2"))
            blocks = 4 if nr == 56 else 8
            if aese == nr and clmul >= 3 * blocks and (best is None or len(body) < len(best)):
                best = body
    return [(o, x) for _, o, x in best if not BRANCH.match(o)] if best else None


def main_aes(binary):
    rows = []
    for label, nr, symbol in [
        ("ours, seal, SHA-3 build", 80, ("aarch64_aes..sha3..Entry", "4seal")),
        ("ours, open, SHA-3 build", 80, ("aarch64_aes..sha3..Entry", "4open")),
        ("ours, seal, plain build", 80, ("aarch64_aes..plain..Entry", "4seal")),
        ("ours, open, plain build", 80, ("aarch64_aes..plain..Entry", "4open")),
        ("aws-lc 8x, seal", 80, ("aesv8_gcm_8x_enc_128",)),
        ("aws-lc 8x, open", 80, ("aesv8_gcm_8x_dec_128",)),
        ("ours, seal, SHA-3 build, AES-256", 112, ("aarch64_aes..sha3..Entry", "4seal")),
        ("ours, seal, plain build, AES-256", 112, ("aarch64_aes..plain..Entry", "4seal")),
        ("aws-lc 8x, seal, AES-256", 112, ("aesv8_gcm_8x_enc_256",)),
        ("aws-lc 4x, seal, AES-256", 56, ("aws_lc_", "_aes_gcm_enc_kernel")),
        ("ring 4x, seal, AES-256", 56, ("ring_core_", "__aes_gcm_enc_kernel")),
    ]:
        body = aes_loop(binary, nr, *symbol)
        if body is None:
            sys.exit(f"no batch loop found for {label}")
        blocks = 4 if nr == 56 else 8
        rows.append((label, len(body), blocks, body))
    print(f"# llvm-mca ({MCA}), steady-state loop bodies, cycles per byte")
    print("| loop | instructions | " + " | ".join(MODELS) + " |")
    print("|---|---|" + "---|" * len(MODELS))
    for label, n, blocks, body in rows:
        cells = []
        for model in MODELS:
            try:
                cells.append(f"{cycles(body, model) / (16 * blocks):.3f}")
            except subprocess.CalledProcessError:
                cells.append("n/a")
        print(f"| {label} | {n} | " + " | ".join(cells) + " |")


def main():
    if AES:
        return main_aes(ARGS[0])
    binary = ARGS[0]
    # The seal entry point: its smallest loops of one 8-block double round
    # (over 200 vector instructions), with 20 multiplies (two Poly1305
    # blocks) and with none.
    found = loops(disassemble(binary, "aarch64_neon..Entry$u20$as$u20$", "4seal"))
    with_poly = sorted((b for b in found if b[1] >= 200 and b[2] == 20), key=lambda b: len(b[0]))
    without = sorted((b for b in found if b[1] >= 200 and b[2] == 0), key=lambda b: len(b[0]))
    if not with_poly or not without:
        sys.exit("no 8-block double-round loops found in the engine")
    ours_rp, ours_r = with_poly[0][0], without[0][0]
    path, aws = awslc_loop()
    print(f"# llvm-mca ({MCA}), steady-state loop bodies; aws-lc: {os.path.basename(path)}")
    print(f"# ours: {len(ours_rp)} + {len(ours_r)} instructions a double round (with/without"
          f" Poly1305), aws-lc: {len(aws)}")
    print("| model | ours, c/B | aws-lc, c/B | ours / aws-lc |")
    print("|---|---|---|---|")
    for model in MODELS:
        rp, r, a = cycles(ours_rp, model), cycles(ours_r, model), cycles(aws, model)
        ours = (8 * rp + 2 * r) / 512  # one pass: 512 bytes
        theirs = 10 * a / 320  # one iteration of the main loop: 320 bytes
        print(f"| {model} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} |")


main()
