//! AES-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.

use super::portable::Portable;
use super::{aead_type, Backend, Engine, OpenError, NONCE_LEN, TAG_LEN};

/// The AES-GCM engines for one key size.
pub(crate) enum AesGcm<const KEY_LEN: usize> {
    Portable128(Portable<aes_gcm::Aes128Gcm>),
    Portable256(Portable<aes_gcm::Aes256Gcm>),
}

impl<const KEY_LEN: usize> Engine for AesGcm<KEY_LEN> {
    type Key = [u8; KEY_LEN];

    fn backends() -> Vec<Backend> {
        vec![Backend::Portable]
    }

    fn new(key: &[u8; KEY_LEN], backend: Backend) -> Option<Self> {
        if !Self::backends().contains(&backend) {
            return None;
        }
        Some(match (backend, KEY_LEN) {
            (Backend::Portable, 16) => Self::Portable128(Portable::new(key)),
            (Backend::Portable, 32) => Self::Portable256(Portable::new(key)),
            _ => unreachable!("AES-GCM keys are 16 or 32 bytes"),
        })
    }

    fn backend(&self) -> Backend {
        match self {
            Self::Portable128(_) | Self::Portable256(_) => Backend::Portable,
        }
    }

    fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        match self {
            Self::Portable128(k) => k.seal(nonce, aad, src, buf),
            Self::Portable256(k) => k.seal(nonce, aad, src, buf),
        }
    }

    fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        match self {
            Self::Portable128(k) => k.open(nonce, aad, buf, tag),
            Self::Portable256(k) => k.open(nonce, aad, buf, tag),
        }
    }
}

aead_type!(
    /// AES-128-GCM: 16-byte key, 12-byte nonce, 16-byte tag.
    Aes128Gcm,
    AesGcm<16>,
    16
);

aead_type!(
    /// AES-256-GCM: 32-byte key, 12-byte nonce, 16-byte tag.
    Aes256Gcm,
    AesGcm<32>,
    32
);
