//! The portable backend: RustCrypto's audited constant-time AEADs behind our
//! engine shape. Used only where no accelerated backend runs (or when forced).
//!
//! RustCrypto does its own CPU detection inside; CI also runs the vector
//! tests with its soft backends forced (`--cfg aes_backend="soft"` etc.) so
//! the truly portable code is exercised.

use aes_gcm::aead::consts::{U12, U16};
use aes_gcm::aead::{AeadInOut, KeyInit};
use zeroize::Zeroize;

use super::{OpenError, NONCE_LEN, TAG_LEN};

/// A RustCrypto AEAD (which zeroizes its key schedule on drop).
pub(crate) struct Portable<C>(C);

impl<C: AeadInOut<NonceSize = U12, TagSize = U16> + KeyInit> Portable<C> {
    pub(crate) fn new(key: &[u8]) -> Self {
        Self(C::new_from_slice(key).expect("key length matches the algorithm"))
    }

    pub(crate) fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        buf[..src.len()].copy_from_slice(src);
        let tag = self
            .0
            .encrypt_inout_detached(nonce.into(), aad, buf.into())
            .expect("message within the algorithm's length limit");
        tag.as_slice().try_into().expect("16-byte tag")
    }

    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        let tag = tag.as_slice().try_into().expect("16-byte tag");
        self.0
            .decrypt_inout_detached(nonce.into(), aad, buf.into(), tag)
            .map_err(|_| {
                buf.zeroize();
                OpenError
            })
    }
}
