//! AEAD seal/open throughput: rustls-fusion (every backend this CPU runs)
//! next to ring, aws-lc-rs, BoringSSL (`EVP_AEAD` through boring-sys) and
//! graviola, in the same run.
//!
//! Groups are named `<alg>/<op>/aad<N>`, ids `<impl>/<bytes>`:
//! `cargo bench -p rustls-fusion-benches --bench aead -- 'aes128gcm/seal/aad5'`.
//! `BENCH_QUICK=1` shortens warm-up and measurement (for smoke runs).
//! `CPU_CLASS=avx512|avx2|aesni` benches only our engine for that CPU class
//! against aws-lc-rs and BoringSSL limited to the class (and ring where its
//! code for the class runs here; see `lib.rs`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};
use rustls_fusion_benches::reference::BoringAead;

const SIZES: [usize; 7] = [16, 64, 256, 1024, 1350, 8192, 16384];

/// `BENCH_SIZES=16,16384` restricts the record sizes.
fn sizes() -> Vec<usize> {
    match std::env::var("BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().parse().expect("BENCH_SIZES: numbers"))
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}
const AADS: [usize; 2] = [5, 13];
const NONCE: [u8; 12] = [7; 12];

/// One AEAD implementation under test (static dispatch: no per-call
/// indirection to blur small-record numbers).
trait Aead {
    fn seal(&self, aad: &[u8], buf: &mut [u8]) -> [u8; 16];
    /// Opens `ciphertext ‖ tag` in place (the TLS record layout).
    fn open(&self, aad: &[u8], sealed: &mut [u8]) -> bool;
}

fn split_tag(sealed: &mut [u8]) -> (&mut [u8], [u8; 16]) {
    let (ct, tag) = sealed.split_at_mut(sealed.len() - 16);
    (ct, tag.try_into().unwrap())
}

#[derive(Clone, Copy, PartialEq)]
enum Alg {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

impl Alg {
    fn name(self) -> &'static str {
        match self {
            Self::Aes128Gcm => "aes128gcm",
            Self::Aes256Gcm => "aes256gcm",
            Self::ChaCha20Poly1305 => "chacha20poly1305",
        }
    }

    fn key(self) -> Vec<u8> {
        vec![0x42; if self == Self::Aes128Gcm { 16 } else { 32 }]
    }
}

macro_rules! fusion_impl {
    ($name:ident) => {
        impl Aead for $name {
            fn seal(&self, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
                self.seal_in_place(&NONCE, aad, buf)
            }
            fn open(&self, aad: &[u8], sealed: &mut [u8]) -> bool {
                let (ct, tag) = split_tag(sealed);
                self.open_in_place(&NONCE, aad, ct, &tag).is_ok()
            }
        }
    };
}
fusion_impl!(Aes128Gcm);
fusion_impl!(Aes256Gcm);
fusion_impl!(ChaCha20Poly1305);

/// ring and aws-lc-rs share `LessSafeKey`'s API: one wrapper type each.
macro_rules! reference_impl {
    ($name:ident, $krate:ident) => {
        struct $name($krate::aead::LessSafeKey);

        impl $name {
            fn new(alg: Alg) -> Self {
                use $krate::aead;
                let a = match alg {
                    Alg::Aes128Gcm => &aead::AES_128_GCM,
                    Alg::Aes256Gcm => &aead::AES_256_GCM,
                    Alg::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
                };
                Self(aead::LessSafeKey::new(
                    aead::UnboundKey::new(a, &alg.key()).unwrap(),
                ))
            }
        }

        impl Aead for $name {
            fn seal(&self, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
                use $krate::aead::{Aad, Nonce};
                let tag = self.0.seal_in_place_separate_tag(
                    Nonce::assume_unique_for_key(NONCE),
                    Aad::from(aad),
                    buf,
                );
                tag.unwrap().as_ref().try_into().unwrap()
            }
            fn open(&self, aad: &[u8], sealed: &mut [u8]) -> bool {
                use $krate::aead::{Aad, Nonce};
                self.0
                    .open_in_place(Nonce::assume_unique_for_key(NONCE), Aad::from(aad), sealed)
                    .is_ok()
            }
        }
    };
}
reference_impl!(Ring, ring);
reference_impl!(AwsLc, aws_lc_rs);

impl Aead for BoringAead {
    fn seal(&self, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        self.seal_in_place(&NONCE, aad, buf)
    }
    fn open(&self, aad: &[u8], sealed: &mut [u8]) -> bool {
        let (ct, tag) = split_tag(sealed);
        self.open_in_place(&NONCE, aad, ct, &tag).is_ok()
    }
}

enum Graviola {
    AesGcm(Box<graviola::aead::AesGcm>),
    ChaCha(graviola::aead::ChaCha20Poly1305),
}

impl Aead for Graviola {
    fn seal(&self, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        let mut tag = [0; 16];
        match self {
            Self::AesGcm(k) => k.encrypt(&NONCE, aad, buf, &mut tag),
            Self::ChaCha(k) => k.encrypt(&NONCE, aad, buf, &mut tag),
        }
        tag
    }
    fn open(&self, aad: &[u8], sealed: &mut [u8]) -> bool {
        let (ct, tag) = split_tag(sealed);
        match self {
            Self::AesGcm(k) => k.decrypt(&NONCE, aad, ct, &tag).is_ok(),
            Self::ChaCha(k) => k.decrypt(&NONCE, aad, ct, &tag).is_ok(),
        }
    }
}

fn graviola_key(alg: Alg) -> Graviola {
    match alg {
        Alg::ChaCha20Poly1305 => {
            Graviola::ChaCha(graviola::aead::ChaCha20Poly1305::new([0x42; 32]))
        }
        _ => Graviola::AesGcm(Box::new(graviola::aead::AesGcm::new(&alg.key()))),
    }
}

fn bench_impl<A: Aead>(c: &mut Criterion, alg: Alg, name: &str, aead: &A) {
    for aad_len in AADS {
        let aad = vec![0x17; aad_len];
        for (op, is_seal) in [("seal", true), ("open", false)] {
            let mut group = c.benchmark_group(format!("{}/{op}/aad{aad_len}", alg.name()));
            if std::env::var_os("BENCH_QUICK").is_some() {
                group
                    .warm_up_time(Duration::from_millis(200))
                    .measurement_time(Duration::from_millis(500))
                    .sample_size(30);
            } else {
                group
                    .warm_up_time(Duration::from_millis(500))
                    .measurement_time(Duration::from_secs(2));
            }
            for len in sizes() {
                group.throughput(Throughput::Bytes(len as u64));
                let id = BenchmarkId::new(name, len);
                let mut buf = vec![0xab; len];
                if is_seal {
                    group.bench_function(id, |b| {
                        b.iter(|| black_box(aead.seal(black_box(&aad), &mut buf)))
                    });
                } else {
                    let tag = aead.seal(&aad, &mut buf);
                    let sealed = [&buf[..], &tag].concat();
                    assert!(
                        aead.open(&aad, &mut sealed.clone()),
                        "{name} opens its own output"
                    );
                    group.bench_function(id, |b| {
                        b.iter_batched_ref(
                            || sealed.clone(),
                            |record| assert!(aead.open(black_box(&aad), record)),
                            BatchSize::SmallInput,
                        )
                    });
                }
            }
        }
    }
}

fn bench_alg(c: &mut Criterion, alg: Alg) {
    let class = rustls_fusion_benches::class_from_env();
    let backends: Vec<Backend> = match (alg, class) {
        (Alg::ChaCha20Poly1305, Some(class)) => vec![class.chacha],
        (_, Some(class)) => vec![class.aes_backend()],
        (Alg::Aes128Gcm, None) => Aes128Gcm::backends(),
        (Alg::Aes256Gcm, None) => Aes256Gcm::backends(),
        (Alg::ChaCha20Poly1305, None) => ChaCha20Poly1305::backends(),
    };
    for backend in backends {
        let name = format!("fusion-{backend}");
        match alg {
            Alg::Aes128Gcm => bench_impl(
                c,
                alg,
                &name,
                &Aes128Gcm::with_backend(&[0x42; 16], backend).unwrap(),
            ),
            Alg::Aes256Gcm => bench_impl(
                c,
                alg,
                &name,
                &Aes256Gcm::with_backend(&[0x42; 32], backend).unwrap(),
            ),
            Alg::ChaCha20Poly1305 => bench_impl(
                c,
                alg,
                &name,
                &ChaCha20Poly1305::with_backend(&[0x42; 32], backend).unwrap(),
            ),
        }
    }
    let ring_runs_class = class.is_none_or(|class| match alg {
        Alg::ChaCha20Poly1305 => class.ring_chacha,
        _ => class.ring_aes,
    });
    if ring_runs_class {
        bench_impl(c, alg, "ring", &Ring::new(alg));
    }
    bench_impl(c, alg, "aws-lc-rs", &AwsLc::new(alg));
    // Limited to the class like aws-lc-rs (OPENSSL_ia32cap, lib.rs).
    bench_impl(
        c,
        alg,
        "boringssl",
        &BoringAead::new(alg == Alg::ChaCha20Poly1305, &alg.key()),
    );
    if class.is_none() {
        bench_impl(c, alg, "graviola", &graviola_key(alg));
    }
}

fn aead(c: &mut Criterion) {
    for alg in [Alg::Aes128Gcm, Alg::Aes256Gcm, Alg::ChaCha20Poly1305] {
        bench_alg(c, alg);
    }
}

criterion_group! {
    name = benches;
    // Tables and plots come from scripts/plot_bench.py; criterion's own
    // per-benchmark plots would double the run time.
    config = Criterion::default().without_plots();
    targets = aead
}
criterion_main!(benches);
