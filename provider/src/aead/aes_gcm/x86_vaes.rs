//! AES-GCM on VAES + VPCLMULQDQ with 256-bit AVX2 registers (two blocks per
//! register, eight per batch): AMD Zen 3+, Intel Ice Lake+. The stitched
//! kernel is in `x86_64.rs`; this file supplies the ymm lane type.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::x86_64::{self, KeyData, Lanes};
use crate::aead::{OpenError, NONCE_LEN, TAG_LEN};
use crate::cpu::Features;

/// An AES-GCM key on this backend; `NR` is the number of AES rounds.
pub(crate) struct Key<const NR: usize>(Box<KeyData>);

impl<const NR: usize> Key<NR> {
    /// `None` unless this CPU has VAES, VPCLMULQDQ and AVX2 (and AES-NI).
    pub(crate) fn new(key: &[u8]) -> Option<Self> {
        if !Features::get().vaes_clmul256 {
            return None;
        }
        // SAFETY: AES-NI, PCLMULQDQ and SSSE3 are implied by the detection above.
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
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")]
unsafe fn seal_with_j0<const NR: usize>(
    key: &KeyData,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    x86_64::seal_with_j0::<__m256i, NR>(key, j0, aad, buf)
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")]
unsafe fn seal<const NR: usize>(
    key: &KeyData,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    x86_64::seal::<__m256i, NR>(key, nonce, aad, src, buf)
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")]
unsafe fn open<const NR: usize>(
    key: &KeyData,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> bool {
    x86_64::open::<__m256i, NR>(key, nonce, aad, buf, tag)
}

/// Two blocks per ymm register (lane 0 is the earlier block).
unsafe impl Lanes for __m256i {
    const BLOCKS: usize = 2;
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        _mm256_loadu_si256(p.cast())
    }
    #[inline(always)]
    unsafe fn storeu(self, p: *mut u8) {
        _mm256_storeu_si256(p.cast(), self)
    }
    #[inline(always)]
    unsafe fn broadcast(p: *const u8) -> Self {
        _mm256_broadcastsi128_si256(_mm_loadu_si128(p.cast()))
    }
    #[inline(always)]
    unsafe fn from_first(x: __m128i) -> Self {
        _mm256_set_m128i(_mm_setzero_si128(), x)
    }
    #[inline(always)]
    unsafe fn counters(x: __m128i) -> Self {
        _mm256_set_m128i(_mm_add_epi32(x, _mm_set_epi32(0, 0, 0, 1)), x)
    }
    #[inline(always)]
    unsafe fn add_ctr(self, k: i32) -> Self {
        _mm256_add_epi32(self, _mm256_set_epi32(0, 0, 0, k, 0, 0, 0, k))
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        _mm256_xor_si256(self, b)
    }
    #[inline(always)]
    unsafe fn aesenc(self, k: Self) -> Self {
        _mm256_aesenc_epi128(self, k)
    }
    #[inline(always)]
    unsafe fn aesenclast(self, k: Self) -> Self {
        _mm256_aesenclast_epi128(self, k)
    }
    #[inline(always)]
    unsafe fn clmul_lo(self, b: Self) -> Self {
        _mm256_clmulepi64_epi128(self, b, 0x00)
    }
    #[inline(always)]
    unsafe fn clmul_hi(self, b: Self) -> Self {
        _mm256_clmulepi64_epi128(self, b, 0x11)
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        let mask = _mm256_broadcastsi128_si256(_mm_set_epi8(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        ));
        _mm256_shuffle_epi8(self, mask)
    }
    #[inline(always)]
    unsafe fn swap_halves(self) -> Self {
        _mm256_shuffle_epi32(self, 0x4e)
    }
    #[inline(always)]
    unsafe fn fold(self) -> __m128i {
        _mm_xor_si128(
            _mm256_castsi256_si128(self),
            _mm256_extracti128_si256(self, 1),
        )
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        _mm256_setzero_si256()
    }
}
