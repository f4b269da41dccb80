//! AES-GCM on VAES + VPCLMULQDQ with 256-bit AVX2 registers (two blocks per
//! register, sixteen per batch): AMD Zen 3+, Intel Ice Lake+. The stitched
//! kernel is in `kernel/`; this file supplies the ymm lane type, whose
//! seals of 1.5 KiB to 4 KiB, AES-256 opens from 768 B and AES-128 opens from
//! 256 B run their full batches in an assembly loop (`stitched.rs`).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::kernel;
use super::kernel::{BatchKeys, Lanes};
use crate::aead::Direction;

mod stitched;

super::kernel::backend!(
    features = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq",
    lanes = __m256i,
    powers = 16,
    hx = 0,
    detected = vaes_clmul256
);

/// Two blocks per ymm register (lane 0 is the earlier block).
// SAFETY: every method uses AVX2, VAES or VPCLMULQDQ instructions (this backend's features) on
// two blocks per ymm, or none (`fence`); the pointer methods access exactly 32 (`loadu`, `storeu`) or 16
// (`broadcast`) bytes, and `batches` what `Lanes::batches` allows.
unsafe impl Lanes for __m256i {
    const BLOCKS: usize = 2;
    type KeyAlign = kernel::Align32;
    const REGS: usize = 8;
    const HOIST_SEAL_FROM: usize = 4096;
    // The assembly loop reads halves made per record (`Lanes::batches`):
    // seals from 1.5 KiB to `HOIST_SEAL_FROM`, AES-256 opens from 768 B
    // (from 256 B they measured slower), AES-128 opens from their first
    // whole batch (docs/decisions.md, "The ymm batch loop", "AES passes
    // round by round").
    #[inline(always)]
    fn halves_seal_from(_: usize) -> usize {
        1536
    }
    #[inline(always)]
    fn halves_open_from(nr: usize) -> usize {
        if nr == 10 {
            256
        } else {
            768
        }
    }
    const FUSE_LAST: bool = true;
    // Records spill nothing at opt-level 3, their tails fenced round by
    // round (`Lanes::fence`; docs/decisions.md, "AES-GCM scrub where nothing
    // spills", "AES passes round by round").
    #[inline(always)]
    fn batches_spill(_: usize, _: Direction) -> bool {
        !cfg!(fusion_opt3)
    }
    #[inline(always)]
    unsafe fn fence(self) -> Self {
        // SAFETY: `fence_ymm` needs AVX, which this backend's features include (`Lanes`
        // contract).
        unsafe { fence_ymm(self) }
    }
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        // SAFETY: the CPU has AVX2, VAES and VPCLMULQDQ and `p` is valid for reads of 32 bytes
        // (`Lanes` contract); unaligned loads are allowed.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn storeu(self, p: *mut u8) {
        // SAFETY: the CPU has AVX2, VAES and VPCLMULQDQ and `p` is valid for writes of 32 bytes
        // (`Lanes` contract); unaligned stores are allowed.
        unsafe { _mm256_storeu_si256(p.cast(), self) }
    }
    #[inline(always)]
    unsafe fn broadcast(p: *const u8) -> Self {
        // SAFETY: the CPU has AVX2, VAES and VPCLMULQDQ and `p` is valid for reads of 16 bytes
        // (`Lanes` contract); unaligned loads are allowed.
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(p.cast())) }
    }
    #[inline(always)]
    unsafe fn from_first(x: __m128i) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_set_m128i(_mm_setzero_si128(), x) }
    }
    #[inline(always)]
    unsafe fn counters(x: __m128i) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_set_m128i(_mm_add_epi32(x, _mm_set_epi32(0, 0, 0, 1)), x) }
    }
    #[inline(always)]
    unsafe fn add_ctr(self, k: i32) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_add_epi32(self, _mm256_set_epi32(0, 0, 0, k, 0, 0, 0, k)) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_xor_si256(self, b) }
    }
    #[inline(always)]
    unsafe fn aesenc(self, k: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_aesenc_epi128(self, k) }
    }
    #[inline(always)]
    unsafe fn aesenclast(self, k: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_aesenclast_epi128(self, k) }
    }
    #[inline(always)]
    unsafe fn clmul_lo(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_clmulepi64_epi128(self, b, 0x00) }
    }
    #[inline(always)]
    unsafe fn clmul_hi(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_clmulepi64_epi128(self, b, 0x11) }
    }
    #[inline(always)]
    unsafe fn clmul_lo_hi(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_clmulepi64_epi128(self, b, 0x10) }
    }
    #[inline(always)]
    unsafe fn clmul_hi_lo(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_clmulepi64_epi128(self, b, 0x01) }
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe {
            let mask = _mm256_broadcastsi128_si256(_mm_set_epi8(
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            ));
            _mm256_shuffle_epi8(self, mask)
        }
    }
    #[inline(always)]
    unsafe fn swap_halves(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_shuffle_epi32(self, 0x4e) }
    }
    #[inline(always)]
    unsafe fn fold(self) -> __m128i {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe {
            _mm_xor_si128(
                _mm256_castsi256_si128(self),
                _mm256_extracti128_si256(self, 1),
            )
        }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2, VAES and VPCLMULQDQ (`Lanes`
        // contract).
        unsafe { _mm256_setzero_si256() }
    }
    /// Full batches run the assembly loop (docs/decisions.md, "The ymm
    /// batch loop").
    #[inline(always)]
    unsafe fn batches<const NR: usize, const OPEN: bool>(
        keys: BatchKeys,
        ctr: &mut Self,
        acc: &mut __m128i,
        input: *const u8,
        output: *mut u8,
        n: usize,
        _keep: *mut u8,
    ) -> bool {
        // SAFETY: the CPU has this backend's features, `keys` and the buffers are valid as
        // `Lanes::batches` requires, which is what `stitched::batches` requires (`n >= 1`
        // included).
        unsafe { stitched::batches::<NR, OPEN>(keys, ctr, acc, input, output, n) };
        true
    }
}

/// [`Lanes::fence`] on a ymm register. A plain `#[inline]` like the
/// intrinsics (`#[inline(always)]` cannot carry target features): inlined
/// into every caller, which has AVX.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn fence_ymm(mut x: __m256i) -> __m256i {
    // SAFETY: an empty statement on one ymm register: no instruction, memory, stack or flags.
    unsafe {
        core::arch::asm!("/* {0} */", inout(ymm_reg) x, options(nomem, nostack, preserves_flags))
    };
    x
}
