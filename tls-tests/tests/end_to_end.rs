//! rustls end to end, in memory: every suite on every backend this CPU
//! runs, both directions, against itself and against rustls's own aws-lc-rs
//! provider; 0 B to several MiB; TLS 1.3 key updates; close_notify.

use rustls::crypto::{aws_lc_rs, CryptoProvider};
use rustls::SupportedCipherSuite;
use rustls_fusion::aead::{Aes128Gcm, ChaCha20Poly1305};
use rustls_fusion::cipher_suite::ALL_CIPHER_SUITES;
use tls_tests::memory::{same_suite, Pair};

const SIZES: [usize; 9] = [0, 1, 15, 16, 17, 16383, 16384, 16385, 3 << 20];

/// Our provider on every backend pair, covering every backend of both AEADs.
fn our_providers() -> Vec<(String, CryptoProvider)> {
    let aes = Aes128Gcm::backends();
    let chacha = ChaCha20Poly1305::backends();
    (0..aes.len().max(chacha.len()))
        .map(|i| {
            let (a, c) = (aes[i.min(aes.len() - 1)], chacha[i.min(chacha.len() - 1)]);
            let p = rustls_fusion::provider_with_backends(a, c).expect("listed backends run");
            (format!("aes-gcm on {a}, chacha on {c}"), p)
        })
        .collect()
}

/// The suite `provider` uses for `id`.
fn suite_in(provider: &CryptoProvider, id: rustls::CipherSuite) -> SupportedCipherSuite {
    *provider
        .cipher_suites
        .iter()
        .find(|s| s.suite() == id)
        .expect("suite offered")
}

fn exercise(pair: &mut Pair, what: &str) {
    let tls13 = pair.client.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3);
    for from_client in [true, false] {
        for &len in &SIZES {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            pair.send(from_client, &data);
        }
        if tls13 {
            // Key update initiated by this side, with traffic after it.
            let (tx, _) = pair.sides(from_client);
            tx.refresh_traffic_keys().expect(what);
            pair.send(from_client, b"after key update");
            pair.send(!from_client, b"reply after key update");
        }
    }
}

fn close(pair: &mut Pair, from_client: bool) {
    let (tx, _) = pair.sides(from_client);
    tx.send_close_notify();
    pair.flush();
    assert!(pair.take_received(from_client).is_empty());
    let (_, rx) = pair.sides(from_client);
    let mut byte = [0u8; 1];
    assert_eq!(
        std::io::Read::read(&mut rx.reader(), &mut byte).unwrap(),
        0,
        "clean EOF after close_notify"
    );
}

#[test]
fn ours_to_ours_every_suite_every_backend() {
    for (name, provider) in our_providers() {
        for &suite in &provider.cipher_suites {
            let what = format!("{:?} ({name})", suite.suite());
            let mut pair = Pair::connect(&provider, &provider, suite);
            assert!(
                same_suite(pair.client.negotiated_cipher_suite().unwrap(), suite),
                "{what}"
            );
            exercise(&mut pair, &what);
            close(&mut pair, u16::from(suite.suite()) % 2 == 0);
        }
    }
}

#[test]
fn ours_against_aws_lc_rs_both_ways() {
    let reference = aws_lc_rs::default_provider();
    let ours = rustls_fusion::default_provider();
    for &suite in ALL_CIPHER_SUITES {
        let theirs = suite_in(&reference, suite.suite());
        let what = format!("{:?}", suite.suite());
        // Our client, their server.
        let mut pair = Pair::connect(
            &ours,
            &CryptoProvider {
                cipher_suites: vec![theirs],
                ..reference.clone()
            },
            suite,
        );
        assert!(
            same_suite(pair.client.negotiated_cipher_suite().unwrap(), suite),
            "{what}"
        );
        exercise(&mut pair, &what);
        close(&mut pair, true);
        // Their client, our server.
        let mut pair = Pair::connect(
            &CryptoProvider {
                cipher_suites: vec![theirs],
                ..reference.clone()
            },
            &ours,
            suite,
        );
        assert!(
            same_suite(pair.server.negotiated_cipher_suite().unwrap(), suite),
            "{what}"
        );
        exercise(&mut pair, &what);
        close(&mut pair, false);
    }
}

/// Nonce guard case 18: 10 000 records each way, a key update (TLS 1.3),
/// 10 000 more, against rustls's aws-lc-rs provider: no guard error, no panic.
#[test]
fn guard_case_18_many_records_against_reference_peer() {
    let reference = aws_lc_rs::default_provider();
    let ours = rustls_fusion::default_provider();
    for &suite in ALL_CIPHER_SUITES {
        let theirs = CryptoProvider {
            cipher_suites: vec![suite_in(&reference, suite.suite())],
            ..reference.clone()
        };
        let mut pair = Pair::connect(&ours, &theirs, suite);
        for round in 0..2 {
            for from_client in [true, false] {
                for i in 0..10_000u32 {
                    let (tx, _) = pair.sides(from_client);
                    std::io::Write::write_all(&mut tx.writer(), &i.to_be_bytes()).unwrap();
                    if i % 500 == 499 {
                        pair.flush();
                    }
                }
                pair.flush();
                let got = pair.take_received(from_client);
                let want: Vec<u8> = (0..10_000u32).flat_map(u32::to_be_bytes).collect();
                assert!(got == want, "{:?} round {round}", suite.suite());
            }
            if round == 0 && suite.tls13().is_some() {
                pair.client.refresh_traffic_keys().unwrap();
                pair.server.refresh_traffic_keys().unwrap();
            }
        }
    }
}
