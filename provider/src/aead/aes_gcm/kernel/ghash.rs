//! GHASH arithmetic: Karatsuba products accumulated unreduced, one
//! reduction (two carry-less multiplies) per batch, byte-reflected blocks.

use super::super::arch::{self, Block};

use super::key::KeyData;
use super::lanes::Lanes;
use super::partial::load_partial;

/// x⁶³ + x⁶² + x⁵⁷ in the high qword: the reflected GCM polynomial's tail.
#[inline(always)]
pub(super) fn gfpoly() -> Block {
    arch::from_u128(0xc200_0000_0000_0000_0000_0000_0000_0001)
}

/// Reduces the 256-bit product `hi·x¹²⁸ + mi·x⁶⁴ + lo` to 128 bits.
#[inline(always)]
pub(super) unsafe fn reduce(lo: Block, mi: Block, hi: Block) -> Block {
    // SAFETY: register-only intrinsics; the CPU has the block features (module contract).
    unsafe {
        let poly = gfpoly();
        let t0 = poly.clmul_hi_lo(lo);
        let mi = mi.xor(lo.swap_halves()).xor(t0);
        let t1 = poly.clmul_hi_lo(mi);
        hi.xor(mi.swap_halves()).xor(t1)
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
    pub(super) unsafe fn finish_with(self, other: Acc<Block>) -> Block {
        debug_assert!(!self.schoolbook && !other.schoolbook, "Karatsuba products");
        // SAFETY: the CPU has `V`'s features (module contract); register-only.
        unsafe {
            Acc {
                lo: self.lo.fold().xor(other.lo),
                mi: self.mi.fold().xor(other.mi),
                hi: self.hi.fold().xor(other.hi),
                schoolbook: false,
            }
            .finish()
        }
    }

    /// Folds lanes and reduces.
    #[inline(always)]
    pub(super) unsafe fn finish(self) -> Block {
        // SAFETY: the CPU has the block features and `V`'s features (module contract); register-only.
        unsafe {
            let (lo, mi, hi) = (self.lo.fold(), self.mi.fold(), self.hi.fold());
            if self.schoolbook {
                reduce(lo, mi, hi)
            } else {
                reduce(lo, mi.xor(lo.xor(hi)), hi)
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
pub(super) unsafe fn gf_mul(a: Block, b: Block) -> Block {
    // SAFETY: register-only intrinsics; the CPU has the block features (module contract).
    unsafe {
        let lo = a.clmul_lo(b);
        let hi = a.clmul_hi(b);
        let mi = a.clmul_hi_lo(b).xor(a.clmul_lo_hi(b));
        reduce(lo, mi, hi)
    }
}

/// GHASH of byte-reflected blocks, one reduction per `P` blocks:
/// `(acc ⊕ b₀)·Hᵐ ⊕ b₁·Hᵐ⁻¹ ⊕ … ⊕ bₘ₋₁·H` for each run of `m ≤ P`.
#[inline(always)]
pub(super) unsafe fn ghash_blocks<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    mut acc: Block,
    blocks: &[Block],
) -> Block {
    // SAFETY: the CPU has the block features (module contract); `power(m - i)` with `1 <= m - i <= P`.
    unsafe {
        for run in blocks.chunks(P) {
            let m = run.len();
            let mut sum = Acc::<Block>::new();
            for (i, &b) in run.iter().enumerate() {
                let d = if i == 0 { b.xor(acc) } else { b };
                let (h, hx) = key.power::<Block>(m - i);
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
    mut acc: Block,
    data: &[u8],
) -> Block {
    // SAFETY: the CPU has the block features (module contract); `load_partial` bounds its own
    // loads.
    unsafe {
        for chunk in data.chunks(16 * 16) {
            let mut blocks = [arch::zero(); 16];
            let n = chunk.len().div_ceil(16);
            for (b, bytes) in blocks.iter_mut().zip(chunk.chunks(16)) {
                *b = load_partial(bytes).bswap();
            }
            acc = ghash_blocks(key, acc, &blocks[..n]);
        }
        acc
    }
}

/// The GHASH length block, byte-reflected.
#[inline(always)]
pub(super) fn lengths_block(aad_len: usize, text_len: usize) -> Block {
    arch::from_u128((u128::from(aad_len as u64 * 8) << 64) | u128::from(text_len as u64 * 8))
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
    acc: Block,
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
