#!/usr/bin/env bash
# The project's one test command (README, .ci/run): formatting, lints, every
# test in the workspace, the vector tests once more with RustCrypto's soft
# backends forced, the `ring` base provider, and the BoringSSL conformance
# matrix (which installs cmake and libclang-dev through apt-get when root).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "rustfmt"
cargo fmt --all -- --check

step "clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "tests"
cargo test --workspace

step "vectors with RustCrypto's soft backends forced (the truly portable path)"
RUSTFLAGS='--cfg aes_backend="soft" --cfg polyval_backend="soft" --cfg chacha20_backend="soft" --cfg poly1305_backend="soft"' \
    CARGO_TARGET_DIR=target/soft cargo test -p rustls-fusion --test vectors

step "provider tests on the ring base provider"
cargo test -p rustls-fusion --no-default-features --features ring

step "BoringSSL conformance matrix"
scripts/conformance.sh
