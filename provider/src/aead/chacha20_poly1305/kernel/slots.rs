//! What a ChaCha20 call hashes between its rounds: the horizontal call's
//! slot runs (one item per slot, each kind its own type), and the
//! ciphertext a vertical kernel hashes ([`Hash`]).

use super::super::poly1305::{Chains, Poly1305};

/// What a horizontal call hashes between its rounds, one item per slot.
/// Each kind is its own type, its chain state held by value, so that the
/// call is compiled for the one it runs: behind a reference in an enum
/// matched at every slot, the one-chain state lived in memory (a load and
/// a store on its dependency chain at every block) and each slot paid for
/// the match and three bounds checks, about 30 instructions a block.
pub(super) trait SlotRun {
    /// Items to absorb: one per slot, at most 32.
    fn items(&self) -> usize;
    /// Absorbs item `i`.
    ///
    /// # Safety
    /// `i < self.items()` (the slot mask's count; a one-chain run reads
    /// its block unchecked: with the bounds check's registers, a Poly1305
    /// limb was spilled on the chain's critical path).
    unsafe fn absorb(&mut self, poly: &Poly1305, i: usize);
    /// Absorbs 32-byte step `i` (a vertical kernel's unit); nothing from
    /// the run's end on.
    fn absorb_step(&mut self, poly: &Poly1305, i: usize);
}

/// Nothing to hash.
pub(super) struct NoRun;

impl SlotRun for NoRun {
    #[inline(always)]
    fn items(&self) -> usize {
        0
    }
    #[inline(always)]
    unsafe fn absorb(&mut self, _: &Poly1305, _: usize) {}
    #[inline(always)]
    fn absorb_step(&mut self, _: &Poly1305, _: usize) {}
}

/// A run of whole blocks, at most [`ONE_CHAIN_MAX`] bytes, in one chain:
/// an item is a block. The chain state is a plain value (registers, and
/// where it spills the stack scrub after a long record covers it).
/// `FRESH`: r is read from the Poly1305 state at every block (see
/// `Poly1305::mul_r`), for calls no stack scrub follows and where general
/// registers are short (horizontal calls). The bytes are
/// held as a raw [`Hash`], not a slice: an open's vertical pass
/// overwrites them after its rounds, while the run is still alive.
pub(super) struct OneChain<const FRESH: bool = false> {
    pub(super) data: Hash,
    pub(super) h: [u64; 3],
}

impl<const FRESH: bool> OneChain<FRESH> {
    /// # Safety
    /// `data` stays valid for reads, and unwritten, while the run absorbs.
    #[inline(always)]
    pub(super) unsafe fn new(data: Hash, h: [u64; 3]) -> Self {
        Self { data, h }
    }
}

impl<const FRESH: bool> SlotRun for OneChain<FRESH> {
    #[inline(always)]
    fn items(&self) -> usize {
        self.data.len / 16
    }
    #[inline(always)]
    unsafe fn absorb(&mut self, poly: &Poly1305, i: usize) {
        debug_assert!(i < self.items());
        // SAFETY: block `i` lies in the run (`i < items()`, this fn's contract), whose bytes
        // are valid and unwritten while it absorbs (`new`'s contract); the reference lives
        // only for this step.
        let m = unsafe { &*self.data.ptr.add(16 * i).cast::<[u8; 16]>() };
        self.h = poly.chain_block::<FRESH>(self.h, m);
    }
    #[inline(always)]
    fn absorb_step(&mut self, poly: &Poly1305, i: usize) {
        // SAFETY: as in `absorb`.
        let data = unsafe { self.data.bytes() };
        if let Some(m) = data.get(32 * i..32 * i + 32) {
            let h = poly.chain_block::<FRESH>(self.h, m[..16].try_into().expect("16 bytes"));
            self.h = poly.chain_block::<FRESH>(h, m[16..].try_into().expect("16 bytes"));
        }
    }
}

/// A longer run in two chains: an item is a two-block step. The bytes are
/// a raw [`Hash`], as for [`OneChain`]. In a horizontal call (`absorb`) a
/// step reads its blocks unchecked and r fresh, as a one-chain run there
/// does, since general registers are short there (docs/decisions.md,
/// "ChaCha20-Poly1305 record shapes (Intel Xeon)"); a vertical pass's
/// steps (`absorb_step`) keep r in registers.
pub(super) struct TwoChains {
    pub(super) data: Hash,
    pub(super) chains: Chains,
}

impl TwoChains {
    /// # Safety
    /// As for [`OneChain::new`], and `chains` is
    /// `Poly1305::chains_begin(data.len / 32)`'s: the steps read blocks
    /// `i` and `steps() + i` unchecked.
    #[inline(always)]
    pub(super) unsafe fn new(data: Hash, chains: Chains) -> Self {
        debug_assert_eq!(
            chains.steps(),
            data.len / 32,
            "one step per 32 bytes of the run"
        );
        Self { data, chains }
    }
}

impl SlotRun for TwoChains {
    #[inline(always)]
    fn items(&self) -> usize {
        self.data.len / 32
    }
    #[inline(always)]
    unsafe fn absorb(&mut self, poly: &Poly1305, i: usize) {
        debug_assert!(i < self.items());
        let len = self.chains.steps();
        // SAFETY: steps `i < items()` (this fn's contract) read blocks `i` and `len + i`, both
        // in the run (`len == items()`), whose bytes are valid and unwritten while it absorbs
        // (`new`'s contract); the references live only for this step.
        let (a, b) = unsafe {
            (
                &*self.data.ptr.add(16 * i).cast::<[u8; 16]>(),
                &*self.data.ptr.add(16 * (len + i)).cast::<[u8; 16]>(),
            )
        };
        poly.chain_blocks::<true>(&mut self.chains, a, b);
    }
    #[inline(always)]
    fn absorb_step(&mut self, poly: &Poly1305, i: usize) {
        // Steps from the run's end on do nothing: a pass has a fixed number
        // of slots. The blocks are read unchecked: with a run length known
        // only at run time (a tail's), slice bounds checks cost about 700
        // instructions in an 880-byte `X86Avx2` open (docs/decisions.md,
        // "ChaCha20-Poly1305 tail passes: unchecked steps"). `absorb` keeps
        // its own copy of the reads: through `step_blocks` the horizontal
        // calls' code changed and `X86Avx2` seals of 2–4 KiB slowed 3–7 %.
        if i >= self.items() {
            return;
        }
        // SAFETY: `i < items()`, checked above, and `steps() == items()` (`new`'s contract).
        let (a, b) = unsafe { step_blocks(self.data, self.chains.steps(), i) };
        poly.chain_blocks::<false>(&mut self.chains, a, b);
    }
}

/// Step `i`'s blocks of a two-chain run of `len` steps over `data`: block
/// `i` for chain A, block `len + i` for B.
///
/// # Safety
/// `len == data.len / 32` and `i < len`; `data`'s bytes stay valid and
/// unwritten while the references live ([`TwoChains::new`]'s contract).
#[inline(always)]
unsafe fn step_blocks<'a>(data: Hash, len: usize, i: usize) -> (&'a [u8; 16], &'a [u8; 16]) {
    debug_assert!(len == data.len / 32 && i < len);
    // SAFETY: blocks `i` and `len + i` lie in the run's `2 * len` blocks (this fn's contract),
    // valid and unwritten while the references live.
    unsafe {
        (
            &*data.ptr.add(16 * i).cast::<[u8; 16]>(),
            &*data.ptr.add(16 * (len + i)).cast::<[u8; 16]>(),
        )
    }
}

/// The longest run a horizontal call hashes in one chain: one block in
/// each of its 32 slots. Two chains halve the latency but add the power
/// r^L and the join, which cost more than they saved in these calls;
/// longer runs (stitched zmm records, whose head and batches are a
/// kilobyte) take two.
pub(super) const ONE_CHAIN_MAX: usize = 32 * 16;

/// For a horizontal call hashing `len` blocks or steps (at most 32), bit
/// `k` of entry `len` says whether slot `k` of its 32 takes one: item `i`
/// goes in slot `32 i / len`, so that they spread evenly over the call.
pub(super) const SLOT_MASKS: [u32; 33] = {
    let mut masks = [0u32; 33];
    let mut len = 1;
    while len <= 32 {
        let mut i = 0;
        while i < len {
            masks[len] |= 1 << (32 * i / len);
            i += 1;
        }
        // Exactly `len` slots: `horizontal` absorbs items `0..len` only.
        assert!(masks[len].count_ones() as usize == len);
        len += 1;
    }
    masks
};

/// Ciphertext a vertical kernel hashes, as a raw pointer: an open hashes
/// bytes that the same call then overwrites with plaintext, so no reference
/// to them may live across the call.
#[derive(Clone, Copy)]
pub(super) struct Hash {
    pub(super) ptr: *const u8,
    pub(super) len: usize,
}

impl Hash {
    /// # Safety
    /// `ptr` is valid for `len` bytes of reads while the kernel runs.
    #[inline(always)]
    pub(super) unsafe fn new(ptr: *const u8, len: usize) -> Self {
        Self { ptr, len }
    }

    /// The bytes, for use before the kernel's stores.
    ///
    /// # Safety
    /// As for [`Hash::new`]; the slice must not be used after a write to
    /// those bytes.
    #[inline(always)]
    pub(super) unsafe fn bytes<'a>(self) -> &'a [u8] {
        // SAFETY: `ptr` is valid for reads of `len` bytes while the kernel runs, and the slice
        // is not used after a write to them (this fn's contract).
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}
