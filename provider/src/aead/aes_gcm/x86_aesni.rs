//! AES-GCM on AES-NI + PCLMULQDQ (xmm, one block per register): for
//! x86-64 CPUs without VAES. The stitched kernel is in `x86_64/`.
//!
//! Two builds of it: with AVX (VEX-encoded three-operand instructions,
//! fewer register copies; every such CPU since Sandy Bridge and Bulldozer)
//! and without (SSE only: Westmere, Silvermont-class Atoms). The key picks
//! one when it is made.
#![allow(unsafe_code)]

mod avx {
    use core::arch::x86_64::__m128i;

    super::super::x86_64::x86_backend!(
        features = "aes,pclmulqdq,ssse3,sse4.1,avx",
        lanes = __m128i,
        powers = 8,
        hx = 8,
        detected = aes_clmul_avx
    );
}

pub(super) mod sse {
    use core::arch::x86_64::__m128i;

    super::super::x86_64::x86_backend!(
        features = "aes,pclmulqdq,ssse3,sse4.1",
        lanes = __m128i,
        powers = 8,
        hx = 8,
        detected = aes_clmul
    );
}

/// An AES-GCM key on the AES-NI engine, built for AVX where the CPU has it.
pub(crate) enum Key<const NR: usize> {
    Avx(avx::Key<NR>),
    Sse(sse::Key<NR>),
}

impl<const NR: usize> Key<NR> {
    /// `None` unless this CPU has AES-NI, PCLMULQDQ, SSSE3 and SSE4.1.
    ///
    /// # Panics
    /// If `key` is not the length `NR` implies.
    pub(crate) fn new(key: &[u8], stack: &mut crate::aead::secret::SetupStack) -> Option<Self> {
        match avx::Key::new(key, stack) {
            Some(k) => Some(Self::Avx(k)),
            None => sse::Key::new(key, stack).map(Self::Sse),
        }
    }

    pub(crate) fn seal(
        &self,
        nonce: &[u8; crate::aead::NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; crate::aead::TAG_LEN] {
        match self {
            Self::Avx(k) => k.seal(nonce, aad, src, buf),
            Self::Sse(k) => k.seal(nonce, aad, src, buf),
        }
    }

    pub(crate) fn open(
        &self,
        nonce: &[u8; crate::aead::NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; crate::aead::TAG_LEN],
    ) -> Result<(), crate::aead::OpenError> {
        match self {
            Self::Avx(k) => k.open(nonce, aad, buf, tag),
            Self::Sse(k) => k.open(nonce, aad, buf, tag),
        }
    }

    pub(crate) fn seal_with_block(
        &self,
        nonce: &[u8; crate::aead::NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        rk: &super::RoundKeys<NR>,
        at: usize,
    ) -> ([u8; crate::aead::TAG_LEN], [u8; 16]) {
        match self {
            Self::Avx(k) => k.seal_with_block(nonce, aad, buf, rk, at),
            Self::Sse(k) => k.seal_with_block(nonce, aad, buf, rk, at),
        }
    }

    /// Seals from an arbitrary pre-counter block J0 (tests only).
    #[cfg(test)]
    pub(crate) fn seal_with_j0(
        &self,
        j0: &[u8; 16],
        aad: &[u8],
        buf: &mut [u8],
    ) -> [u8; crate::aead::TAG_LEN] {
        match self {
            Self::Avx(k) => k.seal_with_j0(j0, aad, buf),
            Self::Sse(k) => k.seal_with_j0(j0, aad, buf),
        }
    }
}
