#!/usr/bin/env bash
# Instructions per record (seal + open) on aarch64, under qemu user-mode
# emulation with an instruction-counting plugin (scripts/qemu-insn-count.c):
# the aarch64 counterpart of scripts/instructions.sh (callgrind), for the
# native backends against `Base` and the libraries' own AEADs, where no
# aarch64 hardware is at hand. An exact count of executed instructions, not
# a time: it says nothing of how many issue per cycle (docs/perf/aarch64.md).
#
#   scripts/aarch64-counts.sh [SIZES] [ALGS]
#   e.g. scripts/aarch64-counts.sh 16,64,1350,16384 chacha
#
# Each cell runs benches/instructions.rs twice (0 and RECORDS records) and
# prints (difference) / RECORDS. QEMU_CPU picks the emulated CPU model
# (default `max`: AES, PMULL, SHA-3), which decides the libraries' own
# dispatch. Needs what scripts/aarch64.sh installs, plus g++ for aarch64
# (BoringSSL's build), installed the same way when run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-16,64,256,1350,16384}
algs=${2:-chacha,aes128}
records=${RECORDS:-100}
target=aarch64-unknown-linux-gnu

if ! command -v aarch64-linux-gnu-g++ >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends g++-aarch64-linux-gnu >&2
    else
        echo "aarch64-counts: needs g++-aarch64-linux-gnu (apt-get install g++-aarch64-linux-gnu)" >&2
        exit 1
    fi
fi
if ! [ -x /usr/bin/cargo ] || ! command -v qemu-aarch64 >/dev/null; then
    echo "aarch64-counts: run scripts/aarch64.sh first (it installs the cross toolchain and qemu)" >&2
    exit 1
fi

export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_DIR=target/aarch64
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar

plugin=$CARGO_TARGET_DIR/libqemu-insn-count.so
mkdir -p "$CARGO_TARGET_DIR"
cc -shared -fPIC -O2 -o "$plugin" scripts/qemu-insn-count.c

bin=$(/usr/bin/cargo bench --target $target -p rustls-fusion-benches --bench instructions --no-run \
    --message-format=json 2>/dev/null | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "instructions":
        print(m["executable"])')

count() {
    qemu-aarch64 -cpu "${QEMU_CPU:-max}" -L /usr/aarch64-linux-gnu \
        -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib -plugin "$plugin" "$bin" "$@" 2>&1 >/dev/null |
        awk '/^instructions:/ {print $2}'
}

printf '%-8s %-13s' alg backend
for s in ${sizes//,/ }; do printf ' %9s' "$s"; done
echo
for alg in ${algs//,/ }; do
    case $alg in
        chacha) backends="aarch64-neon base aws-lc-rs ring boringssl" ;;
        *) backends="aarch64-aes base aws-lc-rs ring boringssl" ;;
    esac
    for b in $backends; do
        printf '%-8s %-13s' "$alg" "$b"
        for s in ${sizes//,/ }; do
            zero=$(count "$alg" "$b" "$s" 0)
            some=$(count "$alg" "$b" "$s" "$records")
            printf ' %9d' $(((some - zero) / records))
        done
        echo
    done
done
