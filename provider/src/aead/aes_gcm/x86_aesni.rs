//! AES-GCM on AES-NI + PCLMULQDQ (xmm, one block per register): for
//! x86-64 CPUs without VAES. The stitched kernel is in `x86_64.rs`.
#![allow(unsafe_code)]

use core::arch::x86_64::__m128i;

use super::x86_64::{self, KeyData};
use crate::aead::{OpenError, NONCE_LEN, TAG_LEN};
use crate::cpu::Features;

/// An AES-GCM key on this backend; `NR` is the number of AES rounds.
pub(crate) struct Key<const NR: usize>(Box<KeyData>);

impl<const NR: usize> Key<NR> {
    /// `None` unless this CPU has AES-NI, PCLMULQDQ and SSSE3.
    pub(crate) fn new(key: &[u8]) -> Option<Self> {
        if !Features::get().aes_clmul {
            return None;
        }
        // SAFETY: the features `new_key` needs were just detected.
        Some(Self(Box::new(unsafe { x86_64::new_key(key) })))
    }

    pub(crate) fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        // SAFETY: a `Key` exists only where `new` detected the features.
        unsafe { seal::<NR>(&self.0, nonce, aad, src, buf) }
    }

    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        // SAFETY: as for `seal`.
        unsafe { open::<NR>(&self.0, nonce, aad, buf, tag) }
            .then_some(())
            .ok_or(OpenError)
    }
    /// Seals from an arbitrary pre-counter block J0 (tests only).
    #[cfg(test)]
    pub(crate) fn seal_with_j0(&self, j0: &[u8; 16], aad: &[u8], buf: &mut [u8]) -> [u8; TAG_LEN] {
        // SAFETY: as for `seal`.
        unsafe { seal_with_j0::<NR>(&self.0, j0, aad, buf) }
    }
}

#[cfg(test)]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
unsafe fn seal_with_j0<const NR: usize>(
    key: &KeyData,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    x86_64::seal_with_j0::<__m128i, NR>(key, j0, aad, buf)
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
unsafe fn seal<const NR: usize>(
    key: &KeyData,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    x86_64::seal::<__m128i, NR>(key, nonce, aad, src, buf)
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
unsafe fn open<const NR: usize>(
    key: &KeyData,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> bool {
    x86_64::open::<__m128i, NR>(key, nonce, aad, buf, tag)
}
