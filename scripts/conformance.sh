#!/usr/bin/env bash
# Conformance matrix against a real BoringSSL peer (tls-tests, feature
# `boringssl`). See docs/conformance.md.
#
# boring-sys builds BoringSSL from source: it needs cmake, and bindgen needs
# libclang. Installs them when run as root; otherwise says how and fails.
# Extra arguments go to the test binary, e.g. a filter or `--nocapture`.
set -euo pipefail

cd "$(dirname "$0")/.."

apt_line='apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cmake libclang-dev'

have_libclang() {
    # libclang-dev installs an unversioned libclang.so for bindgen to dlopen.
    ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 ||
        ls /usr/lib/*/libclang.so >/dev/null 2>&1 ||
        [ -n "${LIBCLANG_PATH:-}" ]
}

if ! command -v cmake >/dev/null 2>&1 || ! have_libclang; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "conformance: installing cmake and libclang-dev" >&2
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cmake libclang-dev
    else
        echo "conformance: cmake and libclang-dev are needed to build BoringSSL; install them with:" >&2
        echo "  sudo sh -c '$apt_line'" >&2
        exit 1
    fi
fi

exec cargo test -p tls-tests --features boringssl --test boringssl -- "$@"
