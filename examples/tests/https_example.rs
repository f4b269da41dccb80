//! Runs the example server in-process and fetches from it with the example
//! client, over TLS 1.3 and TLS 1.2, checking that every negotiated suite is
//! one of rustls-fusion's own statics (by address, not by name).
//!
//! Providers are passed explicitly (`builder_with_provider`); nothing here
//! installs a process-default provider, so the tests cannot race over one.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::version::{TLS12, TLS13};
use rustls::{ProtocolVersion, RootCertStore, SupportedCipherSuite, SupportedProtocolVersion};
use rustls_fusion::cipher_suite::*;
use rustls_fusion_examples::{
    client_config, fetch, hello_body, self_signed_identity, serve, server_config, suite_name,
    Identity, Url, ALPN_HTTP11,
};
use rustls_pki_types::{CertificateDer, PrivatePkcs8KeyDer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

fn fusion() -> Arc<CryptoProvider> {
    Arc::new(rustls_fusion::default_provider())
}

/// A provider offering only `suite`, to force the negotiation.
fn fusion_only(suite: SupportedCipherSuite) -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        cipher_suites: vec![suite],
        ..rustls_fusion::default_provider()
    })
}

/// True if `suite` is (by address) the rustls-fusion static `ours`.
fn is_static(suite: SupportedCipherSuite, ours: &SupportedCipherSuite) -> bool {
    match (suite, ours) {
        (SupportedCipherSuite::Tls13(a), SupportedCipherSuite::Tls13(b)) => std::ptr::eq(a, *b),
        (SupportedCipherSuite::Tls12(a), SupportedCipherSuite::Tls12(b)) => std::ptr::eq(a, *b),
        _ => false,
    }
}

/// Which of rustls-fusion's statics `suite` is, if any.
fn fusion_static(suite: SupportedCipherSuite) -> Option<&'static SupportedCipherSuite> {
    ALL_CIPHER_SUITES.iter().find(|ours| is_static(suite, ours))
}

struct Server {
    addr: SocketAddr,
    roots: RootCertStore,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn start(identity: Identity) -> Server {
    let mut roots = RootCertStore::empty();
    roots.add(identity.cert_chain[0].clone()).unwrap();
    let config = Arc::new(server_config(fusion(), identity).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(serve(listener, config));
    Server { addr, roots, task }
}

async fn start_ecdsa() -> Server {
    start(self_signed_identity().unwrap().identity).await
}

/// Like `self_signed_identity`, but RSA, for the TLS_ECDHE_RSA_* suites.
async fn start_rsa() -> Server {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    let cert = params.self_signed(&key).unwrap();
    start(Identity {
        cert_chain: vec![CertificateDer::from(cert.der().to_vec())],
        key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
    })
    .await
}

fn url(server: &Server, host: &str, path: &str) -> Url {
    Url::parse(&format!("https://{host}:{}{path}", server.addr.port())).unwrap()
}

/// Fetches `GET /` and checks everything about the answer; returns the suite.
async fn get_hello(
    server: &Server,
    provider: Arc<CryptoProvider>,
    versions: &[&'static SupportedProtocolVersion],
    host: &str,
) -> SupportedCipherSuite {
    let config = Arc::new(client_config(provider, server.roots.clone(), versions).unwrap());
    let response = fetch(config, &url(server, host, "/")).await.unwrap();

    assert_eq!(response.status_line, "HTTP/1.1 200 OK");
    assert_eq!(response.header("Connection"), Some("close"));
    assert_eq!(
        response.header("Content-Length"),
        Some(response.body.len().to_string().as_str())
    );
    assert_eq!(response.alpn.as_deref(), Some(ALPN_HTTP11));

    let suite = response.cipher_suite;
    assert!(
        fusion_static(suite).is_some(),
        "{suite:?} is not one of rustls_fusion::cipher_suite's statics"
    );
    let body = String::from_utf8(response.body).unwrap();
    assert_eq!(body, hello_body(response.protocol, suite));
    assert!(
        body.contains(&format!("cipher suite: {}\n", suite_name(suite))),
        "{body}"
    );
    suite
}

#[tokio::test]
async fn tls13_default_suites() {
    let server = start_ecdsa().await;
    for host in ["localhost", "127.0.0.1"] {
        let suite = get_hello(&server, fusion(), &[&TLS13], host).await;
        assert_eq!(suite.version().version, ProtocolVersion::TLSv1_3);
        assert!(
            [
                &TLS13_AES_128_GCM_SHA256,
                &TLS13_AES_256_GCM_SHA384,
                &TLS13_CHACHA20_POLY1305_SHA256
            ]
            .iter()
            .any(|ours| is_static(suite, ours)),
            "{suite:?}"
        );
    }
}

#[tokio::test]
async fn tls12_default_suites() {
    let server = start_ecdsa().await;
    let suite = get_hello(&server, fusion(), &[&TLS12], "localhost").await;
    assert_eq!(suite.version().version, ProtocolVersion::TLSv1_2);
    assert!(
        [
            &TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            &TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            &TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        ]
        .iter()
        .any(|ours| is_static(suite, ours)),
        "{suite:?}"
    );
}

#[tokio::test]
async fn both_versions_offered_picks_tls13() {
    let server = start_ecdsa().await;
    let suite = get_hello(&server, fusion(), &[&TLS13, &TLS12], "localhost").await;
    assert!(suite.tls13().is_some(), "{suite:?}");
}

/// Every one of the nine suites, forced one at a time from the client side.
#[tokio::test]
async fn every_suite_by_address() {
    let ecdsa = start_ecdsa().await;
    let rsa = start_rsa().await;
    for ours in ALL_CIPHER_SUITES {
        let name = suite_name(*ours);
        let server = if name.contains("_RSA_") { &rsa } else { &ecdsa };
        let version: &'static SupportedProtocolVersion = match ours {
            SupportedCipherSuite::Tls13(_) => &TLS13,
            SupportedCipherSuite::Tls12(_) => &TLS12,
        };
        let got = get_hello(server, fusion_only(*ours), &[version], "localhost").await;
        assert!(is_static(got, ours), "wanted {name}, got {got:?}");
    }
}

#[tokio::test]
async fn other_paths_are_404() {
    let server = start_ecdsa().await;
    let config = Arc::new(client_config(fusion(), server.roots.clone(), &[&TLS13]).unwrap());
    let response = fetch(config, &url(&server, "localhost", "/nope?x=1"))
        .await
        .unwrap();
    assert_eq!(response.status, 404);
    assert_eq!(response.status_line, "HTTP/1.1 404 Not Found");
    assert_eq!(response.header("Connection"), Some("close"));
    assert_eq!(response.body, b"not found\n");
}

/// Failed handshakes (untrusted certificate, garbage, an abrupt close) only
/// end their own connection.
#[tokio::test]
async fn failed_handshakes_do_not_kill_the_server() {
    let server = start_ecdsa().await;

    let untrusting = Arc::new(client_config(fusion(), RootCertStore::empty(), &[&TLS13]).unwrap());
    let err = fetch(untrusting, &url(&server, "localhost", "/"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("handshake"), "{err}");

    let mut garbage = TcpStream::connect(server.addr).await.unwrap();
    garbage
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    drop(garbage);
    drop(TcpStream::connect(server.addr).await.unwrap());

    get_hello(&server, fusion(), &[&TLS12], "localhost").await;
    get_hello(&server, fusion(), &[&TLS13], "127.0.0.1").await;
}
