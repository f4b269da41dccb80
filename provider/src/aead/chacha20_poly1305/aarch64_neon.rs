//! ChaCha20-Poly1305 on aarch64's NEON. The engine is `kernel/`'s over
//! [`Neon2`]: each state word of 8 blocks in a pair of 128-bit registers
//! (8 blocks per vertical pass, two blocks per horizontal row), so a
//! double round has eight independent quarter-round chains where one
//! register's four have too few to cover NEON's 2–3-cycle latencies
//! (docs/decisions.md, "ChaCha20 on NEON"); 2-block calls (records up to
//! 64 bytes) run on single registers (`uint32x4_t`). Rotations by 16 with
//! `rev32`, by 8 with `tbl`, by 12 and 7 with a shift and a
//! shift-right-insert.
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use super::arch::Row;
use super::kernel::{Lanes, Schedule};

super::kernel::backend!(
    features = "neon",
    lanes = Neon2,
    detected = neon,
    ifma = false,
    scrub_small = 0,
    scrub_blocks = crate::aead::secret::CHACHA20_BLOCKS_NEON
);

/// `tbl` indices that rotate each 32-bit word left by 8 bits.
const ROTL8: [u8; 16] = [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14];

// SAFETY: every method uses NEON instructions only, and touches memory only as the trait's
// contract says (slices bounds-checked, pointers within the stated lengths).
unsafe impl Lanes for uint32x4_t {
    /// Blocks per pass as a vertical type of its own (the backend's passes
    /// are `Neon2`'s; this type runs the 2-block calls).
    const N: usize = 4;
    const ROW_BLOCKS: usize = 1;
    const MAX_SETS: usize = 4;
    /// 256 bytes of ciphertext per pass: 8 chain steps, one after each of
    /// the first eight double rounds (as on xmm: the same width).
    const SCHEDULE: Schedule = Schedule {
        after: [0, 0, 0, 0, 0, 0, 0, 1],
        rounds: 8,
        end: 0,
    };
    /// An open's first batch: 448 bytes, 14 steps, two per double round
    /// of the first seven.
    const WIDE_SCHEDULE: Schedule = Schedule {
        after: [0, 0, 0, 1, 0, 0, 0, 1],
        rounds: 7,
        end: 0,
    };
    const TWO_CHAIN_PASSES: bool = false;
    const SMALL_OPEN: usize = super::kernel::SMALL;
    /// Never: every record longer than `SMALL` has a batch.
    const WIDE_TAIL_MIN: usize = usize::MAX;
    const SPLIT_OPEN_TAIL_MAX: usize = 0;
    const SHORT_SPILLS_OVER: usize = usize::MAX;
    type Pair = uint32x4_t;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: register-only intrinsics; the CPU has NEON (`Lanes` contract).
        unsafe { vdupq_n_u32(x) }
    }
    #[inline(always)]
    unsafe fn load_lanes(words: &[u32]) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract); the assert bounds the load to `words`.
        unsafe {
            assert_eq!(words.len(), 4);
            vld1q_u32(words.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn lane_index() -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract); the load reads the 16-byte array.
        unsafe { vld1q_u32([0u32, 1, 2, 3].as_ptr()) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has NEON (`Lanes` contract).
        unsafe { vaddq_u32(self, b) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has NEON (`Lanes` contract).
        unsafe { veorq_u32(self, b) }
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has NEON (`Lanes` contract).
        unsafe { vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(self))) }
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has NEON (`Lanes` contract).
        unsafe { vsriq_n_u32::<20>(vshlq_n_u32::<12>(self), self) }
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract); the index load reads the 16-byte
        // `ROTL8`.
        unsafe {
            vreinterpretq_u32_u8(vqtbl1q_u8(
                vreinterpretq_u8_u32(self),
                vld1q_u8(ROTL8.as_ptr()),
            ))
        }
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has NEON (`Lanes` contract).
        unsafe { vsriq_n_u32::<25>(vshlq_n_u32::<7>(self), self) }
    }
    #[inline(always)]
    unsafe fn shuffle<const IMM: i32>(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has NEON (`Lanes` contract). The rotations
        // are one `ext`; any other `IMM` (constant: the match folds) a `tbl` of its word
        // indices.
        unsafe {
            match IMM {
                0x39 => vextq_u32::<1>(self, self),
                0x4e => vextq_u32::<2>(self, self),
                0x93 => vextq_u32::<3>(self, self),
                _ => {
                    let idx: [u8; 16] = core::array::from_fn(|b| {
                        (((IMM >> (2 * (b / 4))) & 3) * 4) as u8 + (b % 4) as u8
                    });
                    vreinterpretq_u32_u8(vqtbl1q_u8(
                        vreinterpretq_u8_u32(self),
                        vld1q_u8(idx.as_ptr()),
                    ))
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn broadcast_row(r: Row) -> Self {
        r
    }
    #[inline(always)]
    unsafe fn row_counters(self) -> Self {
        self
    }
    #[inline(always)]
    unsafe fn store_rows([a, b, c, d]: [Self; 4], out: *mut u8, blocks: usize) {
        // SAFETY: the CPU has NEON; `out` is valid for writes of `blocks` (at most
        // `ROW_BLOCKS`) × 64 bytes (`Lanes` contract), and only that many blocks are stored.
        unsafe {
            if blocks >= 1 {
                vst1q_u8(out, vreinterpretq_u8_u32(a));
                vst1q_u8(out.add(16), vreinterpretq_u8_u32(b));
                vst1q_u8(out.add(32), vreinterpretq_u8_u32(c));
                vst1q_u8(out.add(48), vreinterpretq_u8_u32(d));
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_vertical(x: &[Self; 16], input: *const u8, output: *mut u8) {
        // SAFETY: the CPU has NEON; `input` and `output` are valid for `N * 64` bytes (`Lanes`
        // contract) and every offset below is a block (< N) × 64 plus a part of it below 64.
        unsafe {
            // 4×4 transpose per group of four words: register j of the result
            // holds words 4·group … 4·group+3 of block j.
            for group in 0..4 {
                let v = &x[group * 4..group * 4 + 4];
                let t0 = vreinterpretq_u64_u32(vzip1q_u32(v[0], v[1]));
                let t1 = vreinterpretq_u64_u32(vzip2q_u32(v[0], v[1]));
                let t2 = vreinterpretq_u64_u32(vzip1q_u32(v[2], v[3]));
                let t3 = vreinterpretq_u64_u32(vzip2q_u32(v[2], v[3]));
                let blocks = [
                    vzip1q_u64(t0, t2),
                    vzip2q_u64(t0, t2),
                    vzip1q_u64(t1, t3),
                    vzip2q_u64(t1, t3),
                ];
                for (block, ks) in blocks.into_iter().enumerate() {
                    let off = block * 64 + group * 16;
                    let data = vld1q_u8(input.add(off));
                    vst1q_u8(output.add(off), veorq_u8(data, vreinterpretq_u8_u64(ks)));
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_bytes(input: *const u8, out: *mut u8, ks: &[u8]) {
        // SAFETY: the CPU has NEON; `input` and `out` are valid for `ks.len()` bytes (`Lanes`
        // contract): the vector loop reads and writes only below `i + 16 <= ks.len()`, the byte
        // loop only below `ks.len()`.
        unsafe {
            let n = ks.len();
            let mut i = 0;
            while i + 16 <= n {
                let k = vld1q_u8(ks.as_ptr().add(i));
                vst1q_u8(out.add(i), veorq_u8(vld1q_u8(input.add(i)), k));
                i += 16;
            }
            while i < n {
                *out.add(i) = *input.add(i) ^ ks[i];
                i += 1;
            }
        }
    }
}

/// Two NEON registers as one lane type: vertical, word `i` of blocks 0–3
/// and of blocks 4–7; horizontal, a row of block 0 and of block 1.
#[derive(Clone, Copy)]
pub(crate) struct Neon2(uint32x4_t, uint32x4_t);

/// Applies a `uint32x4_t` method to both halves.
macro_rules! both {
    ($self:expr, $f:ident $(, $b:expr)?) => {
        Neon2($self.0.$f($($b.0)?), $self.1.$f($($b.1)?))
    };
}

// SAFETY: every method is two calls of `uint32x4_t`'s (NEON only, within that impl's memory
// contract) or NEON loads and stores within the lengths the trait's contract states.
unsafe impl Lanes for Neon2 {
    const N: usize = 8;
    const ROW_BLOCKS: usize = 2;
    /// Three sets hold 24 row registers; four (all 32) spilled rows where
    /// the stack scrub after the call did not reach.
    const MAX_SETS: usize = 3;
    /// 512 bytes of ciphertext per pass: 16 chain steps, two in each of
    /// the first eight double rounds (as on ymm, the same width).
    const SCHEDULE: Schedule = Schedule {
        after: [0, 1, 0, 0, 0, 1, 0, 0],
        rounds: 8,
        end: 0,
    };
    /// An open's first batch: 960 bytes, 30 steps, three per double round.
    const WIDE_SCHEDULE: Schedule = Schedule {
        after: [0, 1, 0, 1, 0, 1, 0, 0],
        rounds: 10,
        end: 0,
    };
    const TWO_CHAIN_PASSES: bool = false;
    const SMALL_OPEN: usize = super::kernel::SMALL;
    /// Never: a tail of up to six blocks takes a horizontal call, of seven
    /// a vertical pass.
    const WIDE_TAIL_MIN: usize = usize::MAX;
    const SPLIT_OPEN_TAIL_MAX: usize = 0;
    /// The 2-block calls (up to 64 bytes) leave nothing on the stack; the
    /// calls of two and three sets of two-block rows spill rows
    /// (`tests/stack_residue/` at opt-levels 3 and 2, under qemu).
    const SHORT_SPILLS_OVER: usize = 64;
    type Pair = uint32x4_t;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { Neon2(vdupq_n_u32(x), vdupq_n_u32(x)) }
    }
    #[inline(always)]
    unsafe fn load_lanes(words: &[u32]) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract); the assert bounds both loads to `words`.
        unsafe {
            assert_eq!(words.len(), 8);
            Neon2(vld1q_u32(words.as_ptr()), vld1q_u32(words.as_ptr().add(4)))
        }
    }
    #[inline(always)]
    unsafe fn lane_index() -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract); each load reads a 16-byte array.
        unsafe {
            Neon2(
                vld1q_u32([0u32, 1, 2, 3].as_ptr()),
                vld1q_u32([4u32, 5, 6, 7].as_ptr()),
            )
        }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { both!(self, add, b) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { both!(self, xor, b) }
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { both!(self, rotl16) }
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { both!(self, rotl12) }
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { both!(self, rotl8) }
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { both!(self, rotl7) }
    }
    #[inline(always)]
    unsafe fn shuffle<const IMM: i32>(self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe { Neon2(self.0.shuffle::<IMM>(), self.1.shuffle::<IMM>()) }
    }
    #[inline(always)]
    unsafe fn broadcast_row(r: Row) -> Self {
        Neon2(r, r)
    }
    #[inline(always)]
    unsafe fn row_counters(self) -> Self {
        // SAFETY: the CPU has NEON (`Lanes` contract).
        unsafe {
            Neon2(
                self.0,
                vaddq_u32(self.1, vsetq_lane_u32::<0>(1, vdupq_n_u32(0))),
            )
        }
    }
    #[inline(always)]
    unsafe fn store_rows([a, b, c, d]: [Self; 4], out: *mut u8, blocks: usize) {
        // SAFETY: the CPU has NEON; `out` is valid for writes of `blocks` (at most
        // `ROW_BLOCKS`) × 64 bytes (`Lanes` contract), and each half stores one block only
        // where `blocks` reaches it.
        unsafe {
            uint32x4_t::store_rows([a.0, b.0, c.0, d.0], out, blocks.min(1));
            if blocks >= 2 {
                uint32x4_t::store_rows([a.1, b.1, c.1, d.1], out.add(64), 1);
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_vertical(x: &[Self; 16], input: *const u8, output: *mut u8) {
        // SAFETY: the CPU has NEON; `input` and `output` are valid for `N * 64` = 512 bytes
        // (`Lanes` contract): blocks 0–3 at offset 0 and blocks 4–7 at 256, 256 bytes each.
        unsafe {
            let lo: [uint32x4_t; 16] = core::array::from_fn(|i| x[i].0);
            uint32x4_t::xor_vertical(&lo, input, output);
            let hi: [uint32x4_t; 16] = core::array::from_fn(|i| x[i].1);
            uint32x4_t::xor_vertical(&hi, input.add(256), output.add(256));
        }
    }
    #[inline(always)]
    unsafe fn xor_bytes(input: *const u8, out: *mut u8, ks: &[u8]) {
        // SAFETY: as `uint32x4_t`'s (`Lanes` contract).
        unsafe { uint32x4_t::xor_bytes(input, out, ks) }
    }
}
