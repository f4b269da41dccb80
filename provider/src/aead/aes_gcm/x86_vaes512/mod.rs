//! AES-GCM on VAES + VPCLMULQDQ with 512-bit AVX-512 registers (four blocks
//! per register, thirty-two per batch): AMD Zen 4+, Intel Ice Lake+ server.
//! Same stitched kernel as the ymm engine (`kernel/`) at half the
//! instructions per byte. Preferred only where AVX-512 is present; CPUs
//! that downclock on 512-bit vectors can pin `X86Vaes` instead.
//!
//! Three builds, three backends: `X86Vaes512` multiplies GHASH schoolbook
//! (four `vpclmulqdq` a register), `X86Vaes512Karatsuba` by Karatsuba
//! (three, with the powers' halves made once per record) in the assembly
//! loop, and `X86Vaes512Hybrid` schoolbook below the lengths where the
//! Karatsuba loop is faster on the CPU, the loop from there
//! ([`hybrid_loops`]). Which is fastest depends on the
//! core's `vpclmulqdq` and `vaesenc` rates; key setup prefers one by the
//! CPU (docs/decisions.md, "GHASH products (zmm)").
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::kernel;
use super::kernel::{BatchKeys, Lanes, Loops};
use crate::aead::Direction;

mod stitched;

/// The backend of schedule `$s`: the zmm lanes with it, one key layout
/// (32 powers, no stored halves) for all three.
macro_rules! zmm_backend {
    ($s:path) => {
        super::super::kernel::backend!(
            features = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,avx512f,avx512bw,avx512vl,vaes,vpclmulqdq",
            lanes = super::Zmm<{ $s }>,
            powers = 32,
            hx = 0,
            detected = vaes_clmul512
        );
    };
}

/// Schoolbook GHASH products.
pub(super) mod schoolbook {
    zmm_backend!(super::SCHOOLBOOK);
}

/// Karatsuba GHASH products.
pub(super) mod karatsuba {
    zmm_backend!(super::KARATSUBA);
}

/// Schoolbook products below the Karatsuba loop's lengths, the loop from
/// them.
pub(super) mod hybrid {
    zmm_backend!(super::HYBRID);
}

/// The GHASH schedules, `Zmm`'s parameter.
const SCHOOLBOOK: u8 = 0;
const KARATSUBA: u8 = 1;
const HYBRID: u8 = 2;

/// Where the hybrid schedule's keys of `nr` rounds take the Karatsuba loop,
/// on a core whose `vpclmulqdq` zmm issues at half `vaesenc`'s rate
/// (`half_rate`: AMD Zen 4 and 5) or at its rate (Intel). On Intel,
/// `vaesenc` and `vpclmulqdq` zmm issue on one port each and the loop,
/// which loads each vector once, opens faster from 1 KiB and seals
/// AES-256 from 1.5 KiB and AES-128 from 3 KiB; on Zen 4 the loop seals
/// AES-128 faster from 3 KiB and AES-256 from 2 KiB, opens AES-256 from
/// 2 KiB and AES-128 from 4 KiB (docs/decisions.md, "GHASH products
/// (zmm)").
#[inline(always)]
pub(crate) fn hybrid_loops(nr: usize, half_rate: bool) -> Loops {
    match (half_rate, nr) {
        (true, 10) => Loops {
            seal: 3072,
            open: 4096,
        },
        (true, _) => Loops {
            seal: 2048,
            open: 2048,
        },
        (false, 10) => Loops {
            seal: 3072,
            open: 1024,
        },
        (false, _) => Loops {
            seal: 1536,
            open: 1024,
        },
    }
}

/// Four blocks per zmm register (lane 0 is the earliest block), GHASH
/// products by schedule `S` (`SCHOOLBOOK`, `KARATSUBA` or `HYBRID`).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Zmm<const S: u8>(__m512i);

// SAFETY: every method uses AVX-512F/BW/VL, VAES or VPCLMULQDQ instructions (this backend's
// features) on four blocks per zmm; the pointer methods access exactly 64 (`loadu`,
// `storeu`) or 16 (`broadcast`) bytes, and `batches` what `Lanes::batches` allows.
unsafe impl<const S: u8> Lanes for Zmm<S> {
    const BLOCKS: usize = 4;
    type KeyAlign = kernel::Align64;
    const REGS: usize = 8;
    const KEEP_LAST: bool = S != SCHOOLBOOK;
    const HOIST_SEAL_FROM: usize = usize::MAX;
    // With 32 registers nothing secret spills at opt-level 3; at 2 the
    // round-0 states do (docs/decisions.md, "AES-GCM scrub where nothing
    // spills").
    #[inline(always)]
    fn batches_spill(_: usize, _: Direction) -> bool {
        !cfg!(fusion_opt3)
    }
    const KARATSUBA: bool = S == KARATSUBA;
    // The assembly loop hashes with halves made per record: from the first
    // record it runs on (docs/decisions.md, "The zmm batch loop"); the
    // hybrid schedule from where it beats the schoolbook kernel, which
    // depends on the CPU (`hybrid_loops`): these are the least lengths.
    #[inline(always)]
    fn halves_seal_from(nr: usize) -> usize {
        match S {
            KARATSUBA => 1024,
            HYBRID => hybrid_loops(nr, false).seal,
            _ => usize::MAX,
        }
    }
    #[inline(always)]
    fn halves_open_from(nr: usize) -> usize {
        match S {
            KARATSUBA => 512,
            HYBRID => hybrid_loops(nr, false).open,
            _ => usize::MAX,
        }
    }
    const SPLIT_OPEN: bool = S != SCHOOLBOOK;
    #[inline(always)]
    fn loops_here(nr: usize) -> Loops {
        match S {
            HYBRID => hybrid_loops(nr, crate::cpu::Features::get().clmul512_half_rate),
            _ => Loops {
                seal: Self::halves_seal_from(nr),
                open: Self::halves_open_from(nr),
            },
        }
    }
    const MASKED: bool = true;
    #[inline(always)]
    unsafe fn load_masked(p: *const u8, mask: u64) -> Self {
        // SAFETY: the CPU has AVX-512BW (`Lanes` contract); the masked load reads only the
        // bytes `mask` selects, which the caller guarantees readable, and suppresses faults on
        // the others.
        unsafe { Self(_mm512_maskz_loadu_epi8(mask, p.cast())) }
    }
    #[inline(always)]
    unsafe fn store_masked(self, p: *mut u8, mask: u64) {
        // SAFETY: the CPU has AVX-512BW (`Lanes` contract); the masked store writes only the
        // bytes `mask` selects, which the caller guarantees writable.
        unsafe { _mm512_mask_storeu_epi8(p.cast(), mask, self.0) }
    }
    #[inline(always)]
    unsafe fn keep_masked(self, mask: u64) -> Self {
        // SAFETY: register-only intrinsic; the CPU has AVX-512BW (`Lanes` contract).
        unsafe { Self(_mm512_maskz_mov_epi8(mask, self.0)) }
    }
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        // SAFETY: the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ and `p` is valid for reads of
        // 64 bytes (`Lanes` contract); unaligned loads are allowed.
        unsafe { Self(_mm512_loadu_si512(p.cast())) }
    }
    #[inline(always)]
    unsafe fn storeu(self, p: *mut u8) {
        // SAFETY: the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ and `p` is valid for writes
        // of 64 bytes (`Lanes` contract); unaligned stores are allowed.
        unsafe { _mm512_storeu_si512(p.cast(), self.0) }
    }
    #[inline(always)]
    unsafe fn broadcast(p: *const u8) -> Self {
        // SAFETY: the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ and `p` is valid for reads of
        // 16 bytes (`Lanes` contract); unaligned loads are allowed.
        unsafe { Self(_mm512_broadcast_i32x4(_mm_loadu_si128(p.cast()))) }
    }
    #[inline(always)]
    unsafe fn from_first(x: __m128i) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_inserti32x4::<0>(_mm512_setzero_si512(), x)) }
    }
    #[inline(always)]
    unsafe fn counters(x: __m128i) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe {
            let steps = _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0);
            Self(_mm512_add_epi32(_mm512_broadcast_i32x4(x), steps))
        }
    }
    #[inline(always)]
    unsafe fn add_ctr(self, k: i32) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_add_epi32(self.0, _mm512_set4_epi32(0, 0, 0, k))) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_xor_si512(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn aesenc(self, k: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_aesenc_epi128(self.0, k.0)) }
    }
    #[inline(always)]
    unsafe fn aesenclast(self, k: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_aesenclast_epi128(self.0, k.0)) }
    }
    #[inline(always)]
    unsafe fn clmul_lo(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_clmulepi64_epi128(self.0, b.0, 0x00)) }
    }
    #[inline(always)]
    unsafe fn clmul_hi(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_clmulepi64_epi128(self.0, b.0, 0x11)) }
    }
    #[inline(always)]
    unsafe fn clmul_lo_hi(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_clmulepi64_epi128(self.0, b.0, 0x10)) }
    }
    #[inline(always)]
    unsafe fn clmul_hi_lo(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_clmulepi64_epi128(self.0, b.0, 0x01)) }
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe {
            let mask = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            Self(_mm512_shuffle_epi8(self.0, _mm512_broadcast_i32x4(mask)))
        }
    }
    #[inline(always)]
    unsafe fn swap_halves(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_shuffle_epi32::<0x4e>(self.0)) }
    }
    #[inline(always)]
    unsafe fn fold(self) -> __m128i {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe {
            let y = _mm256_xor_si256(
                _mm512_castsi512_si256(self.0),
                _mm512_extracti64x4_epi64::<1>(self.0),
            );
            _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y))
        }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ
        // (`Lanes` contract).
        unsafe { Self(_mm512_setzero_si512()) }
    }
    /// The Karatsuba and hybrid schedules' batches run the assembly loop.
    #[inline(always)]
    unsafe fn batches<const NR: usize, const OPEN: bool>(
        keys: BatchKeys,
        ctr: &mut Self,
        acc: &mut __m128i,
        input: *const u8,
        output: *mut u8,
        n: usize,
        keep: *mut u8,
    ) -> bool {
        if S == SCHOOLBOOK {
            return false;
        }
        // SAFETY: the CPU has this backend's features, `keys`, the buffers and a seal's `keep`
        // are valid as `Lanes::batches` requires (`KEEP_LAST`), which is what
        // `stitched::batches` requires (`n >= 1` included).
        unsafe { stitched::batches::<NR, OPEN>(keys, &mut ctr.0, acc, input, output, n, keep) };
        true
    }
}
