#!/usr/bin/env bash
# The test command's fuzz step: each fuzz target for FUZZ_SECONDS (default
# 10) over its committed corpus, so every input that once crashed stays a
# regression test. Needs the nightly toolchain; installs cargo-fuzz if it is
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rustup toolchain list | grep -q '^nightly'; then
    echo "fuzz: installing the nightly toolchain" >&2
    rustup toolchain install nightly --profile minimal
fi
# Sixteen codegen units: the build, not the 10 s runs, is what this step
# takes (fuzz.sh).
FUZZ_CODEGEN_UNITS=${FUZZ_CODEGEN_UNITS:-16} bash scripts/fuzz.sh all "${FUZZ_SECONDS:-10}"
