//! quinn end to end over loopback with rustls-fusion's QUIC protection: for
//! every TLS 1.3 suite, our provider on the client, on the server and on
//! both, against rustls's aws-lc-rs provider on the other side; 50 MB each
//! way checked by hash, forced key updates, GSO on and off; then every
//! backend this CPU runs; a datagram corrupted on the wire; 0-RTT.

use rustls::crypto::{aws_lc_rs, CryptoProvider};
use rustls::CipherSuite;
use rustls_fusion::aead::{Aes128Gcm, Backend, ChaCha20Poly1305};
use tls_tests::quinn_link::{run, zero_rtt, Report, Transfer, CORRUPT_COUNT};

const SUITES: [CipherSuite; 3] = [
    CipherSuite::TLS13_AES_128_GCM_SHA256,
    CipherSuite::TLS13_AES_256_GCM_SHA384,
    CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
];

fn check(r: &Report, what: &str) {
    use std::sync::atomic::Ordering::Relaxed;
    for (side, c) in [("client", &r.client), ("server", &r.server)] {
        let seals = c.seals.load(Relaxed);
        assert!(seals > 0, "{what}: {side} sealed nothing");
        // quinn protects every header it seals, and removes protection
        // before every open.
        assert_eq!(c.header_protects.load(Relaxed), seals, "{what}: {side}");
        assert_eq!(
            c.header_removals.load(Relaxed),
            c.opens.load(Relaxed),
            "{what}: {side}"
        );
    }
}

#[test]
fn every_suite_ours_on_either_end_and_both() {
    let ours = rustls_fusion::default_provider();
    let theirs = aws_lc_rs::default_provider();
    let mb = 50 << 20;
    for suite in SUITES {
        for (i, (name, client, server)) in [
            ("ours → aws-lc-rs", &ours, &theirs),
            ("aws-lc-rs → ours", &theirs, &ours),
            ("ours → ours", &ours, &ours),
        ]
        .into_iter()
        .enumerate()
        {
            let gso = i != 1;
            let t = Transfer {
                suite,
                client: client.clone(),
                server: server.clone(),
                bytes: mb,
                key_updates: 4,
                gso,
                corrupt: None,
            };
            let r = run(&t);
            let what = format!("{suite:?} {name}, GSO {gso}");
            check(&r, &what);
            assert_eq!(r.key_updates, 4, "{what}: forced key updates");
            println!(
                "{what}: {} key updates, {:.0} MB/s, {} client datagrams in {} I/Os, CPU {:?}",
                r.key_updates,
                2.0 * mb as f64 / r.elapsed.as_secs_f64() / 1e6,
                r.client_datagrams,
                r.client_ios,
                r.cpu
            );
        }
    }
}

#[test]
fn every_backend() {
    let theirs = aws_lc_rs::default_provider();
    let aes = Aes128Gcm::backends();
    let chacha = ChaCha20Poly1305::backends();
    for (i, &a) in aes.iter().enumerate() {
        let c = chacha[i.min(chacha.len() - 1)];
        let ours = rustls_fusion::provider_with_backends(a, c).expect("listed backends run");
        for suite in SUITES {
            let (client, server) = if i % 2 == 0 {
                (&ours, &theirs)
            } else {
                (&theirs, &ours)
            };
            let t = Transfer {
                suite,
                client: client.clone(),
                server: server.clone(),
                bytes: 4 << 20,
                key_updates: 2,
                gso: i % 2 == 0,
                corrupt: None,
            };
            let r = run(&t);
            check(&r, &format!("{suite:?} on {a}/{c}"));
        }
    }
    // The rest of the ChaCha backends, if the CPU lists more of them.
    for &c in chacha.iter().skip(aes.len()) {
        let ours = rustls_fusion::provider_with_backends(Backend::Base, c).unwrap();
        let t = Transfer {
            suite: CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            client: ours.clone(),
            server: ours,
            bytes: 4 << 20,
            key_updates: 2,
            gso: true,
            corrupt: None,
        };
        check(&run(&t), &format!("ChaCha on {c}"));
    }
}

#[test]
fn a_corrupted_datagram_is_dropped_and_the_transfer_completes() {
    let ours = rustls_fusion::default_provider();
    for (suite, gso) in [
        (CipherSuite::TLS13_AES_128_GCM_SHA256, true),
        (CipherSuite::TLS13_CHACHA20_POLY1305_SHA256, false),
    ] {
        let t = Transfer {
            suite,
            client: ours.clone(),
            server: ours.clone(),
            bytes: 8 << 20,
            key_updates: 1,
            gso,
            corrupt: Some(200),
        };
        let r = run(&t);
        assert_eq!(
            r.corrupted, CORRUPT_COUNT,
            "{suite:?}: the relay corrupted datagrams"
        );
        // Loopback may drop some of them before the server sees them; every
        // one that arrives must fail to open, and nothing else may.
        let failed = r
            .server
            .failed_opens
            .load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            (1..=CORRUPT_COUNT as u64).contains(&failed),
            "{suite:?}: the server rejected them ({failed} failed opens of {CORRUPT_COUNT})"
        );
        check(&r, &format!("{suite:?} with a corrupted datagram"));
    }
}

#[test]
fn zero_rtt_resumption() {
    let ours = rustls_fusion::default_provider();
    let theirs = aws_lc_rs::default_provider();
    for (client, server) in [(&ours, &ours), (&ours, &theirs), (&theirs, &ours)] {
        assert!(
            zero_rtt(
                client,
                server,
                CipherSuite::TLS13_AES_128_GCM_SHA256,
                64 << 10
            ),
            "0-RTT accepted"
        );
    }
    let _: &CryptoProvider = &ours;
}
