//! The `Base` backend: the base provider's own AEAD (aws-lc-rs's with the
//! default feature, ring's with feature `ring`) behind our engine shape.
//!
//! It runs wherever none of our engines does: every target other than
//! x86-64 (aarch64 servers and laptops, 32-bit targets), and x86-64 CPUs
//! without the features our engines need. The key is set up once, as the
//! base provider's own rustls record layer does (`LessSafeKey`), and every
//! record still goes through our record code and nonce guard, so installing
//! rustls-fusion costs nothing there: record protection runs the same
//! assembly the replaced provider would have run.

#[cfg(feature = "aws-lc-rs")]
use aws_lc_rs::aead;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use ring::aead;
use zeroize::Zeroize;

use super::{OpenError, NONCE_LEN, TAG_LEN};

/// The base provider's AEAD algorithms, by our names.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Alg {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

impl Alg {
    fn get(self) -> &'static aead::Algorithm {
        match self {
            Self::Aes128Gcm => &aead::AES_128_GCM,
            Self::Aes256Gcm => &aead::AES_256_GCM,
            Self::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
        }
    }
}

/// One key of the base provider's AEAD. Both libraries wipe their key
/// schedules when the key is dropped. ring keeps its key schedule inline
/// (about 550 bytes), so it is boxed to keep our engine enums small;
/// aws-lc-rs already keeps it behind a pointer.
pub(crate) struct Base(Inner);

#[cfg(feature = "aws-lc-rs")]
type Inner = aead::LessSafeKey;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
type Inner = Box<aead::LessSafeKey>;

impl Base {
    /// # Panics
    /// If `key` is not the algorithm's key length (callers pass typed keys).
    pub(crate) fn new(alg: Alg, key: &[u8]) -> Self {
        let key = aead::UnboundKey::new(alg.get(), key).expect("key length matches the algorithm");
        #[allow(clippy::useless_conversion)]
        Self(aead::LessSafeKey::new(key).into())
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
            .seal_in_place_separate_tag(
                aead::Nonce::assume_unique_for_key(*nonce),
                aead::Aad::from(aad),
                buf,
            )
            .expect("message within the algorithm's length limit");
        tag.as_ref().try_into().expect("16-byte tag")
    }

    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        let nonce = aead::Nonce::assume_unique_for_key(*nonce);
        let aad = aead::Aad::from(aad);
        #[cfg(feature = "aws-lc-rs")]
        let opened = self.0.open_in_place_separate_tag(nonce, aad, tag, buf);
        #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
        let opened = self
            .0
            .open_in_place_separate_tag(nonce, aad, aead::Tag::from(*tag), buf, 0..);
        match opened {
            Ok(_) => Ok(()),
            Err(_) => {
                // Both libraries may have written to `buf` before the check.
                buf.zeroize();
                Err(OpenError)
            }
        }
    }
}
