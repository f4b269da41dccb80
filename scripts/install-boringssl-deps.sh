#!/usr/bin/env bash
# What building BoringSSL from source (boring-sys: the tls-tests conformance
# matrix, and the benches crate's BoringSSL reference) needs: cmake, and
# libclang for bindgen. Installs them through apt-get when run as root and
# they are missing; otherwise says how and fails. Used by scripts/test.sh
# (before clippy, which builds the benches crate) and scripts/conformance.sh.
set -euo pipefail

apt_line='apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cmake libclang-dev'

have_libclang() {
    # libclang-dev installs an unversioned libclang.so for bindgen to dlopen.
    ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 ||
        ls /usr/lib/*/libclang.so >/dev/null 2>&1 ||
        [ -n "${LIBCLANG_PATH:-}" ]
}

if ! command -v cmake >/dev/null 2>&1 || ! have_libclang; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "install-boringssl-deps: installing cmake and libclang-dev" >&2
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cmake libclang-dev
    else
        echo "install-boringssl-deps: cmake and libclang-dev are needed to build BoringSSL; install them with:" >&2
        echo "  sudo sh -c '$apt_line'" >&2
        exit 1
    fi
fi
