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

# The binary from the workspace's test build (`cargo test --workspace`, which
# builds it: the benches crate turns `boringssl` on). Asking cargo for this
# one target instead resolves other features and rebuilds BoringSSL.
bin=$(cargo test --workspace --no-run --message-format=json |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "boringssl":
        print(m["executable"])')
[ -n "$bin" ] || { echo "conformance: no boringssl test binary was built" >&2; exit 1; }
cd tls-tests
exec "$bin" "$@"
