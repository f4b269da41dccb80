#!/usr/bin/env bash
# Per-CPU-class AEAD ratios (docs/performance.md): for each x86-64 class, our
# engine for that class against aws-lc-rs and BoringSSL limited to the class
# (OPENSSL_ia32cap, which both read) and ring where ring's code for the class
# runs here, interleaved bursts pinned to one core. Classes this CPU cannot emulate
# (it lacks their engine's features) are skipped.
#
#   scripts/bench-classes.sh [sizes] [algs] > results.md
#
# Defaults: 16,64,256,1350,8192,16384 and aes128,aes256,chacha.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-16,64,256,1350,8192,16384}
algs=${2:-aes128,aes256,chacha}
core=${BENCH_CORE:-1}
cargo bench -q -p rustls-fusion-benches --bench interleaved --no-run >/dev/null 2>&1
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) vCPU; $(rustc --version)"
echo "Command: scripts/bench-classes.sh $sizes $algs (taskset -c $core, $(date -u +%Y-%m-%d))"
for class in avx512 avx2 aesni; do
    echo
    echo "### CPU class \`$class\`"
    CPU_CLASS=$class taskset -c "$core" cargo bench -q -p rustls-fusion-benches --bench interleaved -- "$sizes" "$algs" 2>/dev/null \
        | sed -n '/^CPU class/,$p' || echo "(skipped: this CPU does not run the class's engines)"
done
