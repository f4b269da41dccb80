//! The lane trait the ChaCha20 kernels are generic over (one state word of
//! `N` blocks, or one row of `ROW_BLOCKS` blocks), the [`Schedule`] of
//! Poly1305 steps each lane type sets for its vertical kernel, and row
//! broadcasts.

use super::super::arch::{load_row, Row};

/// A vector of 32-bit lanes: one ChaCha20 state word of `N` blocks
/// (vertical), or one row of `ROW_BLOCKS` blocks (horizontal).
/// Implemented by the backends; only the fused XOR-rotates have defaults.
///
/// # Safety
/// Implementing: every method uses only instructions of the backend's
/// `#[target_feature]` list and touches memory only as its contract below
/// says (slice arguments are bounds-checked); an override of the
/// `xor_rotl*` methods may also use AVX-512F and VL. Calling: every method
/// may only run where that backend's CPU features are present (see the
/// module docs), the `xor_rotl*` overrides only where AVX-512F and VL are
/// too (the engines whose lane type sets `FUSED_PAIR`), and the raw
/// pointers of `store_rows`, `xor_vertical` and `xor_bytes` must be valid
/// for the bytes their docs name.
pub(crate) unsafe trait Lanes: Copy {
    /// Blocks per register in the vertical layout.
    const N: usize;
    /// Blocks per register in the horizontal layout.
    const ROW_BLOCKS: usize;
    /// Most independent horizontal sets one call keeps in registers.
    const MAX_SETS: usize;
    /// The vertical kernel's Poly1305 chain steps (at least a batch's,
    /// `2 * N`).
    const SCHEDULE: Schedule;
    /// Those of an open's first batch, which also hashes the head before
    /// it (at least `4 * N - 2` steps).
    const WIDE_SCHEDULE: Schedule;
    /// Whether every vertical pass hashes its run in two chains, whatever
    /// the record's length (see `two_chain_passes`): where one chain's
    /// latency, about 13 cycles a block, would outlast the pass's rounds.
    const TWO_CHAIN_PASSES: bool;
    /// The longest open on the short path: [`SMALL`], or on ymm 576 bytes
    /// (a two-block call, then four sets; see `crypt_small_in`).
    const SMALL_OPEN: usize;
    /// Fewest tail blocks for which an open without a batch makes its tail
    /// in a wide vertical pass that hashes the whole record, like an open's
    /// first batch (`TailCall::Wide`); `usize::MAX`: never. The pass
    /// needs `N` blocks of scratch above pass 0's.
    const WIDE_TAIL_MIN: usize;
    /// Most tail blocks for which an open of one batch and a horizontal
    /// tail takes a seal's shape (`crypt`'s `split`): the batch hashes the
    /// head and what else its schedule's steps hold, and leaves its
    /// keystream in the scratch above pass 0's; the tail's call hashes the
    /// rest of the batch's ciphertext in its idle slots; 0: never (the
    /// batch hashes both on the wide schedule).
    const SPLIT_OPEN_TAIL_MAX: usize;
    /// Short records longer than this scrub the whole frame their call
    /// used, both directions (`small_spills`): where the horizontal calls
    /// of more than two blocks spill state rows; `usize::MAX`: only the
    /// ymm cases `small_spills` names.
    const SHORT_SPILLS_OVER: usize;
    /// The lane type for 2-block calls (zmm → ymm: one ymm call runs them
    /// faster; docs/decisions.md, "The ChaCha20 rounds (ymm, zmm)").
    type Pair: Lanes;
    /// Whether the 2-block call (of `Pair`, one set: records of up to 64
    /// bytes) can run the fused quarter round (`rounds.rs`,
    /// `quarter_fused`): on the engines with AVX-512VL, whose `Pair`
    /// XOR-rotates then take two cycles after the word they wait on instead
    /// of three where rotations take 2 cycles and XORs 1. A key runs it
    /// where its CPU is such a core (`Key`, `Features::rotate_slow`: Zen
    /// 4). Calls of more blocks stay unfused: there the extra shifts, not
    /// the chain, bound them (docs/decisions.md, "ChaCha20 rotations off
    /// the chain"). Set only by a lane type whose backend's features
    /// include AVX-512F and VL.
    const FUSED_PAIR: bool = false;
    /// Whether a lone block (a QUIC header-protection sample) runs in this
    /// lane type's rows on a core whose vector steps take one cycle
    /// (`Features::vector_one_cycle`): the ymm and zmm lanes, measured
    /// faster there than general registers (docs/decisions.md, "One
    /// ChaCha20 block"); xmm (SSSE3) and NEON are not measured.
    const ONE_BLOCK_ROWS: bool = false;

    unsafe fn splat(x: u32) -> Self;
    /// `words[i]` in lane `i` (`N` words).
    unsafe fn load_lanes(words: &[u32]) -> Self;
    /// `[0, 1, …, N − 1]`: the block index of each vertical lane.
    unsafe fn lane_index() -> Self;
    unsafe fn add(self, b: Self) -> Self;
    unsafe fn xor(self, b: Self) -> Self;
    unsafe fn rotl16(self) -> Self;
    unsafe fn rotl12(self) -> Self;
    unsafe fn rotl8(self) -> Self;
    unsafe fn rotl7(self) -> Self;
    /// `(self ^ x) <<< 16` where `x` is the word just computed: as
    /// `(self <<< 16) ^ (x << 16) ^ (x >> 16)`, `self`'s rotation off the
    /// chain and the rest one three-way XOR after the shifts, on lane types
    /// that override it. Those overrides need AVX-512F and VL: only the
    /// calls `FUSED_PAIR` enables run them.
    #[inline(always)]
    unsafe fn xor_rotl16(self, x: Self) -> Self {
        // SAFETY: register-only `Lanes` methods (this trait's contract).
        unsafe { self.xor(x).rotl16() }
    }
    /// As `xor_rotl16`, by 12.
    #[inline(always)]
    unsafe fn xor_rotl12(self, x: Self) -> Self {
        // SAFETY: as `xor_rotl16`.
        unsafe { self.xor(x).rotl12() }
    }
    /// As `xor_rotl16`, by 8.
    #[inline(always)]
    unsafe fn xor_rotl8(self, x: Self) -> Self {
        // SAFETY: as `xor_rotl16`.
        unsafe { self.xor(x).rotl8() }
    }
    /// As `xor_rotl16`, by 7.
    #[inline(always)]
    unsafe fn xor_rotl7(self, x: Self) -> Self {
        // SAFETY: as `xor_rotl16`.
        unsafe { self.xor(x).rotl7() }
    }
    /// In every 128-bit lane, word `i` takes word `(IMM >> 2i) & 3` (x86's
    /// `pshufd`); the kernel uses the rotations 0x39, 0x4e and 0x93.
    unsafe fn shuffle<const IMM: i32>(self) -> Self;
    /// `r` in every 128-bit lane.
    unsafe fn broadcast_row(r: Row) -> Self;
    /// A row with `k` added to the first word of 128-bit lane `k` (block
    /// counters of the horizontal layout).
    unsafe fn row_counters(self) -> Self;
    /// Stores the first `blocks` (≤ `ROW_BLOCKS`) blocks of final rows
    /// `a`, `b`, `c`, `d` to `out`, 64 bytes each.
    unsafe fn store_rows(rows: [Self; 4], out: *mut u8, blocks: usize);
    /// Transposes the final vertical state into `N` blocks and stores
    /// `input XOR keystream` to `output` (`N * 64` bytes; `input` may equal
    /// `output`).
    unsafe fn xor_vertical(x: &[Self; 16], input: *const u8, output: *mut u8);
    /// `out[i] = input[i] ^ ks[i]` for `ks.len()` bytes; `input` may equal
    /// `out`.
    unsafe fn xor_bytes(input: *const u8, out: *mut u8, ks: &[u8]);
}

/// The four words `w` in every 128-bit lane of `L`.
///
/// # Safety
/// The CPU has `L`'s features.
#[inline(always)]
pub(super) unsafe fn row<L: Lanes>(w: &[u32; 4]) -> L {
    // SAFETY: the CPU has `L`'s features (this fn's contract).
    unsafe { L::broadcast_row(load_row(w)) }
}

/// Where the vertical kernel runs Poly1305 chain steps (one step absorbs
/// 32 bytes: a block in each of two chains, or two consecutive blocks of
/// one, see `two_chain_passes`): `after[q]` steps after
/// quarter round `q` (0..8) of each of the first `rounds` double rounds,
/// then `end` more after the last round. A whole batch of ciphertext is
/// `Lanes::N * 2` steps.
pub(crate) struct Schedule {
    pub(crate) after: [usize; 8],
    pub(crate) rounds: usize,
    pub(crate) end: usize,
}

impl Schedule {
    /// The chain steps one pass runs: the most 32-byte steps it can hash.
    #[inline(always)]
    pub(super) const fn steps(&self) -> usize {
        let mut per_round = 0;
        let mut q = 0;
        while q < 8 {
            per_round += self.after[q];
            q += 1;
        }
        per_round * self.rounds + self.end
    }
}
