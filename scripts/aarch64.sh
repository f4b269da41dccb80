#!/usr/bin/env bash
# The aarch64 leg of the test command: cross-builds the provider's tests and
# the rustls end-to-end tests for aarch64-unknown-linux-gnu and runs them
# under qemu user-mode emulation (correctness only; emulated speed means
# nothing). On aarch64 record protection is `Base` by default (the base
# provider's own AEAD), `Aarch64Neon` (ChaCha20-Poly1305 on NEON) and
# `Aarch64Aes` (AES-GCM on AES + PMULL: a build with SHA-3's EOR3 and one
# without) where pinned, so this checks that the crate builds there, that
# detection lists them, and that every vector, differential, stack-residue
# and rustls test passes on each, with aws-lc-rs's and ring's aarch64 code
# as the base; qemu's default CPU model has SHA-3, a Cortex-A72 model runs
# the provider tests again without it.
#
# It uses Debian's Rust toolchain (rustc-web / cargo-web, with the arm64
# standard library from libstd-rust-web-dev:arm64) for this leg only,
# gcc-aarch64-linux-gnu as linker and C compiler for ring and aws-lc, and
# qemu-user as the test runner. Installs what is missing when run as root;
# otherwise prints the install line and fails.
set -euo pipefail
cd "$(dirname "$0")/.."

target=aarch64-unknown-linux-gnu
packages="rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"

missing() {
    [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] &&
        [ -d /usr/lib/rustlib/$target/lib ] &&
        command -v aarch64-linux-gnu-gcc >/dev/null &&
        [ -f /usr/aarch64-linux-gnu/lib/libc.so.6 ] &&
        command -v qemu-aarch64 >/dev/null && return 1
    return 0
}

if missing; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "aarch64: installing $packages" >&2
        dpkg --add-architecture arm64
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages
    else
        echo "aarch64: these Debian packages are needed; install them with:" >&2
        echo "  sudo sh -c 'dpkg --add-architecture arm64 && apt-get update && apt-get install -y --no-install-recommends $packages'" >&2
        exit 1
    fi
fi

# Debian's toolchain for this leg only (rustup's stays the default).
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
cargo=/usr/bin/cargo
export CARGO_TARGET_DIR=target/aarch64
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
# The cross glibc's own libraries: with only `-L`, its ld.so would load the
# multiarch /lib/aarch64-linux-gnu/libc.so.6 (libc6:arm64, pulled in by the
# arm64 std) when that is a different build, and hang in pthread_create.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib"

# Code that only x86-64 uses must not linger as dead code here.
export RUSTFLAGS="-D warnings"

"$RUSTC" --version
echo "qemu: $(qemu-aarch64 --version | head -1)"

step() { printf '\n== aarch64: %s\n' "$*"; }

step "provider tests (aws-lc-rs base), with the audit hooks (stack residue)"
$cargo test --release --target $target -p rustls-fusion --features audit

step "provider tests on a CPU model without SHA-3 (Cortex-A72: AES and PMULL), for the AES-GCM engine's build without EOR3"
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -cpu cortex-a72 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib" \
    $cargo test --release --target $target -p rustls-fusion --features audit

step "every AES, PMULL and NEON intrinsic inlined into its engine"
# An intrinsic left out of line (its caller lacked the target feature)
# passes its operands through memory: round keys on the stack, which only
# the stack-residue test would notice, and slowly.
objdump=aarch64-linux-gnu-objdump
for t in stack_residue differential quic; do
    bin=$(ls -t "$CARGO_TARGET_DIR/$target/release/deps/$t"-* | grep -v '\.d$' | head -1)
    calls=$($objdump -d --no-show-raw-insn -C "$bin" | grep -cE 'bl\s+[0-9a-f]+ <core::core_arch::' || true)
    echo "$t: $calls calls to out-of-line intrinsics"
    [ "$calls" = 0 ]
done

step "provider tests (ring base), with the audit hooks (stack residue)"
$cargo test --release --target $target -p rustls-fusion --no-default-features --features ring,audit

step "rustls end-to-end tests"
# Under qemu, quinn's 50 MB-per-suite interop test takes 90 s; every_backend
# still moves 4 MB of every suite through each backend pair against
# aws-lc-rs (ours the client on one pair, the server on the next), with key
# updates.
$cargo test --release --target $target -p tls-tests -- --skip every_suite_ours_on_either_end_and_both
