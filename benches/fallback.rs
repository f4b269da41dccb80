//! Where no engine of ours runs, which AEAD should run: the base provider's
//! (aws-lc-rs) or RustCrypto's portable one? Times both on this machine with
//! aws-lc limited to a CPU without AES-NI, PCLMULQDQ and AVX, and RustCrypto
//! built with its soft backends, best of 15 bursts each:
//!
//! ```sh
//! RUSTFLAGS='--cfg aes_backend="soft" --cfg polyval_backend="soft" --cfg chacha20_backend="soft" --cfg poly1305_backend="soft"' \
//!   CARGO_TARGET_DIR=target/soft OPENSSL_ia32cap='~0x1202000200000000:~0x00005E42DC230020' \
//!   taskset -c 1 cargo bench -p rustls-fusion-benches --bench fallback
//! ```
//! (The mask clears CPUID.1:ECX AVX, AES, PCLMULQDQ and the leaf-7 AVX2,
//! AVX-512, VAES and VPCLMULQDQ bits; add `0x0000020000000000` to the first
//! word to hide SSSE3 as well.)

use std::hint::black_box;
use std::time::Instant;

use aes_gcm::aead::{AeadInOut, KeyInit};

fn best_ns(iters: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..15 {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        best = best.min(t.elapsed().as_nanos() as f64 / iters as f64);
    }
    best
}

fn rustcrypto<C: AeadInOut + KeyInit>(key: &[u8], n: usize, iters: usize) -> f64 {
    let cipher = C::new_from_slice(key).unwrap();
    let nonce = [7u8; 12];
    let mut buf = vec![0u8; n];
    best_ns(iters, || {
        let nonce = nonce.as_slice().try_into().unwrap();
        let tag = cipher.encrypt_inout_detached(nonce, b"hdr", buf.as_mut_slice().into());
        black_box(tag.unwrap());
    })
}

fn aws_lc(alg: &'static aws_lc_rs::aead::Algorithm, key: &[u8], n: usize, iters: usize) -> f64 {
    use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
    let key = LessSafeKey::new(UnboundKey::new(alg, key).unwrap());
    let mut buf = vec![0u8; n];
    best_ns(iters, || {
        let nonce = Nonce::assume_unique_for_key([7; 12]);
        let tag = key.seal_in_place_separate_tag(nonce, Aad::from(b"hdr"), &mut buf);
        let _ = black_box(tag.unwrap());
    })
}

fn main() {
    println!(
        "seal, ns per record; OPENSSL_ia32cap={}",
        std::env::var("OPENSSL_ia32cap").unwrap_or_default()
    );
    println!(
        "| bytes | AES-128-GCM RustCrypto | aws-lc-rs | ChaCha20-Poly1305 RustCrypto | aws-lc-rs |"
    );
    println!("|---|---|---|---|---|");
    for n in [16usize, 1350, 16384] {
        let iters = (2_000_000 / (n + 500)).max(10);
        let aes_rc = rustcrypto::<aes_gcm::Aes128Gcm>(&[1; 16], n, iters);
        let aes_aws = aws_lc(&aws_lc_rs::aead::AES_128_GCM, &[1; 16], n, iters);
        let cc_rc = rustcrypto::<chacha20poly1305::ChaCha20Poly1305>(&[1; 32], n, iters);
        let cc_aws = aws_lc(&aws_lc_rs::aead::CHACHA20_POLY1305, &[1; 32], n, iters);
        println!("| {n} | {aes_rc:.0} | {aes_aws:.0} | {cc_rc:.0} | {cc_aws:.0} |");
    }
}
