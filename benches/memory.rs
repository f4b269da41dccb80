//! Heap bytes per AEAD key, as malloc counts them (`mallinfo2().uordblks`,
//! which includes the C allocations of aws-lc), over 1,000 live keys: every
//! backend of ours this CPU runs, next to ring's and aws-lc-rs's
//! `LessSafeKey` (boxed, as a record layer holds it).
//!
//! `cargo bench -p rustls-fusion-benches --bench memory`

use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, ChaCha20Poly1305};

const KEYS: usize = 1000;

#[repr(C)]
#[derive(Default)]
struct Mallinfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

extern "C" {
    fn mallinfo2() -> Mallinfo2;
}

fn in_use() -> usize {
    // SAFETY: glibc's mallinfo2 has no preconditions.
    unsafe { mallinfo2() }.uordblks
}

/// Bytes per key while `KEYS` keys made by `make` are alive.
fn per_key<T>(make: impl Fn(usize) -> T) -> usize {
    let mut keys = Vec::with_capacity(KEYS);
    let before = in_use();
    for i in 0..KEYS {
        keys.push(Box::new(make(i)));
    }
    let after = in_use();
    drop(keys);
    (after - before) / KEYS
}

fn key<const N: usize>(i: usize) -> [u8; N] {
    let mut k = [0u8; N];
    k[..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
    k
}

macro_rules! less_safe_key {
    ($krate:ident, $alg:ident, $len:literal) => {
        per_key(|i| {
            $krate::aead::LessSafeKey::new(
                $krate::aead::UnboundKey::new(&$krate::aead::$alg, &key::<$len>(i)).unwrap(),
            )
        })
    };
}

fn main() {
    println!("heap bytes per key (malloc's count over {KEYS} live keys, boxed)");
    println!("| key | bytes |\n|---|---|");
    let row = |name: String, bytes: usize| println!("| {name} | {bytes} |");
    for b in Aes128Gcm::backends() {
        row(
            format!("AES-128-GCM fusion {b}"),
            per_key(|i| Aes128Gcm::with_backend(&key(i), b).unwrap()),
        );
    }
    row(
        "AES-128-GCM ring".into(),
        less_safe_key!(ring, AES_128_GCM, 16),
    );
    row(
        "AES-128-GCM aws-lc-rs".into(),
        less_safe_key!(aws_lc_rs, AES_128_GCM, 16),
    );
    for b in Aes256Gcm::backends() {
        row(
            format!("AES-256-GCM fusion {b}"),
            per_key(|i| Aes256Gcm::with_backend(&key(i), b).unwrap()),
        );
    }
    row(
        "AES-256-GCM ring".into(),
        less_safe_key!(ring, AES_256_GCM, 32),
    );
    row(
        "AES-256-GCM aws-lc-rs".into(),
        less_safe_key!(aws_lc_rs, AES_256_GCM, 32),
    );
    for b in ChaCha20Poly1305::backends() {
        row(
            format!("ChaCha20-Poly1305 fusion {b}"),
            per_key(|i| ChaCha20Poly1305::with_backend(&key(i), b).unwrap()),
        );
    }
    row(
        "ChaCha20-Poly1305 ring".into(),
        less_safe_key!(ring, CHACHA20_POLY1305, 32),
    );
    row(
        "ChaCha20-Poly1305 aws-lc-rs".into(),
        less_safe_key!(aws_lc_rs, CHACHA20_POLY1305, 32),
    );
}
