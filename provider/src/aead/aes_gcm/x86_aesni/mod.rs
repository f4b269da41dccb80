//! AES-GCM on AES-NI + PCLMULQDQ (xmm, one block per register): for
//! x86-64 CPUs without VAES. The stitched kernel is in `kernel/`.
//!
//! Two builds of it: with AVX (VEX-encoded three-operand instructions,
//! fewer register copies; every such CPU since Sandy Bridge and Bulldozer)
//! and without (SSE only: Westmere, Silvermont-class Atoms). Key setup
//! (`AesGcm::new`) picks one; each is its own `AesGcm` variant. The AVX
//! build's lane type, [`Vex`], runs full batches in an assembly loop
//! (`stitched.rs`).
#![allow(unsafe_code)]

use core::arch::x86_64::__m128i;

use super::kernel;
use super::kernel::{BatchKeys, Lanes};
use crate::aead::Direction;

mod stitched;

pub(super) mod avx {
    super::super::kernel::backend!(
        features = "aes,pclmulqdq,ssse3,sse4.1,avx",
        lanes = super::Vex,
        powers = 8,
        hx = 8,
        detected = aes_clmul_avx
    );
}

pub(super) mod sse {
    use core::arch::x86_64::__m128i;

    super::super::kernel::backend!(
        features = "aes,pclmulqdq,ssse3,sse4.1",
        lanes = __m128i,
        powers = 8,
        hx = 8,
        detected = aes_clmul
    );
}

/// One block per xmm register on a CPU with AVX: the block lane type
/// (`__m128i`, whose methods it runs) plus the assembly batch loop, which
/// is VEX-encoded and so not for the SSE build.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Vex(__m128i);

// SAFETY: every method is the `__m128i` lane method of the same name (one or two
// SSE2/SSSE3/AES-NI/PCLMULQDQ instructions on one block, pointer methods on exactly 16 bytes),
// whose contract this backend's features meet; `batches` accesses what `Lanes::batches`
// allows, with AVX, which this backend's features include.
unsafe impl Lanes for Vex {
    const BLOCKS: usize = 1;
    type KeyAlign = kernel::Align16;
    const REGS: usize = 8;
    const HOIST_SEAL_FROM: usize = usize::MAX;
    // The assembly loop reads halves made per record (`Lanes::batches`):
    // AES-256 seals from 1 KiB and opens from 512 B, AES-128 records from
    // their second (seal) or first (open) whole batch, where the compiled
    // batch spilled AES states (docs/decisions.md, "The xmm batch loop").
    #[inline(always)]
    fn halves_seal_from(nr: usize) -> usize {
        if nr == 10 {
            256
        } else {
            1024
        }
    }
    #[inline(always)]
    fn halves_open_from(nr: usize) -> usize {
        if nr == 10 {
            128
        } else {
            512
        }
    }
    const FUSE_LAST: bool = true;
    // Records spill nothing at opt-level 3: AES-128 seals from their
    // second batch and opens from their first run them in the assembly loop
    // (`halves_seal_from`, `halves_open_from`), whose intrinsics form
    // spilled AES states (docs/decisions.md, "AES-GCM scrub where nothing
    // spills").
    #[inline(always)]
    fn batches_spill(_: usize, _: Direction) -> bool {
        !cfg!(fusion_opt3)
    }
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        // SAFETY: the `__m128i` method's contract is this one's.
        unsafe { Self(__m128i::loadu(p)) }
    }
    #[inline(always)]
    unsafe fn storeu(self, p: *mut u8) {
        // SAFETY: as `loadu`.
        unsafe { self.0.storeu(p) }
    }
    #[inline(always)]
    unsafe fn broadcast(p: *const u8) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(__m128i::broadcast(p)) }
    }
    #[inline(always)]
    unsafe fn from_first(x: __m128i) -> Self {
        Self(x)
    }
    #[inline(always)]
    unsafe fn counters(x: __m128i) -> Self {
        Self(x)
    }
    #[inline(always)]
    unsafe fn add_ctr(self, k: i32) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.add_ctr(k)) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.xor(b.0)) }
    }
    #[inline(always)]
    unsafe fn aesenc(self, k: Self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.aesenc(k.0)) }
    }
    #[inline(always)]
    unsafe fn aesenclast(self, k: Self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.aesenclast(k.0)) }
    }
    #[inline(always)]
    unsafe fn clmul_lo(self, b: Self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.clmul_lo(b.0)) }
    }
    #[inline(always)]
    unsafe fn clmul_hi(self, b: Self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.clmul_hi(b.0)) }
    }
    #[inline(always)]
    unsafe fn clmul_lo_hi(self, b: Self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.clmul_lo_hi(b.0)) }
    }
    #[inline(always)]
    unsafe fn clmul_hi_lo(self, b: Self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.clmul_hi_lo(b.0)) }
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.bswap()) }
    }
    #[inline(always)]
    unsafe fn swap_halves(self) -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(self.0.swap_halves()) }
    }
    #[inline(always)]
    unsafe fn fold(self) -> __m128i {
        self.0
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: as `loadu`.
        unsafe { Self(__m128i::zero()) }
    }
    /// Full batches run the assembly loop (docs/decisions.md, "The xmm
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
        // SAFETY: the CPU has this backend's features (AVX included), `keys` and the buffers
        // are valid as `Lanes::batches` requires, which is what `stitched::batches` requires
        // (`n >= 1` included).
        unsafe { stitched::batches::<NR, OPEN>(keys, &mut ctr.0, acc, input, output, n) };
        true
    }
}
