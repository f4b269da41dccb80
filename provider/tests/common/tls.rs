//! Helpers for driving the rustls record layer directly.

use rustls::crypto::cipher::{
    AeadKey, InboundOpaqueMessage, MessageDecrypter, MessageEncrypter, OutboundChunks,
    OutboundPlainMessage,
};
use rustls::crypto::tls13::OkmBlock;
use rustls::{ContentType, Error, ProtocolVersion, SupportedCipherSuite, Tls12CipherSuite};
use rustls_fusion::aead::Backend;
use rustls_fusion::cipher_suite::{ALL_CIPHER_SUITES, TLS13_AES_128_GCM_SHA256};

use super::Alg;

/// Every suite on the engines this CPU picks, then every suite pinned to
/// `Base` (the base provider's AEAD), which seals and opens records in its
/// own shape (`tls/record.rs`): each record and guard test runs on both.
pub fn all_suites() -> &'static [SupportedCipherSuite] {
    static SUITES: std::sync::OnceLock<Vec<SupportedCipherSuite>> = std::sync::OnceLock::new();
    SUITES.get_or_init(|| {
        let base = rustls_fusion::provider_with_backends(Backend::Base, Backend::Base)
            .expect("Base runs everywhere");
        ALL_CIPHER_SUITES
            .iter()
            .copied()
            .chain(base.cipher_suites)
            .collect()
    })
}

pub fn tls12(suite: SupportedCipherSuite) -> Option<&'static Tls12CipherSuite> {
    match suite {
        SupportedCipherSuite::Tls12(s) => Some(s),
        SupportedCipherSuite::Tls13(_) => None,
    }
}

pub fn alg_of(suite: SupportedCipherSuite) -> Alg {
    let name = format!("{:?}", suite.suite());
    if name.contains("AES_128") {
        Alg::Aes128Gcm
    } else if name.contains("AES_256") {
        Alg::Aes256Gcm
    } else {
        Alg::ChaCha20Poly1305
    }
}

/// An `AeadKey` of `len` bytes (rustls only builds 32-byte ones publicly,
/// so 16-byte keys come from the TLS 1.3 key schedule).
pub fn aead_key(len: usize, seed: u8) -> AeadKey {
    match len {
        32 => AeadKey::from([seed; 32]),
        16 => {
            let suite = TLS13_AES_128_GCM_SHA256.tls13().unwrap();
            let expander = suite
                .hkdf_provider
                .expander_for_okm(&OkmBlock::new(&[seed; 32]));
            rustls::internal::derive_traffic_key(expander.as_ref(), suite.aead_alg)
        }
        _ => panic!("no {len}-byte AEAD keys"),
    }
}

/// A suite's encrypter and decrypter for the same key, and the raw key/IV.
pub struct Pair {
    pub enc: Box<dyn MessageEncrypter>,
    pub dec: Box<dyn MessageDecrypter>,
    pub key: Vec<u8>,
    /// TLS 1.3 / ChaCha: the 12-byte IV. TLS 1.2 GCM: the 4-byte salt.
    pub iv: Vec<u8>,
}

pub fn pair(suite: SupportedCipherSuite, seed: u8, iv12: [u8; 12]) -> Pair {
    let alg = alg_of(suite);
    let key = || aead_key(alg.key_len(), seed);
    let raw_key = key().as_ref().to_vec();
    match suite {
        SupportedCipherSuite::Tls13(s) => Pair {
            enc: s.aead_alg.encrypter(key(), iv12.into()),
            dec: s.aead_alg.decrypter(key(), iv12.into()),
            key: raw_key,
            iv: iv12.to_vec(),
        },
        SupportedCipherSuite::Tls12(s) => {
            let shape = s.aead_alg.key_block_shape();
            let iv = &iv12[..shape.fixed_iv_len];
            let extra = [0xee; 8];
            Pair {
                enc: s
                    .aead_alg
                    .encrypter(key(), iv, &extra[..shape.explicit_nonce_len]),
                dec: s.aead_alg.decrypter(key(), iv),
                key: raw_key,
                iv: iv.to_vec(),
            }
        }
    }
}

/// Encrypts `data` as one application-data record; returns the payload.
pub fn encrypt(enc: &mut dyn MessageEncrypter, data: &[u8], seq: u64) -> Result<Vec<u8>, Error> {
    let msg = OutboundPlainMessage {
        typ: ContentType::ApplicationData,
        version: ProtocolVersion::TLSv1_2,
        payload: OutboundChunks::Single(data),
    };
    enc.encrypt(msg, seq).map(|m| m.payload.as_ref().to_vec())
}

/// Decrypts a record payload in `buf`; returns the plaintext.
pub fn decrypt(dec: &mut dyn MessageDecrypter, buf: &mut [u8], seq: u64) -> Result<Vec<u8>, Error> {
    let msg =
        InboundOpaqueMessage::new(ContentType::ApplicationData, ProtocolVersion::TLSv1_2, buf);
    dec.decrypt(msg, seq).map(|m| m.payload.to_vec())
}
