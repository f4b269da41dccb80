#!/usr/bin/env bash
# Constant-time check: provider/tests/consttime.rs under valgrind's memcheck
# (keys and plaintext marked undefined; any branch or address that depends
# on them is an error). Valgrind runs the backends its virtual CPU offers:
# AVX2 but no AVX-512 or VAES, so X86AesNi (its AVX build), X86Avx2,
# X86Ssse3 and Base (see docs/security.md). Installs
# valgrind when run as root; otherwise prints the install line.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind
    else
        echo "consttime: valgrind is needed: sudo apt-get install valgrind" >&2
        exit 1
    fi
fi
# Release build (debug info on): the code that ships, at speed valgrind can bear.
export CARGO_PROFILE_RELEASE_DEBUG=true
bin=$(cargo test --release -p rustls-fusion --features audit --test consttime --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "consttime":
        print(m["executable"])')
export CONSTTIME_UNDER_VALGRIND=1
# The canary first: memcheck must report a branch on a secret byte.
valgrind --tool=memcheck --quiet "$bin" --ignored canary --nocapture --test-threads 1
valgrind --tool=memcheck --error-exitcode=1 --track-origins=yes \
    --suppressions=scripts/consttime.supp "$bin" --nocapture --test-threads 1
