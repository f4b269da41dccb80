//! The lane trait the kernel is generic over. The one-block lane type,
//! [`Block`], is the architecture's 128-bit register (`x86_64.rs`,
//! `aarch64.rs` one level up); the wide lane types are the backends'.

use super::super::arch::Block;
use crate::aead::Direction;

/// A key's hash powers 16-byte aligned (the entries' own alignment).
#[derive(Clone, Copy)]
#[repr(align(16))]
pub(crate) struct Align16;

/// A key's hash powers in 32-byte halves of lines (loads of two powers).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
#[repr(align(32))]
pub(crate) struct Align32;

/// A key's hash powers on cache lines (64-byte loads of four powers).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
#[repr(align(64))]
pub(crate) struct Align64;

/// One, two or four AES blocks in a vector register. Implemented by the
/// backends.
///
/// # Safety
/// Implementing: every method uses only instructions of the backend's
/// `#[target_feature]` list and touches memory only as its contract below
/// says. Calling: every method may only run where that backend's CPU
/// features are present (see the module docs); `loadu` and `broadcast`
/// need `p` valid for reads of `BLOCKS * 16` and 16 bytes, `storeu` for
/// writes of `BLOCKS * 16` bytes (any alignment).
pub(crate) unsafe trait Lanes: Copy {
    /// Blocks per register.
    const BLOCKS: usize;
    /// The alignment of a key's hash powers ([`Align16`], [`Align32`] or
    /// [`Align64`]): the width of the lane type's loads of them.
    type KeyAlign: Copy;
    /// Registers of AES state per main-loop batch (at most `MAX_REGS`).
    const REGS: usize;
    /// Blocks per batch: one GHASH reduction each.
    const BATCH: usize = Self::REGS * Self::BLOCKS;
    /// Whether the lane type's loop ([`Lanes::batches`]) also writes a
    /// seal's last batch to an aligned array (`keep`), which the hash after
    /// the loop then reads instead of the output. The caller passes one
    /// only for an output not 32-byte aligned: there half of the 32-byte
    /// halves Zen 4 splits each zmm store into cross a cache line, and
    /// loads of them wait for those stores to complete, with nothing left
    /// to hide the wait (docs/decisions.md, "The zmm batch loop").
    const KEEP_LAST: bool = false;
    /// Seals of at least this many bytes keep round keys and hash powers
    /// in registers across batches, where the compiler spills some of them
    /// (`usize::MAX`: never). Otherwise each batch reloads them from the key
    /// at each use, which leaves nothing on the stack but slows the ymm
    /// engine's large seals more than scrubbing the spills
    /// (`SCRUB_HOISTED` bytes after the call) costs (docs/decisions.md,
    /// "AES-GCM batches").
    const HOIST_SEAL_FROM: usize;
    /// Whether a hoisted seal's spills can lie below the frame the scrub
    /// after it measures, so that it scrubs a fixed depth instead
    /// (`secret::AES_GCM_HOISTED_SEAL`; the ymm engine's did).
    const HOIST_SPILLS_BELOW_FRAME: bool = true;
    /// Whether records past the short path, of `nr` rounds in direction
    /// `dir`, may spill secrets, so that the entry point's frame is
    /// scrubbed after them (`scrub_batches`). False only where
    /// `tests/stack_residue/` finds none, in the builds it tests
    /// (docs/decisions.md, "AES-GCM scrub where nothing spills").
    #[inline(always)]
    fn batches_spill(nr: usize, dir: Direction) -> bool {
        let _ = (nr, dir);
        true
    }
    /// As `HOIST_SEAL_FROM`, for opens (`usize::MAX`: never; the x86
    /// engines' opens reload without spilling).
    const HOIST_OPEN_FROM: usize = usize::MAX;
    /// The kernel unrolls its AES round loops ([`each_round!`]) on this lane
    /// type: aarch64's, where the XOR of a round key folds into the next
    /// round's `AESE` only across unrolled rounds (as a loop each round
    /// was `AESE`, `AESMC`, `EOR` and a register move).
    const UNROLL_ROUNDS: bool = false;
    /// GHASH products by Karatsuba (three carry-less multiplies a block,
    /// the halves' XOR made per use) or schoolbook (four, no halves): the
    /// zmm engine, whose XORs fuse three ways, is faster schoolbook
    /// (docs/decisions.md, "GHASH products (zmm)").
    const KARATSUBA: bool = true;
    /// Seals of at least this many bytes (and fewer than
    /// `HOIST_SEAL_FROM`), with keys of `nr` rounds, may make the Karatsuba
    /// halves of a batch's powers once per record, on the stack, and run
    /// their full batches after the first in [`Lanes::batches`], in an
    /// entry-point instance of their own (`record.rs`, `LOOP`): the least
    /// of [`Lanes::loops_here`]'s seal lengths on any CPU; `usize::MAX`:
    /// never (each use then makes its own halves, a shuffle and an XOR per
    /// register).
    #[inline(always)]
    fn halves_seal_from(nr: usize) -> usize {
        let _ = nr;
        usize::MAX
    }
    /// As `halves_seal_from`, for opens of at least this many bytes of
    /// whole batches.
    #[inline(always)]
    fn halves_open_from(nr: usize) -> usize {
        let _ = nr;
        usize::MAX
    }
    /// Opens from a key's open length in [`Lanes::loops_here`] run an
    /// entry-point instance of their own (`record.rs`, `LOOP`), the shorter
    /// ones one without the loop: the zmm engine's short opens ran 3–8 %
    /// slower in the loop's frame. Otherwise one instance runs every open,
    /// the loop from `halves_open_from` (the ymm and xmm engines' opens at
    /// 768 B–1 KiB measured 1–2 % slower split).
    const SPLIT_OPEN: bool = false;
    /// From how many bytes a key of `nr` rounds made on this CPU runs its
    /// seals, and (where `SPLIT_OPEN` splits them) its opens, in the `LOOP`
    /// instance: asked once, at key setup (`Key`'s field). At least
    /// `halves_seal_from` and `halves_open_from`, which it is unless the
    /// best lengths depend on the CPU.
    #[inline(always)]
    fn loops_here(nr: usize) -> Loops {
        Loops {
            seal: Self::halves_seal_from(nr),
            open: Self::halves_open_from(nr),
        }
    }
    /// Seals below `halves_seal_from` whose remainder after whole batches
    /// is over half a batch seal all of it in one full-width pass, in an
    /// entry-point instance of their own (`record.rs`, `LAST`), rather than
    /// a half batch and a tail: the ymm and xmm seals of those lengths
    /// measured 1–18 % faster, the zmm ones 2–13 % slower (a 32-block pass
    /// for 17–31 blocks); aarch64 is unmeasured (docs/decisions.md, "The
    /// record's tail").
    const FUSE_LAST: bool = false;
    /// Whether the lane type loads, stores and keeps register bytes under a
    /// byte mask ([`Lanes::load_masked`] and the two after it; AVX-512BW):
    /// the record's tail then runs as one masked pass (`partial.rs`,
    /// `masked_tail`) instead of whole registers and single blocks, and a
    /// record of up to 432 bytes as one pass with E(K, J0) in it
    /// (`masked_short`; docs/decisions.md, "The record's tail", "Short
    /// records on zmm").
    const MASKED: bool = false;
    /// The bytes of a register at `p` that `mask` selects (bit `i`, byte
    /// `i`), zero elsewhere; only the selected bytes are read (they must be
    /// valid for reads; `p` itself may lie where the others are not).
    /// Only where `MASKED`.
    #[inline(always)]
    unsafe fn load_masked(p: *const u8, mask: u64) -> Self {
        let _ = (p, mask);
        unreachable!("masked loads only where Lanes::MASKED")
    }
    /// Writes the bytes `mask` selects to `p` (they must be valid for
    /// writes), nothing else. Only where `MASKED`.
    #[inline(always)]
    unsafe fn store_masked(self, p: *mut u8, mask: u64) {
        let _ = (p, mask);
        unreachable!("masked stores only where Lanes::MASKED")
    }
    /// `self` with the bytes `mask` does not select zeroed. Only where
    /// `MASKED`.
    #[inline(always)]
    unsafe fn keep_masked(self, mask: u64) -> Self {
        let _ = mask;
        unreachable!("masked moves only where Lanes::MASKED")
    }
    unsafe fn loadu(p: *const u8) -> Self;
    unsafe fn storeu(self, p: *mut u8);
    /// The 16 bytes at `p` in every lane.
    unsafe fn broadcast(p: *const u8) -> Self;
    /// `x` in lane 0, zero elsewhere.
    unsafe fn from_first(x: Block) -> Self;
    /// Lane `i` holds `x + i` in its low dword (counters).
    unsafe fn counters(x: Block) -> Self;
    /// `k` added to the low dword of every lane.
    unsafe fn add_ctr(self, k: i32) -> Self;
    unsafe fn xor(self, b: Self) -> Self;
    /// One AES round as x86's `aesenc` defines it: SubBytes, ShiftRows,
    /// MixColumns, then the XOR with `k`. (aarch64's `AESE` XORs its key
    /// first: its lane types write `AESMC(AESE(x, 0)) ^ k`, and the
    /// compiler folds each XOR into the next round's `AESE`.)
    unsafe fn aesenc(self, k: Self) -> Self;
    /// The last round (`aesenclast`): as [`Lanes::aesenc`] without
    /// MixColumns.
    unsafe fn aesenclast(self, k: Self) -> Self;
    unsafe fn clmul_lo(self, b: Self) -> Self;
    unsafe fn clmul_hi(self, b: Self) -> Self;
    /// `self.lo · b.hi` per lane (imm 0x10), for schoolbook products.
    unsafe fn clmul_lo_hi(self, b: Self) -> Self;
    /// `self.hi · b.lo` per lane (imm 0x01), for schoolbook products.
    unsafe fn clmul_hi_lo(self, b: Self) -> Self;
    /// Reverses the bytes of each 128-bit lane.
    unsafe fn bswap(self) -> Self;
    /// Swaps the 64-bit halves of each lane.
    unsafe fn swap_halves(self) -> Self;
    /// XOR of all lanes.
    unsafe fn fold(self) -> Block;
    unsafe fn zero() -> Self;
    /// `self`, through an empty statement that the compiler keeps in
    /// program order with every other such statement. A pass of several
    /// registers fences each one after each round, so that it runs round
    /// by round with one round key live; without it the compiler ran each
    /// register through all its rounds in turn, held every round key for
    /// the next register, and spilled some (docs/decisions.md, "AES passes
    /// round by round"). The identity where registers are plenty.
    #[inline(always)]
    unsafe fn fence(self) -> Self {
        self
    }

    /// `n` (at least 1) full batches in a loop of the lane type's own, with
    /// Karatsuba products whose halves are at `keys.hx`; `false` (nothing
    /// done) where the lane type has none. A seal (`!OPEN`) encrypts `input`
    /// into `output` and hashes the batch before each, the `BATCH * 16`
    /// bytes below `output`; an open hashes `input`, then decrypts it into
    /// `output`.
    /// `acc` is the running GHASH value, `ctr` the next batch's counters
    /// (as [`Lanes::counters`]); both are updated. A seal on a lane type
    /// with [`Lanes::KEEP_LAST`] also writes its last batch's ciphertext to
    /// `keep` unless that is null.
    ///
    /// # Safety
    /// The CPU has `Self`'s features; `keys` holds valid pointers (see
    /// [`BatchKeys`]); `input` is valid for reads and `output` for writes
    /// of `n * Self::BATCH * 16` bytes (they may be equal, not otherwise
    /// overlap); a seal's `output` is preceded by the previous batch's
    /// ciphertext, readable; with `KEEP_LAST`, a seal's `keep` is null or
    /// valid for writes of `Self::BATCH * 16` bytes, 64-byte aligned.
    #[inline(always)]
    unsafe fn batches<const NR: usize, const OPEN: bool>(
        keys: BatchKeys,
        ctr: &mut Self,
        acc: &mut Block,
        input: *const u8,
        output: *mut u8,
        n: usize,
        keep: *mut u8,
    ) -> bool {
        let _ = (keys, ctr, acc, input, output, n, keep);
        false
    }
}

/// Where a key's records take the `LOOP` instance: seals and opens of at
/// least this many bytes (`usize::MAX`: never). See [`Lanes::loops_here`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Loops {
    pub(crate) seal: usize,
    pub(crate) open: usize,
}

/// The key material [`Lanes::batches`] reads, as raw pointers.
#[derive(Clone, Copy)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the zmm engine's loop only
pub(crate) struct BatchKeys {
    /// `NR + 1` round keys, 16 bytes each.
    pub(crate) rk: *const u8,
    /// One batch's powers of H, highest first (`BATCH` entries of 16 bytes).
    pub(crate) h: *const u8,
    /// Their Karatsuba halves, laid out like the powers.
    pub(crate) hx: *const u8,
}
