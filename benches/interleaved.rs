//! ChaCha20-Poly1305 ratios against ring with interleaved timing: every
//! implementation runs a short burst in turn, 25 rounds, and the best burst
//! of each counts. On a noisy VM this gives steadier ratios than criterion's
//! one-implementation-at-a-time runs (use both; never assert on either).
//!
//! `cargo bench -p rustls-fusion-benches --bench interleaved -- [sizes] [backend filter]`,
//! e.g. `-- 16,1350,16384 avx`; `OPEN=1` times open instead of seal.
//! `TLS=1` instead times rustls-level writes (client seals, server opens;
//! see `tls_link.rs`) for the TLS 1.3 ChaCha20-Poly1305 and AES-128-GCM
//! suites on rustls-fusion, aws-lc-rs and ring.

mod tls_link;

use std::hint::black_box;
use std::time::Instant;

use rustls::crypto::CryptoProvider;
use rustls_fusion::aead::ChaCha20Poly1305;
use tls_link::{own_suite, providers, Link};

fn main() {
    if std::env::var_os("TLS").is_some() {
        return tls();
    }
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let sizes: Vec<usize> = args.next().map_or(vec![16, 64, 256, 1350, 16384], |s| {
        s.split(',')
            .map(|x| x.parse().expect("sizes: numbers"))
            .collect()
    });
    let filter = args.next().unwrap_or_default();
    let open = std::env::var_os("OPEN").is_some();
    let (key, nonce, aad) = ([0x42u8; 32], [7u8; 12], [0x17u8; 5]);
    let ring_key = ring::aead::LessSafeKey::new(
        ring::aead::UnboundKey::new(&ring::aead::CHACHA20_POLY1305, &key).unwrap(),
    );
    let ours: Vec<_> = ChaCha20Poly1305::backends()
        .into_iter()
        .filter(|b| b.to_string().contains(&filter.to_lowercase()))
        .map(|b| (b, ChaCha20Poly1305::with_backend(&key, b).unwrap()))
        .collect();
    assert!(!ours.is_empty(), "no backend matches {filter:?}");
    println!(
        "{} ns per record, best of 25 interleaved bursts",
        if open { "open" } else { "seal" }
    );
    for &n in &sizes {
        let mut buf = vec![0xabu8; n];
        let tag = ours[0].1.seal_in_place(&nonce, &aad, &mut buf);
        let sealed = buf.clone();
        let mut ring_buf = [&sealed[..], &tag[..]].concat();
        let iters = (1_000_000 / (n + 200)).max(100);
        let mut best = vec![f64::MAX; ours.len() + 1];
        for _ in 0..25 {
            for (j, best) in best.iter_mut().enumerate() {
                let t = Instant::now();
                for _ in 0..iters {
                    match (j, open) {
                        (0, false) => {
                            let nonce = ring::aead::Nonce::assume_unique_for_key(nonce);
                            let aad = ring::aead::Aad::from(black_box(&aad));
                            let _tag = black_box(
                                ring_key
                                    .seal_in_place_separate_tag(nonce, aad, &mut buf)
                                    .unwrap(),
                            );
                        }
                        (0, true) => {
                            ring_buf[..n].copy_from_slice(&sealed);
                            let nonce = ring::aead::Nonce::assume_unique_for_key(nonce);
                            let aad = ring::aead::Aad::from(black_box(&aad));
                            assert!(ring_key.open_in_place(nonce, aad, &mut ring_buf).is_ok());
                        }
                        (j, false) => {
                            black_box(ours[j - 1].1.seal_in_place(
                                &nonce,
                                black_box(&aad),
                                &mut buf,
                            ));
                        }
                        (j, true) => {
                            buf.copy_from_slice(&sealed);
                            let key = &ours[j - 1].1;
                            assert!(key
                                .open_in_place(&nonce, black_box(&aad), &mut buf, &tag)
                                .is_ok());
                        }
                    }
                }
                *best = best.min(t.elapsed().as_nanos() as f64 / iters as f64);
            }
        }
        let mut line = format!("{n:6} B  ring {:8.1}", best[0]);
        for (j, (backend, _)) in ours.iter().enumerate() {
            let t = best[j + 1];
            line += &format!(" | {backend} {t:8.1} ({:.2}x ring)", best[0] / t);
        }
        println!("{line}");
    }
}

/// rustls-level writes, interleaved across the three providers.
fn tls() {
    let sizes: Vec<usize> =
        std::env::args()
            .skip(1)
            .find(|a| a != "--bench")
            .map_or(vec![64, 1024, 16384], |s| {
                s.split(',')
                    .map(|x| x.parse().expect("sizes: numbers"))
                    .collect()
            });
    let providers = providers();
    println!("ns per client write + server read, best of 15 interleaved bursts");
    for suite in [
        rustls_fusion::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        rustls_fusion::cipher_suite::TLS13_AES_128_GCM_SHA256,
    ] {
        for &size in &sizes {
            let data = vec![0xab; size];
            let mut links: Vec<(&str, Link)> = providers
                .iter()
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
            let iters = (2_000_000 / (size + 500)).max(50);
            let mut best = vec![f64::MAX; links.len()];
            for _ in 0..15 {
                for ((_, link), best) in links.iter_mut().zip(&mut best) {
                    let t = Instant::now();
                    for _ in 0..iters {
                        black_box(link.round(black_box(&data)));
                    }
                    *best = best.min(t.elapsed().as_nanos() as f64 / iters as f64);
                }
            }
            let ring = best[links.iter().position(|(n, _)| *n == "ring").unwrap()];
            let line: Vec<String> = links
                .iter()
                .zip(&best)
                .map(|((name, _), t)| format!("{name} {t:8.0} ({:.2}x ring)", ring / t))
                .collect();
            println!("{:?} {size:6} B: {}", suite.suite(), line.join(" | "));
        }
    }
}
