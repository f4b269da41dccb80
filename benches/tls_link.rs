//! An in-memory client → server rustls connection for the rustls-level
//! benches (`tls.rs`, and `interleaved.rs` with `TLS=1`).

use std::io::{Read, Write};

use rustls::crypto::CryptoProvider;
use rustls::SupportedCipherSuite;
use tls_tests::memory::Pair;

/// The providers under test, by bench id.
pub fn providers() -> [(&'static str, CryptoProvider); 3] {
    [
        ("fusion", rustls_fusion::default_provider()),
        ("aws-lc-rs", rustls::crypto::aws_lc_rs::default_provider()),
        ("ring", rustls::crypto::ring::default_provider()),
    ]
}

/// `provider`'s own implementation of the suite `like` names.
pub fn own_suite(
    provider: &CryptoProvider,
    like: SupportedCipherSuite,
) -> Option<SupportedCipherSuite> {
    provider
        .cipher_suites
        .iter()
        .copied()
        .find(|s| s.suite() == like.suite())
}

/// A connected pair plus the buffers one iteration reuses.
pub struct Link {
    pair: Pair,
    /// TLS bytes in flight from client to server.
    wire: Vec<u8>,
    /// Where the server's plaintext is drained to.
    sink: Box<[u8]>,
    /// TLS bytes in flight from server to client (key updates only).
    back: Vec<u8>,
}

impl Link {
    pub fn new(provider: &CryptoProvider, suite: SupportedCipherSuite, size: usize) -> Self {
        let mut pair = Pair::connect(provider, provider, suite);
        // Anything the handshake left behind (session tickets and the like).
        pair.flush();
        pair.take_received(true);
        pair.take_received(false);
        // One write of `size` becomes ⌈size / 16 KiB⌉ records, each at most
        // 16 KiB + 5 header + 256 expansion.
        let records = size.div_ceil(16 * 1024).max(1);
        Self {
            pair,
            wire: Vec::with_capacity(size + records * (5 + 256)),
            sink: vec![0; 64 * 1024].into_boxed_slice(),
            back: Vec::new(),
        }
    }

    /// Client writes `data`; the server opens it all and drains the
    /// plaintext. Returns the number of plaintext bytes the server read.
    pub fn round(&mut self, data: &[u8]) -> usize {
        let client = &mut self.pair.client;
        let server = &mut self.pair.server;
        client.writer().write_all(data).unwrap();
        self.wire.clear();
        while client.wants_write() {
            client.write_tls(&mut self.wire).unwrap();
        }
        let mut got = 0;
        let mut rest = &self.wire[..];
        while !rest.is_empty() {
            server.read_tls(&mut rest).unwrap();
            let mut pending = server
                .process_new_packets()
                .unwrap()
                .plaintext_bytes_to_read();
            while pending > 0 {
                let n = server.reader().read(&mut self.sink).unwrap();
                assert!(n > 0, "server saw end of stream");
                pending -= n;
                got += n;
            }
        }
        // The server only writes if the client asked it to update its keys.
        if server.wants_write() {
            self.back.clear();
            while server.wants_write() {
                server.write_tls(&mut self.back).unwrap();
            }
            let mut rest = &self.back[..];
            while !rest.is_empty() {
                client.read_tls(&mut rest).unwrap();
                client.process_new_packets().unwrap();
            }
        }
        got
    }
}
