#!/usr/bin/env bash
# Instructions per record (seal + open) under callgrind, for the backends
# valgrind's CPU runs (X86AesNi, X86Avx2, X86Ssse3, Base): stable numbers
# for A/B comparisons where wall-clock timings on a shared VM are noise.
#
#   scripts/instructions.sh [SIZES] [ALGS]
#   e.g. scripts/instructions.sh 16,64,256,1350,16384 aes128,chacha
#
# Each cell runs benches/instructions.rs twice under callgrind (0 and
# RECORDS records) and prints (difference) / RECORDS.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-16,64,256,1350,16384}
algs=${2:-aes128,aes256,chacha}
records=${RECORDS:-200}
bin=$(cargo bench -p rustls-fusion-benches --bench instructions --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "instructions":
        print(m["executable"])')
count() {
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$@" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$out"
    rm -f "$out"
}
printf '%-8s %-10s' alg backend
for s in ${sizes//,/ }; do printf ' %10s' "$s"; done
echo
for alg in ${algs//,/ }; do
    case $alg in
        chacha) backends="x86-avx2 x86-ssse3 base" ;;
        *) backends="x86-aesni base" ;;
    esac
    for b in $backends; do
        printf '%-8s %-10s' "$alg" "$b"
        for s in ${sizes//,/ }; do
            zero=$(count "$alg" "$b" "$s" 0)
            many=$(count "$alg" "$b" "$s" "$records")
            printf ' %10d' $(((many - zero) / records))
        done
        echo
    done
done
