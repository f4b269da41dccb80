//! Two rustls connections joined back to back in memory.

use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::{
    ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection,
    SupportedCipherSuite,
};

use crate::certs;

/// A provider offering exactly `suite` (and its protocol version only).
pub fn pinned(provider: &CryptoProvider, suite: SupportedCipherSuite) -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        cipher_suites: vec![suite],
        ..provider.clone()
    })
}

fn versions(suite: SupportedCipherSuite) -> &'static [&'static rustls::SupportedProtocolVersion] {
    static TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
    static TLS12: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];
    if suite.tls13().is_some() {
        TLS13
    } else {
        TLS12
    }
}

pub fn client_config(provider: Arc<CryptoProvider>, suite: SupportedCipherSuite) -> ClientConfig {
    ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions(suite))
        .expect("suite and version agree")
        .with_root_certificates(certs::for_suite(suite).roots())
        .with_no_client_auth()
}

pub fn server_config(provider: Arc<CryptoProvider>, suite: SupportedCipherSuite) -> ServerConfig {
    let cert = certs::for_suite(suite);
    ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions(suite))
        .expect("suite and version agree")
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.clone()], cert.key())
        .expect("server certificate")
}

/// A client and a server connection, handshake done.
pub struct Pair {
    pub client: Connection,
    pub server: Connection,
    /// Plaintext each side has received and the test has not yet taken.
    pub client_received: Vec<u8>,
    pub server_received: Vec<u8>,
}

impl Pair {
    /// Connects a client built on `client` to a server built on `server`,
    /// both pinned to `suite`.
    pub fn connect(
        client: &CryptoProvider,
        server: &CryptoProvider,
        suite: SupportedCipherSuite,
    ) -> Self {
        let ccfg = Arc::new(client_config(pinned(client, suite), suite));
        let scfg = Arc::new(server_config(pinned(server, suite), suite));
        let mut pair = Self {
            client: ClientConnection::new(ccfg, "localhost".try_into().unwrap())
                .unwrap()
                .into(),
            server: ServerConnection::new(scfg).unwrap().into(),
            client_received: Vec::new(),
            server_received: Vec::new(),
        };
        pair.client.set_buffer_limit(None);
        pair.server.set_buffer_limit(None);
        while pair.client.is_handshaking() || pair.server.is_handshaking() {
            let moved = pair.flush();
            assert!(moved > 0, "handshake stalled");
        }
        pair
    }

    /// Moves every pending TLS byte both ways until both sides are idle.
    /// Returns the number of bytes moved.
    pub fn flush(&mut self) -> usize {
        let mut total = 0;
        loop {
            let moved = transfer(
                &mut self.client,
                &mut self.server,
                &mut self.server_received,
            ) + transfer(
                &mut self.server,
                &mut self.client,
                &mut self.client_received,
            );
            if moved == 0 {
                return total;
            }
            total += moved;
        }
    }

    /// Sends `data` from one side (as one `write_all`) and checks the other
    /// side reads back exactly `data`.
    pub fn send(&mut self, from_client: bool, data: &[u8]) {
        let (tx, _) = self.sides(from_client);
        tx.writer().write_all(data).unwrap();
        self.flush();
        let got = self.take_received(from_client);
        assert!(
            got == data,
            "received {} bytes, sent {}",
            got.len(),
            data.len()
        );
    }

    /// Takes what the receiving side (of data sent by `from_client`) has read.
    pub fn take_received(&mut self, from_client: bool) -> Vec<u8> {
        std::mem::take(if from_client {
            &mut self.server_received
        } else {
            &mut self.client_received
        })
    }

    /// `(sender, receiver)`.
    pub fn sides(&mut self, from_client: bool) -> (&mut Connection, &mut Connection) {
        if from_client {
            (&mut self.client, &mut self.server)
        } else {
            (&mut self.server, &mut self.client)
        }
    }
}

/// Moves all of `from`'s pending TLS records into `to`, processes them and
/// appends the plaintext `to` received to `received`.
pub fn transfer(from: &mut Connection, to: &mut Connection, received: &mut Vec<u8>) -> usize {
    let mut wire = Vec::new();
    while from.wants_write() {
        from.write_tls(&mut wire).unwrap();
    }
    let mut rest = &wire[..];
    while !rest.is_empty() {
        to.read_tls(&mut rest).unwrap();
        to.process_new_packets().unwrap();
        received.extend(read_available(to));
    }
    wire.len()
}

/// Everything `conn` has decrypted and not yet handed out.
pub fn read_available(conn: &mut Connection) -> Vec<u8> {
    let mut out = Vec::new();
    match conn.reader().read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => panic!("read failed: {e}"),
    }
    out
}

/// `true` if `a` is exactly `b` (the same static, not just the same id).
pub fn same_suite(a: SupportedCipherSuite, b: SupportedCipherSuite) -> bool {
    match (a, b) {
        (SupportedCipherSuite::Tls13(a), SupportedCipherSuite::Tls13(b)) => std::ptr::eq(a, b),
        (SupportedCipherSuite::Tls12(a), SupportedCipherSuite::Tls12(b)) => std::ptr::eq(a, b),
        _ => false,
    }
}
