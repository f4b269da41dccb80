//! Conformance against a real BoringSSL peer (issue 5).
//!
//! rustls with the rustls-fusion provider on one side, BoringSSL (the `boring`
//! crate, which builds BoringSSL from source) on the other, over loopback TCP
//! through a small man-in-the-middle relay that parses TLS records. Every test
//! binds its own `127.0.0.1:0` ports, so the tests run in parallel.
//!
//! * Matrix (`<suite>::fusion_client` / `<suite>::fusion_server`): 9 suites x
//!   2 directions, each repeated for every AEAD backend this CPU runs. Each run
//!   echoes 13 message sizes (0 B .. 4 MiB) byte for byte, streams 10 000
//!   small records each way, does TLS 1.3 KeyUpdates from both sides mid-message
//!   (counted by BoringSSL's message callback), closes with close_notify from
//!   the client, then a second short connection closes from the server. The
//!   relay checks that our TLS 1.2 AES-GCM explicit nonces are 0, 1, 2, ...
//! * Adversarial (`adv_<suite>::<fault>`): the relay corrupts one record
//!   (bit flip, truncation, inflated length, duplicate, swap) in each
//!   direction and both topologies, so both rustls-fusion and BoringSSL act as
//!   the receiver; the receiver must fail cleanly and deliver nothing past
//!   the fault.
//!
//! Run: `scripts/conformance.sh`, or
//! `cargo test -p tls-tests --features boringssl --test boringssl`.
//! Set `CONFORMANCE_REPORT=<file>` to append one tab-separated line per run.
//!
//! Files: `suites.rs` (suites, certificates, providers), `endpoints.rs`
//! (BoringSSL and rustls endpoints), `relay.rs` (the relay and one
//! connection through it), `matrix.rs` and `adversarial.rs` (the tests).

use std::collections::HashSet;
use std::ffi::{c_int, c_void};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use boring::pkey::PKey;
use boring::ssl::{
    ErrorCode, ShutdownResult, SslAcceptor, SslConnector, SslContextBuilder, SslMethod, SslStream,
    SslVersion,
};
use boring::x509::X509;
use foreign_types::ForeignTypeRef;
use rustls::crypto::CryptoProvider;
use rustls::{
    ClientConfig, ClientConnection, ServerConfig, ServerConnection, StreamOwned,
    SupportedCipherSuite,
};
use rustls_fusion::aead::{Aes128Gcm, Backend, ChaCha20Poly1305};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

mod adversarial;
mod endpoints;
mod matrix;
mod relay;
mod suites;

use endpoints::*;
use matrix::*;
use relay::*;
use suites::*;

/// Appends a line to `$CONFORMANCE_REPORT` (if set).
fn report(line: String) {
    println!("{line}");
    if let Some(path) = std::env::var_os("CONFORMANCE_REPORT") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("report file");
        f.write_all(format!("{line}\n").as_bytes())
            .expect("report write");
    }
}

/// Every backend this CPU runs is covered by the runs above.
#[test]
fn every_backend_is_exercised() {
    let aes = Aes128Gcm::backends();
    let chacha = ChaCha20Poly1305::backends();
    let mut covered_aes = HashSet::new();
    let mut covered_chacha = HashSet::new();
    for s in [&TLS13_AES_128_GCM_SHA256, &TLS13_CHACHA20_POLY1305_SHA256] {
        for (a, c) in backend_pairs(s) {
            covered_aes.insert(a);
            covered_chacha.insert(c);
        }
    }
    assert_eq!(covered_aes, aes.iter().copied().collect());
    assert_eq!(covered_chacha, chacha.iter().copied().collect());
    report(format!(
        "backends\tAES-GCM: {}\tChaCha20-Poly1305: {}",
        aes.iter().map(|b| b.name()).collect::<Vec<_>>().join(", "),
        chacha
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    ));
}
