//! The same QUIC keys from every provider, for the benches that time or
//! count packets through rustls's `quic` objects (`quic.rs`,
//! `instructions.rs`).

use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::crypto::CryptoProvider;
use rustls::quic::{DirectionalKeys, Keys, Version};
use rustls::{CipherSuite, Side, Tls13CipherSuite};

/// `provider`'s TLS 1.3 suite `id`.
///
/// # Panics
/// If `provider` has no such suite.
pub fn suite(provider: &CryptoProvider, id: CipherSuite) -> &'static Tls13CipherSuite {
    provider
        .cipher_suites
        .iter()
        .find(|s| s.suite() == id)
        .and_then(|s| s.tls13())
        .expect("suite")
}

/// The same keys from every provider: AES-128 through the Initial key
/// schedule (AeadKey has no public 16-byte constructor), the 32-byte
/// ciphers from fixed key bytes.
///
/// # Panics
/// If `provider` has no QUIC suite `id`.
pub fn keys(provider: &CryptoProvider, id: CipherSuite) -> DirectionalKeys {
    let s = suite(provider, id);
    let alg = s.quic.expect("QUIC suite");
    if id == CipherSuite::TLS13_AES_128_GCM_SHA256 {
        Keys::initial(Version::V1, s, alg, &[7; 8], Side::Client).local
    } else {
        DirectionalKeys {
            header: alg.header_protection_key(AeadKey::from([0x33; 32])),
            packet: alg.packet_key(AeadKey::from([0x44; 32]), Iv::new([0x55; 12])),
        }
    }
}
