//! ChaCha20-Poly1305 (RFC 8439).

use super::portable::Portable;
use super::{aead_type, Backend, Engine, OpenError, NONCE_LEN, TAG_LEN};

/// The ChaCha20-Poly1305 engines.
pub(crate) enum Engines {
    Portable(Portable<chacha20poly1305::ChaCha20Poly1305>),
}

impl Engine for Engines {
    type Key = [u8; 32];

    fn backends() -> Vec<Backend> {
        vec![Backend::Portable]
    }

    fn new(key: &[u8; 32], backend: Backend) -> Option<Self> {
        match backend {
            Backend::Portable => Some(Self::Portable(Portable::new(key))),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    fn backend(&self) -> Backend {
        match self {
            Self::Portable(_) => Backend::Portable,
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
            Self::Portable(k) => k.seal(nonce, aad, src, buf),
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
            Self::Portable(k) => k.open(nonce, aad, buf, tag),
        }
    }
}

aead_type!(
    /// ChaCha20-Poly1305: 32-byte key, 12-byte nonce, 16-byte tag.
    ChaCha20Poly1305,
    Engines,
    32
);
