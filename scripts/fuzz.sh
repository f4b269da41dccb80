#!/usr/bin/env bash
# Runs one fuzz target (fuzz/fuzz_targets/TARGET.rs) for SECONDS over its
# committed corpus (fuzz/corpus/TARGET), on the nightly toolchain with
# cargo-fuzz (libFuzzer + AddressSanitizer). New inputs the run finds go to
# a scratch corpus, not the committed one; a crash is written under
# fuzz/artifacts/TARGET/ and fails the script (add it to the corpus once
# fixed, so it stays a regression input).
#
#   scripts/fuzz.sh TARGET SECONDS     e.g. scripts/fuzz.sh aead 1800
#   scripts/fuzz.sh all SECONDS        every target in turn
#   FUZZ_CODEGEN_UNITS=16 scripts/fuzz.sh ...   a faster build, slower code
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
    echo "usage: scripts/fuzz.sh TARGET|all SECONDS" >&2
    exit 2
fi
targets=$1
seconds=$2
if [ "$targets" = all ]; then
    targets="aead record nonce_guard quic"
fi
# 0.13 or later: `--codegen-units` (below) came with it.
have=$(cargo +nightly fuzz --version 2>/dev/null | awk '{print $2}' || true)
if [ -z "$have" ] || [ "$(printf '%s\n' 0.13.0 "$have" | sort -V | head -1)" != 0.13.0 ]; then
    echo "fuzz: installing cargo-fuzz (found: ${have:-none})" >&2
    cargo install cargo-fuzz --locked
fi
# FUZZ_CODEGEN_UNITS=N builds with N codegen units: cargo-fuzz's release
# build otherwise takes one (the fastest fuzzing code), which compiles our
# crate, instrumented, on one core for about 10 minutes; the test command's
# short run takes 16.
cgu=()
if [ -n "${FUZZ_CODEGEN_UNITS:-}" ]; then cgu=(--codegen-units "$FUZZ_CODEGEN_UNITS"); fi
for t in $targets; do
    scratch=target/fuzz-corpus/$t
    mkdir -p "$scratch" "fuzz/corpus/$t"
    echo "== fuzz $t for ${seconds}s"
    (cd fuzz && cargo +nightly fuzz run "${cgu[@]}" "$t" "../$scratch" "corpus/$t" -- \
        -max_total_time="$seconds" -print_final_stats=1 -timeout=20 -rss_limit_mb=4096)
done
