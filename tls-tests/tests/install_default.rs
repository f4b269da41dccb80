//! `default_provider().install_default()` makes plain `ClientConfig::builder()`
//! and `ServerConfig::builder()` use our suites. (Its own test binary: the
//! process default can be set only once.)

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};
use rustls_fusion::cipher_suite::ALL_CIPHER_SUITES;
use tls_tests::certs;
use tls_tests::memory::{same_suite, transfer};

#[test]
fn install_default_routes_builder_through_our_suites() {
    rustls_fusion::default_provider()
        .install_default()
        .expect("first provider installed in this process");
    let installed = CryptoProvider::get_default().expect("installed");

    let cert = certs::ecdsa();
    let client = ClientConfig::builder()
        .with_root_certificates(cert.roots())
        .with_no_client_auth();
    let server = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.clone()], cert.key())
        .unwrap();
    for config_suites in [
        &client.crypto_provider().cipher_suites,
        &server.crypto_provider().cipher_suites,
    ] {
        assert!(Arc::ptr_eq(installed, client.crypto_provider()));
        assert_eq!(config_suites.len(), ALL_CIPHER_SUITES.len());
        for s in config_suites.iter() {
            assert!(
                ALL_CIPHER_SUITES.iter().any(|&ours| same_suite(*s, ours)),
                "{:?} is not ours",
                s.suite()
            );
        }
    }

    // And a handshake through those configs negotiates one of our statics.
    let mut c: Connection =
        ClientConnection::new(Arc::new(client), "localhost".try_into().unwrap())
            .unwrap()
            .into();
    let mut s: Connection = ServerConnection::new(Arc::new(server)).unwrap().into();
    while c.is_handshaking() || s.is_handshaking() {
        let mut sink = Vec::new();
        assert!(transfer(&mut c, &mut s, &mut sink) + transfer(&mut s, &mut c, &mut sink) > 0);
    }
    let negotiated = c.negotiated_cipher_suite().unwrap();
    assert!(ALL_CIPHER_SUITES
        .iter()
        .any(|&ours| same_suite(negotiated, ours)));
}
