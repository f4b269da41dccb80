//! What a connection pays before its first record: building keys, and
//! whole handshakes.
//!
//! ```text
//! taskset -c 1 cargo bench -p rustls-fusion-benches --bench keys -- [parts]
//! ```
//! `parts`: any of `aead,quic,tls,quinn` (default all four); `only=<name>`
//! after it times only the AEAD makers whose name contains `<name>` (a
//! backend or a peer) and the QUIC rows whose label does (`header`,
//! `ChaCha20`...), for a profiler.
//!
//! - `aead`: build and drop one AEAD key (ns, best of 7 rounds of 20,000,
//!   the implementations interleaved within each round): every backend of
//!   ours this CPU runs against aws-lc-rs's and ring's `LessSafeKey` and
//!   BoringSSL's `EVP_AEAD_CTX`, for AES-128-GCM, AES-256-GCM and
//!   ChaCha20-Poly1305. The ratio is the best peer's time over ours (above
//!   1.00 is faster).
//! - `quic`: the keys rustls asks a QUIC provider for: `Keys::initial`
//!   (two AES-128-GCM packet keys and two header-protection keys, with the
//!   HKDF that derives them, which is aws-lc-rs's in both providers), and a
//!   packet key and a header-protection key for AES-256-GCM and
//!   ChaCha20-Poly1305; ours (best backend) against rustls's aws-lc-rs and
//!   ring providers.
//! - `tls`: full in-memory handshakes per second through rustls (ECDSA
//!   P-256 certificate, the default key exchange, no resumption), client
//!   and server in this thread, one 64-byte record each way: TLS 1.3 and
//!   TLS 1.2 with AES-128-GCM and ChaCha20-Poly1305, ours against rustls's
//!   aws-lc-rs provider, interleaved in 15 rounds; the ratio is the median
//!   over rounds of ours over aws-lc-rs's rate.
//! - `quinn`: QUIC connections per second through quinn over loopback (one
//!   current-thread runtime: client, server and quinn on this core), ours
//!   against aws-lc-rs, 7 interleaved rounds of 200 connections.

use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::crypto::CryptoProvider;
use rustls::quic::{Keys, Version};
use rustls::{CipherSuite, ClientConnection, Connection, ServerConnection, SupportedCipherSuite};
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};
use rustls_fusion_benches::records::Alg;
use rustls_fusion_benches::reference::{BoringAead, Reference};
use tls_tests::memory::{client_config, pinned, server_config, transfer};

const ROUNDS: usize = 7;
const KEYS: usize = 20_000;

/// A key made and dropped `KEYS` times; ns per key.
fn per_key(mut make: impl FnMut(u64)) -> f64 {
    let start = Instant::now();
    for i in 0..KEYS as u64 {
        make(i);
    }
    start.elapsed().as_nanos() as f64 / KEYS as f64
}

/// A key of `N` bytes that changes with `i` (so no build is hoisted).
fn key<const N: usize>(i: u64) -> [u8; N] {
    let mut k = [0x42u8; N];
    k[..8].copy_from_slice(&i.to_le_bytes());
    black_box(k)
}

/// One contender: a name and a closure that builds and drops key `i`.
type Maker = (String, Box<dyn FnMut(u64)>);

/// Best ns per key of each maker, interleaved over `ROUNDS`.
fn best_of(makers: &mut [Maker]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; makers.len()];
    for round in 0..ROUNDS {
        for k in 0..makers.len() {
            let i = (k + round) % makers.len();
            let t = per_key(&mut makers[i].1);
            best[i] = best[i].min(t);
        }
    }
    best
}

fn ours(alg: Alg, backend: Backend) -> Box<dyn FnMut(u64)> {
    match alg {
        Alg::Aes128 => Box::new(move |i| {
            drop(black_box(Aes128Gcm::with_backend(&key(i), backend)));
        }),
        Alg::Aes256 => Box::new(move |i| {
            drop(black_box(Aes256Gcm::with_backend(&key(i), backend)));
        }),
        Alg::ChaCha => Box::new(move |i| {
            drop(black_box(ChaCha20Poly1305::with_backend(&key(i), backend)));
        }),
    }
}

fn peer(alg: Alg, make: fn(bool, &[u8]) -> Reference) -> Box<dyn FnMut(u64)> {
    let chacha = alg == Alg::ChaCha;
    Box::new(move |i| {
        let k16: [u8; 16];
        let k32: [u8; 32];
        let k: &[u8] = if alg == Alg::Aes128 {
            k16 = key(i);
            &k16
        } else {
            k32 = key(i);
            &k32
        };
        drop(black_box(make(chacha, k)));
    })
}

fn aead(only: Option<&str>) {
    if let Some(only) = only {
        for alg in Alg::ALL {
            let mut makers: Vec<Maker> = alg
                .backends()
                .iter()
                .map(|&b| (b.to_string(), ours(alg, b)))
                .filter(|(n, _)| n.contains(only))
                .collect();
            let times = best_of(&mut makers);
            for ((name, _), t) in makers.iter().zip(times) {
                println!("{} {name}: {t:.0} ns", self::name(alg));
            }
        }
        return;
    }
    println!("## AEAD key setup (build and drop, ns per key)\n");
    println!("| key | ours (backend) | aws-lc-rs | ring | BoringSSL | best peer / ours |");
    println!("|---|---|---|---|---|---|");
    for alg in Alg::ALL {
        let backends = alg.backends();
        let mut makers: Vec<Maker> = backends
            .iter()
            .map(|&b| (b.to_string(), ours(alg, b)))
            .collect();
        makers.push(("aws-lc-rs".into(), peer(alg, Reference::aws_lc)));
        makers.push(("ring".into(), peer(alg, Reference::ring)));
        makers.push((
            "BoringSSL".into(),
            peer(alg, |c, k| Reference::BoringSsl(BoringAead::new(c, k))),
        ));
        let t = best_of(&mut makers);
        let n = backends.len();
        let peers = t[n..].iter().copied().fold(f64::INFINITY, f64::min);
        let ours: Vec<String> = backends
            .iter()
            .zip(&t)
            .map(|(b, t)| format!("{t:.0} (`{b}`)"))
            .collect();
        let ratios: Vec<String> = t[..n].iter().map(|t| format!("{:.2}", peers / t)).collect();
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {} |",
            name(alg),
            ours.join(", "),
            t[n],
            t[n + 1],
            t[n + 2],
            ratios.join(", ")
        );
    }
    println!();
}

fn name(alg: Alg) -> &'static str {
    match alg {
        Alg::Aes128 => "AES-128-GCM",
        Alg::Aes256 => "AES-256-GCM",
        Alg::ChaCha => "ChaCha20-Poly1305",
    }
}

fn providers() -> [(&'static str, CryptoProvider); 3] {
    [
        ("ours", rustls_fusion::default_provider()),
        ("aws-lc-rs", rustls::crypto::aws_lc_rs::default_provider()),
        ("ring", rustls::crypto::ring::default_provider()),
    ]
}

fn tls13(p: &CryptoProvider, id: CipherSuite) -> &'static rustls::Tls13CipherSuite {
    p.cipher_suites
        .iter()
        .find(|s| s.suite() == id)
        .and_then(SupportedCipherSuite::tls13)
        .expect("the provider has the TLS 1.3 suite")
}

fn quic(only: Option<&str>) {
    println!("## QUIC keys through rustls (ns per key set)\n");
    println!("| keys | ours | aws-lc-rs | ring | best peer / ours |");
    println!("|---|---|---|---|---|");
    let ps = providers();
    let dcid = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];
    let mut rows: Vec<(String, Vec<Maker>)> = Vec::new();
    let initial = ps
        .iter()
        .map(|(n, p)| {
            let suite = tls13(p, CipherSuite::TLS13_AES_128_GCM_SHA256);
            let quic = suite.quic_suite().expect("QUIC suite");
            let f: Box<dyn FnMut(u64)> = Box::new(move |i| {
                let mut cid = dcid;
                cid[0] ^= i as u8;
                drop(black_box(Keys::initial(
                    Version::V1,
                    quic.suite,
                    quic.quic,
                    &cid,
                    rustls::Side::Server,
                )));
            });
            (n.to_string(), f)
        })
        .collect();
    rows.push((
        "AES-128-GCM `Keys::initial` (4 keys and HKDF)".into(),
        initial,
    ));
    for (id, label) in [
        (CipherSuite::TLS13_AES_256_GCM_SHA384, "AES-256-GCM"),
        (
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            "ChaCha20-Poly1305",
        ),
    ] {
        let packet = ps
            .iter()
            .map(|(n, p)| {
                let quic = tls13(p, id).quic.expect("QUIC-capable");
                let f: Box<dyn FnMut(u64)> = Box::new(move |i| {
                    let k = AeadKey::from(key::<32>(i));
                    drop(black_box(quic.packet_key(k, Iv::new([9; 12]))));
                });
                (n.to_string(), f)
            })
            .collect();
        rows.push((format!("{label} packet key"), packet));
        let hp = ps
            .iter()
            .map(|(n, p)| {
                let quic = tls13(p, id).quic.expect("QUIC-capable");
                let f: Box<dyn FnMut(u64)> = Box::new(move |i| {
                    drop(black_box(quic.header_protection_key(AeadKey::from(key::<
                        32,
                    >(
                        i
                    )))));
                });
                (n.to_string(), f)
            })
            .collect();
        rows.push((format!("{label} header-protection key"), hp));
    }
    rows.retain(|(label, _)| only.is_none_or(|o| label.contains(o)));
    for (label, mut makers) in rows {
        let t = best_of(&mut makers);
        let best = t[1].min(t[2]);
        println!(
            "| {label} | {:.0} | {:.0} | {:.0} | {:.2} |",
            t[0],
            t[1],
            t[2],
            best / t[0]
        );
    }
    println!();
}

/// One full handshake between fresh connections, then one 64-byte record
/// each way.
fn handshake(client: &Arc<rustls::ClientConfig>, server: &Arc<rustls::ServerConfig>) {
    let mut c: Connection = ClientConnection::new(client.clone(), "localhost".try_into().unwrap())
        .unwrap()
        .into();
    let mut s: Connection = ServerConnection::new(server.clone()).unwrap().into();
    let mut sink = Vec::new();
    c.writer().write_all(&[1; 64]).unwrap();
    s.writer().write_all(&[2; 64]).unwrap();
    while c.is_handshaking() || s.is_handshaking() || sink.len() < 128 {
        let moved = transfer(&mut c, &mut s, &mut sink) + transfer(&mut s, &mut c, &mut sink);
        assert!(moved > 0, "handshake stalled");
    }
    black_box(sink);
}

fn tls() {
    println!("## Full handshakes through rustls (per second, one core)\n");
    println!("| suite | ours | aws-lc-rs | ours / aws-lc-rs (median, range) |");
    println!("|---|---|---|---|");
    let ps = providers();
    for id in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ] {
        let configs: Vec<_> = ps[..2]
            .iter()
            .map(|(_, p)| {
                let suite = *p
                    .cipher_suites
                    .iter()
                    .find(|s| s.suite() == id)
                    .expect("suite");
                // Full handshakes only: no session resumption, no tickets.
                let mut client = client_config(pinned(p, suite), suite);
                client.resumption = rustls::client::Resumption::disabled();
                let mut server = server_config(pinned(p, suite), suite);
                server.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
                server.send_tls13_tickets = 0;
                (Arc::new(client), Arc::new(server))
            })
            .collect();
        const N: usize = 200;
        let mut rates = [Vec::new(), Vec::new()];
        for round in 0..15 {
            for k in 0..2 {
                let i = (k + round) % 2;
                let (c, s) = &configs[i];
                let start = Instant::now();
                for _ in 0..N {
                    handshake(c, s);
                }
                rates[i].push(N as f64 / start.elapsed().as_secs_f64());
            }
        }
        rate_row(id, &rates);
    }
    println!();
}

/// One table row: each side's best rate, and the median and range over
/// rounds of ours over aws-lc-rs's.
fn rate_row(id: CipherSuite, rates: &[Vec<f64>; 2]) {
    let mut ratios: Vec<f64> = rates[0].iter().zip(&rates[1]).map(|(a, b)| a / b).collect();
    ratios.sort_by(f64::total_cmp);
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "| {id:?} | {:.0} | {:.0} | {:.3} ({:.3}–{:.3}) |",
        best(&rates[0]),
        best(&rates[1]),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1]
    );
}

fn quinn() {
    println!("## QUIC connections through quinn (per second, loopback, one core)\n");
    println!("| suite | ours | aws-lc-rs | ours / aws-lc-rs (median, range) |");
    println!("|---|---|---|---|");
    let ps = providers();
    for id in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    ] {
        const N: usize = 200;
        let mut rates = [Vec::new(), Vec::new()];
        for round in 0..7 {
            for k in 0..2 {
                let i = (k + round) % 2;
                let p = &ps[i].1;
                let t: Duration = tls_tests::quinn_link::connection_time(p, p, id, N);
                rates[i].push(N as f64 / t.as_secs_f64());
            }
        }
        rate_row(id, &rates);
    }
    println!();
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let parts = args.next().unwrap_or_else(|| "aead,quic,tls,quinn".into());
    let only = args.next();
    let only = only.as_deref().and_then(|o| o.strip_prefix("only="));
    for part in parts.split(',') {
        match part {
            "aead" => aead(only),
            "quic" => quic(only),
            "tls" => tls(),
            "quinn" => quinn(),
            other => panic!("unknown part {other}: aead, quic, tls or quinn"),
        }
    }
}
