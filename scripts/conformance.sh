#!/usr/bin/env bash
# Conformance matrix against a real BoringSSL peer (tls-tests, feature
# `boringssl`). See docs/conformance.md.
#
# boring-sys builds BoringSSL from source: it needs cmake, and bindgen needs
# libclang. scripts/install-boringssl-deps.sh installs them when run as root;
# otherwise it says how and this fails.
# Extra arguments go to the test binary, e.g. a filter or `--nocapture`.
set -euo pipefail

cd "$(dirname "$0")/.."

bash scripts/install-boringssl-deps.sh

exec cargo test -p tls-tests --features boringssl --test boringssl -- "$@"
