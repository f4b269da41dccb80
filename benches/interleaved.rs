//! AEAD ratios with interleaved timing: every implementation runs a short
//! burst in turn, 25 rounds, and the best burst of each counts. On a noisy
//! VM this gives far steadier ratios than criterion's
//! one-implementation-at-a-time runs (use both; never assert on either).
//!
//! ```text
//! taskset -c 1 cargo bench -p rustls-fusion-benches --bench interleaved -- [sizes] [algs] [backends]
//! CPU_CLASS=avx2 taskset -c 1 cargo bench -p rustls-fusion-benches --bench interleaved
//! ```
//! - `sizes`: comma-separated record sizes (default 16,64,256,1350,8192,16384);
//! - `algs`: any of `aes128,aes256,chacha` (default all three);
//! - `backends`: a filter on our backend names (default: all this CPU runs).
//!
//! `CPU_CLASS=avx512|avx2|aesni` (see `lib.rs`) times only our engine for
//! that class, against aws-lc-rs limited to the class (`OPENSSL_ia32cap`)
//! and against ring where ring's code for the class runs here. Each row
//! prints ns per record for seal and open (5-byte AAD, in place; an open
//! first restores the ciphertext, in every implementation alike) and our
//! ratio to the best reference, the median over the rounds of the ratio
//! within each round: above 1.00 is faster.
//!
//! `TLS=1` instead times rustls-level writes of the given sizes (default
//! 64,1024,16384,262144; client seals, server opens, see `tls_link.rs`) for
//! the TLS 1.3 suites and the TLS 1.2 ECDHE-RSA AES-128-GCM and
//! ChaCha20-Poly1305 ones on rustls-fusion, aws-lc-rs and ring (with
//! `CPU_CLASS`, as for records).

mod reference;
mod tls_link;

use std::hint::black_box;
use std::time::Instant;

use reference::Reference;
use rustls::crypto::CryptoProvider;
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};
use rustls_fusion_benches::{class_from_env, Class};
use tls_link::{own_suite, providers, Link};

const NONCE: [u8; 12] = [7; 12];
/// Rounds of bursts per size and operation.
const ROUNDS: usize = 25;
const AAD: [u8; 5] = [0x17, 3, 3, 0x40, 0x11];

#[derive(Clone, Copy, PartialEq)]
enum Alg {
    Aes128,
    Aes256,
    ChaCha,
}

impl Alg {
    fn name(self) -> &'static str {
        match self {
            Self::Aes128 => "aes128",
            Self::Aes256 => "aes256",
            Self::ChaCha => "chacha",
        }
    }
}

/// One implementation under test. An enum, not a trait object: every
/// implementation pays the same predictable match per call. (ring's key is
/// inline and large; boxing it would add an indirection only ring pays.)
#[allow(clippy::large_enum_variant)]
enum Imp {
    Aes128(Aes128Gcm),
    Aes256(Aes256Gcm),
    ChaCha(ChaCha20Poly1305),
    Reference(Reference),
}

impl Imp {
    fn ours(alg: Alg, key: &[u8], backend: Backend) -> Self {
        match alg {
            Alg::Aes128 => {
                Self::Aes128(Aes128Gcm::with_backend(key.try_into().unwrap(), backend).unwrap())
            }
            Alg::Aes256 => {
                Self::Aes256(Aes256Gcm::with_backend(key.try_into().unwrap(), backend).unwrap())
            }
            Alg::ChaCha => Self::ChaCha(
                ChaCha20Poly1305::with_backend(key.try_into().unwrap(), backend).unwrap(),
            ),
        }
    }

    #[inline(always)]
    fn seal(&self, buf: &mut [u8]) -> [u8; 16] {
        let aad = black_box(&AAD);
        match self {
            Self::Aes128(k) => k.seal_in_place(&NONCE, aad, buf),
            Self::Aes256(k) => k.seal_in_place(&NONCE, aad, buf),
            Self::ChaCha(k) => k.seal_in_place(&NONCE, aad, buf),
            Self::Reference(k) => k.seal_in_place(&NONCE, aad, buf),
        }
    }

    #[inline(always)]
    fn open(&self, buf: &mut [u8], tag: &[u8; 16]) -> bool {
        let aad = black_box(&AAD);
        match self {
            Self::Aes128(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
            Self::Aes256(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
            Self::ChaCha(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
            Self::Reference(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
        }
    }
}

fn main() {
    let class = class_from_env();
    if std::env::var_os("TLS").is_some() {
        return tls(class);
    }
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let sizes: Vec<usize> = args
        .next()
        .map_or(vec![16, 64, 256, 1350, 8192, 16384], |s| {
            s.split(',')
                .map(|x| x.parse().expect("sizes: numbers"))
                .collect()
        });
    let algs: Vec<Alg> = args
        .next()
        .map_or(vec![Alg::Aes128, Alg::Aes256, Alg::ChaCha], |s| {
            s.split(',')
                .map(|a| match a {
                    "aes128" => Alg::Aes128,
                    "aes256" => Alg::Aes256,
                    "chacha" => Alg::ChaCha,
                    _ => panic!("algs: aes128, aes256, chacha"),
                })
                .collect()
        });
    let filter = args.next().unwrap_or_default();
    match class {
        Some(c) => println!(
            "CPU class {}: {}\nOPENSSL_ia32cap={}",
            c.name,
            c.cpus,
            std::env::var("OPENSSL_ia32cap").unwrap_or_default()
        ),
        None => println!("no CPU_CLASS: every backend this CPU runs"),
    }
    println!(
        "ns per record (5-byte AAD): the best of {ROUNDS} rounds of interleaved bursts of about \
         BURST_US (500) µs each; ratio: the median over rounds of the best reference's time over ours"
    );
    for alg in algs {
        run_alg(alg, &sizes, class, &filter);
    }
}

fn run_alg(alg: Alg, sizes: &[usize], class: Option<&Class>, filter: &str) {
    let key = vec![0x42u8; if alg == Alg::Aes128 { 16 } else { 32 }];
    let ours: Vec<Backend> = match class {
        Some(c) => vec![if alg == Alg::ChaCha { c.chacha } else { c.aes }],
        None => match alg {
            Alg::Aes128 => Aes128Gcm::backends(),
            Alg::Aes256 => Aes256Gcm::backends(),
            Alg::ChaCha => ChaCha20Poly1305::backends(),
        },
    }
    .into_iter()
    .filter(|b| b.name().contains(filter))
    .collect();
    let with_ring = class.is_none_or(|c| {
        if alg == Alg::ChaCha {
            c.ring_chacha
        } else {
            c.ring_aes
        }
    });
    let mut imps: Vec<(String, Imp)> = vec![(
        "aws-lc-rs".into(),
        Imp::Reference(Reference::aws_lc(alg == Alg::ChaCha, &key)),
    )];
    if with_ring {
        imps.push((
            "ring".into(),
            Imp::Reference(Reference::ring(alg == Alg::ChaCha, &key)),
        ));
    }
    let refs = imps.len();
    for b in ours {
        imps.push((b.name().into(), Imp::ours(alg, &key, b)));
    }
    let mut header = format!("\n| {} | op |", alg.name());
    let mut rule = "|---|---|".to_string();
    for (name, _) in &imps {
        header += &format!(" {name} |");
        rule += "---|";
    }
    for (name, _) in &imps[refs..] {
        header += &format!(" {name} ratio |");
        rule += "---|";
    }
    println!("{header}\n{rule}");
    for &n in sizes {
        let mut pt = vec![0u8; n];
        for (i, b) in pt.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut sealed = pt.clone();
        let tag = imps[0].1.seal(&mut sealed);
        for (name, imp) in &imps {
            let mut buf = pt.clone();
            assert_eq!(imp.seal(&mut buf), tag, "{name} seals like aws-lc-rs");
            assert!(imp.open(&mut buf, &tag) && buf == pt, "{name} opens");
        }
        let iters = burst_iters(&imps, n);
        // times[op][imp][round]; the order of implementations rotates every
        // round, so none always follows the same neighbour.
        let mut times = vec![vec![Vec::with_capacity(ROUNDS); imps.len()]; 2];
        let mut buf = sealed.clone();
        for round in 0..ROUNDS {
            for (op, is_seal) in [(0, true), (1, false)] {
                for k in 0..imps.len() {
                    let i = (k + round) % imps.len();
                    let imp = &imps[i].1;
                    let t = Instant::now();
                    for _ in 0..iters {
                        if is_seal {
                            black_box(imp.seal(&mut buf));
                        } else {
                            buf.copy_from_slice(&sealed);
                            assert!(imp.open(&mut buf, &tag));
                        }
                    }
                    times[op][i].push(t.elapsed().as_nanos() as f64 / iters as f64);
                }
            }
        }
        for (op, op_name) in [(0, "seal"), (1, "open")] {
            let mut line = format!("| {n} | {op_name} |");
            for t in &times[op] {
                line += &format!(" {:.1} |", t.iter().copied().fold(f64::MAX, f64::min));
            }
            for ours in &times[op][refs..] {
                // Per round: the best reference over ours, both timed within
                // the same round; the median of those ratios.
                let mut ratios: Vec<f64> = (0..ROUNDS)
                    .map(|r| {
                        let best_ref = times[op][..refs]
                            .iter()
                            .map(|t| t[r])
                            .fold(f64::MAX, f64::min);
                        best_ref / ours[r]
                    })
                    .collect();
                ratios.sort_by(f64::total_cmp);
                line += &format!(" {:.2}× |", ratios[ROUNDS / 2]);
            }
            println!("{line}");
        }
    }
}

/// Iterations per burst: enough for about `BURST_US` microseconds (default
/// 500) of the slowest implementation. Long bursts keep CPU frequency
/// transitions (AVX-512 licence changes when 512-bit and narrower code take
/// turns) from deciding a burst's time.
fn burst_iters(imps: &[(String, Imp)], n: usize) -> usize {
    let target: f64 = std::env::var("BURST_US")
        .ok()
        .map_or(500.0, |s| s.parse().expect("BURST_US: a number"));
    let mut buf = vec![0u8; n];
    let mut slowest = 0f64;
    for (_, imp) in imps {
        let t = Instant::now();
        for _ in 0..20 {
            black_box(imp.seal(&mut buf));
        }
        slowest = slowest.max(t.elapsed().as_nanos() as f64 / 20.0);
    }
    ((target * 1000.0 / slowest) as usize).max(5)
}

/// rustls-level writes (client seals, server opens), interleaved across the
/// providers: every TLS 1.3 suite and the TLS 1.2 ECDHE-RSA ones. With a
/// CPU class, our provider is pinned to the class's engines, aws-lc-rs is
/// limited to the class and ring takes part where its code for the class
/// runs here.
fn tls(class: Option<&Class>) {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map_or(vec![64, 1024, 16384, 262144], |s| {
            s.split(',')
                .map(|x| x.parse().expect("sizes: numbers"))
                .collect()
        });
    let mut providers = providers();
    if let Some(class) = class {
        providers[0].1 = rustls_fusion::provider_with_backends(class.aes, class.chacha)
            .expect("this CPU runs the class's engines");
    }
    println!(
        "ns per client write + server read: the best of {ROUNDS} rounds of interleaved bursts; \
         ratio: the median over rounds of the best reference's time over fusion's"
    );
    use rustls_fusion::cipher_suite as cs;
    for suite in [
        cs::TLS13_AES_128_GCM_SHA256,
        cs::TLS13_AES_256_GCM_SHA384,
        cs::TLS13_CHACHA20_POLY1305_SHA256,
        cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ] {
        let chacha = format!("{:?}", suite.suite()).contains("CHACHA");
        let with_ring = class.is_none_or(|c| if chacha { c.ring_chacha } else { c.ring_aes });
        println!(
            "\n| {:?} | fusion | aws-lc-rs | {}ratio |",
            suite.suite(),
            if with_ring { "ring | " } else { "" }
        );
        println!("|---|---|---|{}---|", if with_ring { "---|" } else { "" });
        for &size in &sizes {
            let data = vec![0xab; size];
            let mut links: Vec<(&str, Link)> = providers
                .iter()
                .filter(|(name, _)| with_ring || *name != "ring")
                .map(|(name, provider)| {
                    let own = own_suite(provider, suite).expect("every provider has the suite");
                    let provider = CryptoProvider {
                        cipher_suites: vec![own],
                        ..provider.clone()
                    };
                    let mut link = Link::new(&provider, own, size);
                    assert_eq!(link.round(&data), size, "{name}: round trip");
                    (*name, link)
                })
                .collect();
            let iters = (4_000_000 / (size + 500)).max(20);
            let mut times = vec![Vec::with_capacity(ROUNDS); links.len()];
            for round in 0..ROUNDS {
                for k in 0..links.len() {
                    let i = (k + round) % links.len();
                    let link = &mut links[i].1;
                    let t = Instant::now();
                    for _ in 0..iters {
                        black_box(link.round(black_box(&data)));
                    }
                    times[i].push(t.elapsed().as_nanos() as f64 / iters as f64);
                }
            }
            let mut ratios: Vec<f64> = (0..ROUNDS)
                .map(|r| times[1..].iter().map(|t| t[r]).fold(f64::MAX, f64::min) / times[0][r])
                .collect();
            ratios.sort_by(f64::total_cmp);
            let mut line = format!("| {size} |");
            for t in &times {
                line += &format!(" {:.0} |", t.iter().copied().fold(f64::MAX, f64::min));
            }
            println!("{line} {:.2}× |", ratios[ROUNDS / 2]);
        }
    }
}
