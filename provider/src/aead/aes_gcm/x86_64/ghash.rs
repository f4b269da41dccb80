//! GHASH arithmetic: Karatsuba products accumulated unreduced, one
//! reduction (two carry-less multiplies) per batch, byte-reflected blocks.

use core::arch::x86_64::*;

use super::key::KeyData;
use super::lanes::{bswap128, Lanes};
use super::partial::load_partial;

/// x⁶³ + x⁶² + x⁵⁷ in the high qword: the reflected GCM polynomial's tail.
#[inline(always)]
pub(super) unsafe fn gfpoly() -> __m128i {
    // SAFETY: register-only intrinsic (SSE2, baseline).
    unsafe { _mm_set_epi64x(0xc200_0000_0000_0000u64 as i64, 1) }
}

/// Reduces the 256-bit product `hi·x¹²⁸ + mi·x⁶⁴ + lo` to 128 bits.
#[inline(always)]
pub(super) unsafe fn reduce(lo: __m128i, mi: __m128i, hi: __m128i) -> __m128i {
    // SAFETY: register-only intrinsics; the CPU has PCLMULQDQ (module contract).
    unsafe {
        let poly = gfpoly();
        let t0 = _mm_clmulepi64_si128(poly, lo, 0x01);
        let mi = _mm_xor_si128(_mm_xor_si128(mi, _mm_shuffle_epi32(lo, 0x4e)), t0);
        let t1 = _mm_clmulepi64_si128(poly, mi, 0x01);
        _mm_xor_si128(_mm_xor_si128(hi, _mm_shuffle_epi32(mi, 0x4e)), t1)
    }
}

/// Unreduced Karatsuba products, accumulated over several blocks.
#[derive(Clone, Copy)]
pub(super) struct Acc<V> {
    lo: V,
    mi: V,
    hi: V,
    /// Schoolbook products (`mi` is the middle term itself) rather than
    /// Karatsuba's (`mi` still holds `lo ^ hi`): constant after inlining.
    schoolbook: bool,
}

impl<V: Lanes> Acc<V> {
    /// Karatsuba products.
    #[inline(always)]
    pub(super) unsafe fn new() -> Self {
        // SAFETY: the CPU has `V`'s features (module contract); no memory access.
        unsafe {
            Self {
                lo: V::zero(),
                mi: V::zero(),
                hi: V::zero(),
                schoolbook: false,
            }
        }
    }

    /// For a batch of `regs` registers: schoolbook in the full batches of
    /// a lane type that is not `KARATSUBA`, where the caller allows it
    /// (docs/decisions.md, "GHASH products"); Karatsuba elsewhere.
    #[inline(always)]
    pub(super) unsafe fn for_batch(regs: usize, allow: bool) -> Self {
        // SAFETY: as `new`.
        unsafe {
            Self {
                schoolbook: allow && !V::KARATSUBA && regs == V::REGS,
                ..Self::new()
            }
        }
    }

    /// Adds `d · h` (`hx`: h's halves XOR-ed).
    #[inline(always)]
    pub(super) unsafe fn mul_add(&mut self, d: V, h: V, hx: V) {
        // SAFETY: the CPU has `V`'s features (module contract); register-only `Lanes` methods.
        unsafe {
            self.lo = self.lo.xor(d.clmul_lo(h));
            self.hi = self.hi.xor(d.clmul_hi(h));
            if self.schoolbook {
                self.mi = self.mi.xor(d.clmul_lo_hi(h)).xor(d.clmul_hi_lo(h));
            } else {
                self.mi = self.mi.xor(d.xor(d.swap_halves()).clmul_lo(hx));
            }
        }
    }

    /// Folds lanes, adds `other`'s products and reduces ([`Self::finish`]):
    /// one reduction for products made on two widths (both Karatsuba).
    #[inline(always)]
    pub(super) unsafe fn finish_with(self, other: Acc<__m128i>) -> __m128i {
        debug_assert!(!self.schoolbook && !other.schoolbook, "Karatsuba products");
        // SAFETY: the CPU has `V`'s features (module contract); register-only.
        unsafe {
            Acc {
                lo: _mm_xor_si128(self.lo.fold(), other.lo),
                mi: _mm_xor_si128(self.mi.fold(), other.mi),
                hi: _mm_xor_si128(self.hi.fold(), other.hi),
                schoolbook: false,
            }
            .finish()
        }
    }

    /// Folds lanes and reduces.
    #[inline(always)]
    pub(super) unsafe fn finish(self) -> __m128i {
        // SAFETY: the CPU has PCLMULQDQ and `V`'s features (module contract); register-only.
        unsafe {
            let (lo, mi, hi) = (self.lo.fold(), self.mi.fold(), self.hi.fold());
            if self.schoolbook {
                reduce(lo, mi, hi)
            } else {
                reduce(lo, _mm_xor_si128(mi, _mm_xor_si128(lo, hi)), hi)
            }
        }
    }
}

/// `a · b` in GF(2¹²⁸) in every lane (twisted operands, as [`gf_mul`]).
#[inline(always)]
pub(super) unsafe fn mul_lanes<V: Lanes>(a: V, b: V) -> V {
    /// [`gfpoly`] as bytes, for a broadcast.
    const POLY: [u8; 16] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc2];
    // SAFETY: register-only `Lanes` methods, and a 16-byte broadcast of `POLY`; the CPU has
    // `V`'s features (caller's contract).
    unsafe {
        let lo = a.clmul_lo(b);
        let hi = a.clmul_hi(b);
        let mi = a.clmul_lo_hi(b).xor(a.clmul_hi_lo(b));
        // The reduction of `reduce`, lane by lane.
        let poly = V::broadcast(POLY.as_ptr());
        let mi = mi.xor(lo.swap_halves()).xor(poly.clmul_hi_lo(lo));
        hi.xor(mi.swap_halves()).xor(poly.clmul_hi_lo(mi))
    }
}

/// One full multiplication in GF(2¹²⁸) (twisted operand `b`).
#[inline(always)]
pub(super) unsafe fn gf_mul(a: __m128i, b: __m128i) -> __m128i {
    // SAFETY: register-only intrinsics; the CPU has PCLMULQDQ (module contract).
    unsafe {
        let lo = _mm_clmulepi64_si128(a, b, 0x00);
        let hi = _mm_clmulepi64_si128(a, b, 0x11);
        let mi = _mm_xor_si128(
            _mm_clmulepi64_si128(a, b, 0x01),
            _mm_clmulepi64_si128(a, b, 0x10),
        );
        reduce(lo, mi, hi)
    }
}

/// GHASH of byte-reflected blocks, one reduction per `P` blocks:
/// `(acc ⊕ b₀)·Hᵐ ⊕ b₁·Hᵐ⁻¹ ⊕ … ⊕ bₘ₋₁·H` for each run of `m ≤ P`.
#[inline(always)]
pub(super) unsafe fn ghash_blocks<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    mut acc: __m128i,
    blocks: &[__m128i],
) -> __m128i {
    // SAFETY: the CPU has PCLMULQDQ (module contract); `power(m - i)` with `1 <= m - i <= P`.
    unsafe {
        for run in blocks.chunks(P) {
            let m = run.len();
            let mut sum = Acc::<__m128i>::new();
            for (i, &b) in run.iter().enumerate() {
                let d = if i == 0 { _mm_xor_si128(b, acc) } else { b };
                let (h, hx) = key.power::<__m128i>(m - i);
                sum.mul_add(d, h, hx);
            }
            acc = sum.finish();
        }
        acc
    }
}

/// GHASH of arbitrary bytes (zero-padded to whole blocks).
#[inline(always)]
pub(super) unsafe fn ghash_bytes<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    mut acc: __m128i,
    data: &[u8],
) -> __m128i {
    // SAFETY: the CPU has PCLMULQDQ and SSSE3 (module contract); `load_partial` bounds its own
    // loads.
    unsafe {
        for chunk in data.chunks(16 * 16) {
            let mut blocks = [_mm_setzero_si128(); 16];
            let n = chunk.len().div_ceil(16);
            for (b, bytes) in blocks.iter_mut().zip(chunk.chunks(16)) {
                *b = bswap128(load_partial(bytes));
            }
            acc = ghash_blocks(key, acc, &blocks[..n]);
        }
        acc
    }
}

/// The GHASH length block, byte-reflected.
#[inline(always)]
pub(super) unsafe fn lengths_block(aad_len: usize, text_len: usize) -> __m128i {
    // SAFETY: register-only intrinsic (SSE2, baseline).
    unsafe { _mm_set_epi64x((aad_len as u64 * 8) as i64, (text_len as u64 * 8) as i64) }
}

/// One GHASH step of a batch of `regs` registers at `h`: register `j`
/// (with `acc` folded into the first block) times its key powers.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `h` is valid for reads of
/// `regs * V::BLOCKS * 16` bytes and `j < regs`.
#[inline(always)]
pub(super) unsafe fn ghash_step<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    sum: &mut Acc<V>,
    h: *const u8,
    j: usize,
    regs: usize,
    acc: __m128i,
    halves: Option<*const V>,
) {
    // SAFETY: `h` is valid for `regs * V::BLOCKS * 16` bytes and `j < regs` (this fn's
    // contract), so the load at `j * V::BLOCKS * 16` is in bounds; `power` asserts its
    // exponent, `(regs - j) * V::BLOCKS <= V::BATCH <= P`.
    unsafe {
        let mut d = V::loadu(h.add(j * V::BLOCKS * 16)).bswap();
        if j == 0 {
            d = d.xor(V::from_first(acc));
        }
        let (p, px) = key.power::<V>((regs - j) * V::BLOCKS);
        let px = match halves {
            Some(hx) => hx.add(j).read(),
            None => px,
        };
        sum.mul_add(d, p, px);
    }
}
