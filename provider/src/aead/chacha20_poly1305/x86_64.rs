//! What the x86-64 ChaCha20-Poly1305 engines share: the record logic
//! (state, stitched hash, head, batches, tail, wipe) and one ChaCha20
//! kernel — quarter round, vertical kernel, horizontal short call — generic
//! over the vector type ([`Lanes`]: xmm for SSSE3, ymm for AVX2, zmm for
//! AVX-512). Each backend file implements `Lanes` for its type and
//! instantiates the engine with [`x86_backend!`] inside its own
//! `#[target_feature]` entry points, so every helper here is
//! `#[inline(always)]` and compiles with the caller's features.
//!
//! Two layouts of the ChaCha20 state:
//!
//! - **vertical** (bulk): register `i` holds state word `i` of `Lanes::N`
//!   blocks, one per 32-bit lane; one call makes `N` blocks (4, 8 or 16)
//!   and absorbs the Poly1305 of up to as many blocks of ciphertext between
//!   its quarter rounds (the width's [`Schedule`]): ChaCha20 keeps the
//!   vector units busy while Poly1305 runs on the integer multiplier;
//! - **horizontal** (short records, the head, tails, header protection):
//!   register `a`, `b`, `c`, `d` holds one row of `Lanes::ROW_BLOCKS` blocks
//!   (1, 2 or 4), one per 128-bit lane; independent sets hide each other's
//!   latency.
//!
//! # Safety
//! Every `unsafe fn` here must only run on a CPU with the features of the
//! `Lanes` type it is instantiated with, and with AVX-512 IFMA where it is
//! instantiated with `IFMA = true`: the backends call them only from
//! `#[target_feature]` functions of a `Key` that detection made (only
//! `X86Avx512Ifma`'s, whose detection includes IFMA, sets `IFMA`).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::poly1305::{Chains, Poly1305};
use super::poly1305_ifma;
use crate::aead::{NONCE_LEN, TAG_LEN};

/// The largest batch any vertical kernel makes (AVX-512: 16 blocks).
const MAX_BATCH: usize = 1024;
/// Records up to this size take one horizontal call of 2, 4, 6 or 8
/// blocks (the Poly1305 key block and up to seven data blocks); on ymm,
/// opens up to [`Lanes::SMALL_OPEN`] take two calls (see `crypt_small_in`).
pub(super) const SMALL: usize = 448;

/// The longest record `dir` takes on the short path ([`small`]).
pub(super) const fn small_max<L: Lanes>(dir: Direction) -> usize {
    match dir {
        Direction::Seal => SMALL,
        Direction::Open => L::SMALL_OPEN,
    }
}

/// Whether a short record of `n` bytes runs a call of four ymm sets (a
/// seal of 321–448 bytes, an open of 449–576): its 16 state rows and the
/// input rows of the final addition outnumber the 16 ymm registers, and
/// the compiler spills state rows there. Rows of a block's last state
/// before that addition, with its keystream (known wherever the plaintext
/// is), give the key words, so the frame is scrubbed after such a call
/// (`tests/stack_residue.rs` searches every intermediate state).
pub(super) const fn small_spills<L: Lanes>(dir: Direction, n: usize) -> bool {
    // As `crypt_small` routes them: a seal past 192 bytes not in three
    // sets takes one call of four; an open past `SMALL`, a call of two
    // blocks and one of four sets.
    L::ROW_BLOCKS == 2
        && match dir {
            Direction::Seal => n > 192 && !three_sets::<L>(n),
            Direction::Open => n > SMALL,
        }
}
/// ChaCha20's "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Where the vertical kernel runs Poly1305 chain steps (one step absorbs
/// 32 bytes: a block in each of two chains, or two consecutive blocks of
/// one, see `two_chain_passes`): `after[q]` steps after
/// quarter round `q` (0..8) of each of the first `rounds` double rounds,
/// then `end` more after the last round. A whole batch of ciphertext is
/// `Lanes::N * 2` steps.
pub(super) struct Schedule {
    pub(super) after: [usize; 8],
    pub(super) rounds: usize,
    pub(super) end: usize,
}

impl Schedule {
    /// The chain steps one pass runs: the most 32-byte steps it can hash.
    #[inline(always)]
    const fn steps(&self) -> usize {
        let mut per_round = 0;
        let mut q = 0;
        while q < 8 {
            per_round += self.after[q];
            q += 1;
        }
        per_round * self.rounds + self.end
    }
}

/// A vector of 32-bit lanes: one ChaCha20 state word of `N` blocks
/// (vertical), or one row of `ROW_BLOCKS` blocks (horizontal).
/// Implemented by the backends; no method has a default.
///
/// # Safety
/// Implementing: every method uses only instructions of the backend's
/// `#[target_feature]` list and touches memory only as its contract below
/// says (slice arguments are bounds-checked). Calling: every method may
/// only run where that backend's CPU features are present (see the module
/// docs), and the raw pointers of `store_rows`, `xor_vertical` and
/// `xor_bytes` must be valid for the bytes their docs name.
pub(super) unsafe trait Lanes: Copy {
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
    /// The lane type for 2-block calls (zmm → ymm: one ymm chain measured
    /// faster than a zmm one there).
    type Pair: Lanes;

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
    /// `_mm_shuffle_epi32::<IMM>` in every 128-bit lane.
    unsafe fn shuffle<const IMM: i32>(self) -> Self;
    /// `r` in every 128-bit lane.
    unsafe fn broadcast_row(r: __m128i) -> Self;
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

/// Defines a backend's key type (which exists only where `$detected`
/// holds) and its `#[target_feature]` entry points, instantiating the
/// engine with lane type `$lanes`. The compiler spills ChaCha20 state the
/// code cannot wipe, so each call is followed by a stack scrub: after a
/// record longer than `SMALL`, as deep as the kernel's frame measured at
/// run time ([`scrub_below`]); after a short record, `$scrub_small` bytes
/// (0: none); after header-protection blocks, `$scrub_blocks`. Those
/// constants are the depths `tests/stack_residue.rs` needs at opt-levels 3
/// and 2, with room to spare (the zmm short path leaves no secret on the
/// stack, the xmm one does; the ymm one only in its four-set calls, which
/// `small_spills` names and whose frame is scrubbed as a long record's).
/// `$ifma`: the CPU has AVX-512 IFMA
/// (`$detected` includes it and `$features` enables it), and serial
/// Poly1305 runs take the IFMA Poly1305 ([`padded_serial`]).
macro_rules! x86_backend {
    (
        features = $features:literal,
        lanes = $lanes:ty,
        detected = $detected:ident,
        ifma = $ifma:literal,
        scrub_small = $scrub_small:literal,
        scrub_blocks = $scrub_blocks:literal
    ) => {
        /// A ChaCha20-Poly1305 key on this backend, boxed (moving the key
        /// object moves a pointer, not key words) and zeroized on drop.
        pub(crate) struct Key(Box<zeroize::Zeroizing<[u32; 8]>>);

        impl Key {
            /// `None` unless this CPU has the backend's features.
            pub(crate) fn new(
                key: &[u8; 32],
                stack: &mut $crate::aead::secret::SetupStack,
            ) -> Option<Self> {
                if !$crate::cpu::Features::get().$detected {
                    return None;
                }
                Some(Self($crate::aead::chacha20_poly1305::x86_64::key_words(
                    key, stack,
                )))
            }

            pub(crate) fn seal(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                src: &[u8],
                buf: &mut [u8],
            ) -> [u8; $crate::aead::TAG_LEN] {
                use $crate::aead::chacha20_poly1305::x86_64::{small_max, Direction};
                // Short records run in a smaller frame of their own, so
                // they pay for scrubbing only that, if anything (after each
                // call, the stack its frames used is scrubbed: see
                // `scrub_stack`).
                if buf.len() <= small_max::<$lanes>(Direction::Seal) {
                    let top = $crate::aead::secret::stack_pointer();
                    let dir = Direction::Seal;
                    // SAFETY: a `Key` exists only where `new` detected the
                    // features.
                    let (tag, bottom) = unsafe { small(&self.0, nonce, aad, src, buf, dir) };
                    scrub_small(Direction::Seal, buf.len(), top, bottom);
                    return tag;
                }
                let mut ks = $crate::aead::chacha20_poly1305::x86_64::Scratch(
                    [0u8; $crate::aead::chacha20_poly1305::x86_64::seal_scratch_len::<$lanes>()],
                );
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: as above.
                let (tag, bottom) = unsafe { seal(&self.0, &mut ks.0, nonce, aad, src, buf) };
                $crate::aead::secret::scrub_below(top, bottom);
                tag
            }

            pub(crate) fn open(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; $crate::aead::TAG_LEN],
            ) -> Result<(), $crate::aead::OpenError> {
                use $crate::aead::chacha20_poly1305::x86_64::{check, small_max, Direction};
                let expected = if buf.len() <= small_max::<$lanes>(Direction::Open) {
                    let top = $crate::aead::secret::stack_pointer();
                    let dir = Direction::Open;
                    // SAFETY: as for `seal`.
                    let (t, bottom) = unsafe { small(&self.0, nonce, aad, &[], buf, dir) };
                    scrub_small(Direction::Open, buf.len(), top, bottom);
                    t
                } else {
                    let mut ks = $crate::aead::chacha20_poly1305::x86_64::Scratch(
                        [0u8; $crate::aead::chacha20_poly1305::x86_64::scratch_len::<$lanes>()],
                    );
                    let top = $crate::aead::secret::stack_pointer();
                    // SAFETY: as for `seal`.
                    let (t, bottom) = unsafe { open(&self.0, &mut ks.0, nonce, aad, buf) };
                    $crate::aead::secret::scrub_below(top, bottom);
                    t
                };
                check(expected, tag, buf)
            }

            /// The first `B` bytes of the ChaCha20 block of each 16-byte
            /// `counter ‖ nonce` input (RFC 8439 §2.3).
            ///
            /// # Panics
            /// If the lengths differ, or `B > 16`.
            pub(crate) fn blocks<const B: usize>(&self, inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
                assert!(inputs.len() == out.len() && B <= 16, "one output per input");
                if let ([input], [o]) = (inputs, &mut *out) {
                    // One input: in general registers (`scalar.rs`), in a
                    // frame of its own whose spills the scrub reaches.
                    #[inline(never)]
                    fn one<const B: usize>(key: &[u32; 8], input: &[u8; 16], o: &mut [u8; B]) {
                        *o = $crate::aead::chacha20_poly1305::scalar::block_prefix(key, input);
                    }
                    one(&self.0, input, o);
                    $crate::aead::secret::scrub_stack::<
                        { $crate::aead::chacha20_poly1305::x86_64::SCRUB_ONE_BLOCK },
                    >();
                    return;
                }
                // SAFETY: as for `seal`.
                unsafe { blocks(&self.0, inputs, out) };
                // Several inputs are vertical passes, whose rows spill.
                $crate::aead::secret::scrub_stack::<$scrub_blocks>();
            }
        }

        /// Scrubs the stack after a short record of `n` bytes: the frame
        /// the call used (from `top` down to `bottom`) where it spills
        /// (`small_spills`), else `$scrub_small` bytes.
        #[inline(always)]
        fn scrub_small(
            dir: $crate::aead::chacha20_poly1305::x86_64::Direction,
            n: usize,
            top: usize,
            bottom: usize,
        ) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            if kernel::small_spills::<$lanes>(dir, n) {
                $crate::aead::secret::scrub_below(top, bottom);
            } else if $scrub_small > 0 {
                $crate::aead::secret::scrub_stack::<$scrub_small>();
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn seal(
            key: &[u32; 8],
            ks: &mut [u8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            src: &[u8],
            buf: &mut [u8],
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            // This frame's bottom, for the scrub after the call.
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: the kernel needs only CPU features: this entry point's
            // `#[target_feature]` list provides the lane type's, and IFMA where `$ifma`
            // (reached only through a detected `Key`), and `crypt` checks every length it
            // relies on.
            let tag = unsafe {
                kernel::crypt::<$lanes, $ifma>(
                    key,
                    ks,
                    nonce,
                    aad,
                    src,
                    buf,
                    kernel::Direction::Seal,
                )
            };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn open(
            key: &[u32; 8],
            ks: &mut [u8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            buf: &mut [u8],
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`.
            let tag = unsafe {
                kernel::crypt::<$lanes, $ifma>(
                    key,
                    ks,
                    nonce,
                    aad,
                    &[],
                    buf,
                    kernel::Direction::Open,
                )
            };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn small(
            key: &[u32; 8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            src: &[u8],
            buf: &mut [u8],
            dir: $crate::aead::chacha20_poly1305::x86_64::Direction,
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            // This frame's bottom, for the scrub after the call.
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`; the kernel's `small` asserts the lengths it relies on.
            let tag = unsafe { kernel::small::<$lanes>(key, nonce, aad, src, buf, dir) };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn blocks<const B: usize>(key: &[u32; 8], inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
            // SAFETY: as for `seal`; `independent_blocks` bounds its slices itself.
            unsafe {
                $crate::aead::chacha20_poly1305::x86_64::independent_blocks::<$lanes, B>(
                    key, inputs, out,
                )
            }
        }
    };
}
pub(super) use x86_backend;

/// Stack scrubbed after one header-protection block in general registers
/// (`scalar::block_prefix`, whose frame holds the spilled state).
pub(super) const SCRUB_ONE_BLOCK: usize = 512;

/// The key as eight little-endian words, written straight into their box
/// (this frame, marked in `stack`, is the deepest of the setup).
pub(super) fn key_words(
    key: &[u8; 32],
    stack: &mut crate::aead::secret::SetupStack,
) -> Box<zeroize::Zeroizing<[u32; 8]>> {
    // Allocated first (`malloc`; a zeroed box is a slower `calloc`), then
    // the words go from the caller's key straight into it: no key word is
    // live across the allocation, where it would be spilled.
    let mut words = Box::<zeroize::Zeroizing<[u32; 8]>>::new_uninit();
    stack.mark();
    // SAFETY: `write` initialises the whole box, so `assume_init` is sound.
    unsafe {
        words.write(zeroize::Zeroizing::new(core::array::from_fn(|i| {
            u32::from_le_bytes(core::array::from_fn(|j| key[4 * i + j]))
        })));
        words.assume_init()
    }
}

/// Compares the computed tag with the received one in constant time; on a
/// mismatch zeroes `buf` (no unauthenticated plaintext is released).
pub(super) fn check(
    expected: [u8; TAG_LEN],
    tag: &[u8; TAG_LEN],
    buf: &mut [u8],
) -> Result<(), crate::aead::OpenError> {
    if crate::aead::ct_eq(&expected, tag) {
        Ok(())
    } else {
        buf.zeroize();
        Err(crate::aead::OpenError)
    }
}

/// The keystream scratch [`crypt`] takes to open with lane type `L`:
/// pass 0's blocks (the Poly1305 key and the head), then room for a
/// horizontal tail's, so that an open can keep the head's keystream until
/// the tail's call has hashed the head. The backend's `Key` holds it in its
/// own frame, above the stack the kernel uses, so the scrub after the call
/// need not cover it (the kernel wipes it).
pub(super) const fn scratch_len<L: Lanes>() -> usize {
    L::N * 64 + L::MAX_SETS * L::ROW_BLOCKS * 64
}

/// The keystream scratch [`crypt`] takes to seal: pass 0's blocks, which
/// the tail's keystream then reuses (a seal keeps no head keystream, and a
/// tail takes at most `L::N` blocks' room: asserted below). Half an open's
/// on ymm, so half the clearing.
pub(super) const fn seal_scratch_len<L: Lanes>() -> usize {
    const { assert!(tail_footprint::<L>(TailCall::Wide, L::N) <= L::N * 64) };
    L::N * 64
}

/// Keystream scratch, aligned to a cache line (vector stores and loads on
/// it would otherwise split lines).
#[repr(C, align(64))]
pub(super) struct Scratch<const N: usize>(pub(super) [u8; N]);

/// Where a pass reads the plaintext of region `[off, end)`: from `src` if
/// the region lies in its directly read part (below `from_src`), else from
/// the buffer at `base`, which holds the rest (`crypt` copies it there).
///
/// # Safety
/// `src` is `crypt`'s, with `from_src <= src.len()`, and `base` points to
/// its buffer; the pointer returned is valid for `end - off` bytes if
/// `end` is at most the buffer's length.
#[inline(always)]
unsafe fn plaintext_at(
    src: &[u8],
    base: *mut u8,
    from_src: usize,
    off: usize,
    end: usize,
) -> *const u8 {
    // SAFETY: `off < end <= from_src <= src.len()` on the `src` side, and the buffer is at
    // least `end` bytes on the other (this fn's contract).
    unsafe {
        if end <= from_src {
            src.as_ptr().add(off)
        } else {
            base.add(off).cast_const()
        }
    }
}

/// Whether an `n`-byte message keeps the data block counter in 1 ..= 2³²−1.
const fn counter_fits(n: usize) -> bool {
    (n as u64).div_ceil(64) < 1 << 32
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    Seal,
    Open,
}

/// Ciphertext a vertical kernel hashes, as a raw pointer: an open hashes
/// bytes that the same call then overwrites with plaintext, so no reference
/// to them may live across the call.
#[derive(Clone, Copy)]
struct Hash {
    ptr: *const u8,
    len: usize,
}

impl Hash {
    /// # Safety
    /// `ptr` is valid for `len` bytes of reads while the kernel runs.
    #[inline(always)]
    unsafe fn new(ptr: *const u8, len: usize) -> Self {
        Self { ptr, len }
    }

    /// The bytes, for use before the kernel's stores.
    ///
    /// # Safety
    /// As for [`Hash::new`]; the slice must not be used after a write to
    /// those bytes.
    #[inline(always)]
    unsafe fn bytes<'a>(self) -> &'a [u8] {
        // SAFETY: `ptr` is valid for reads of `len` bytes while the kernel runs, and the slice
        // is not used after a write to them (this fn's contract).
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// The ChaCha20 input state for block counter 0: the key, read where it
/// is used from its box (never copied to the stack; a copy there would
/// also be a store that the first rows' loads wait on), and the public
/// nonce.
struct State<'k> {
    key: &'k [u32; 8],
    /// Words 13–15.
    nonce: [u32; 3],
    /// Words 12–15 as one row, counter word 0: `0 ‖ nonce`, made in
    /// registers for the horizontal calls. (Loaded from memory just
    /// written word by word, that row spanned several stores and store
    /// forwarding failed: a stall at the head of a short record's one
    /// dependency chain.)
    nonce_row: __m128i,
}

impl<'k> State<'k> {
    #[inline(always)]
    fn new(key: &'k [u32; 8], nonce: &[u8; NONCE_LEN]) -> Self {
        let word =
            |i: usize| u32::from_le_bytes(nonce[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        // SAFETY: SSE2 (every x86-64 CPU); the 8-byte load reads `nonce[..8]`.
        let nonce_row = unsafe {
            let n01 = _mm_loadl_epi64(nonce.as_ptr().cast());
            _mm_slli_si128::<4>(_mm_unpacklo_epi64(n01, _mm_cvtsi32_si128(word(2) as i32)))
        };
        Self {
            key,
            nonce: [word(0), word(1), word(2)],
            nonce_row,
        }
    }

    /// Input word `i` for block counter 0, the key words read from `key`
    /// (this state's, or the same through an opaque pointer).
    #[inline(always)]
    fn word(&self, key: &[u32; 8], i: usize) -> u32 {
        match i {
            0..4 => SIGMA[i],
            4..12 => key[i - 4],
            12 => 0,
            _ => self.nonce[i - 13],
        }
    }

    /// Row 3 (block counter and nonce) for block `counter`.
    #[inline(always)]
    fn row3(&self, counter: u32) -> __m128i {
        // SAFETY: register-only SSE2 intrinsics (every x86-64 CPU).
        unsafe { _mm_add_epi32(self.nonce_row, _mm_cvtsi32_si128(counter as i32)) }
    }
}

/// What a horizontal call hashes between its rounds, one item per slot.
/// Each kind is its own type, its chain state held by value, so that the
/// call is compiled for the one it runs: behind a reference in an enum
/// matched at every slot, the one-chain state lived in memory (a load and
/// a store on its dependency chain at every block) and each slot paid for
/// the match and three bounds checks, about 30 instructions a block.
trait SlotRun {
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
struct NoRun;

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
struct OneChain<const FRESH: bool = false> {
    data: Hash,
    h: [u64; 3],
}

impl<const FRESH: bool> OneChain<FRESH> {
    /// # Safety
    /// `data` stays valid for reads, and unwritten, while the run absorbs.
    #[inline(always)]
    unsafe fn new(data: Hash, h: [u64; 3]) -> Self {
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
/// does (general registers are short: 784–816-byte `X86Avx2` opens 2 %
/// faster so); a vertical pass's steps (`absorb_step`) keep r in
/// registers.
struct TwoChains {
    data: Hash,
    chains: Chains,
}

impl TwoChains {
    /// # Safety
    /// As for [`OneChain::new`].
    #[inline(always)]
    unsafe fn new(data: Hash, chains: Chains) -> Self {
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
        // SAFETY: the bytes are valid and unwritten while the run absorbs
        // (`new`'s contract); the slice lives only for this step.
        let data = unsafe { self.data.bytes() };
        poly.chain_step::<false>(&mut self.chains, data, i);
    }
}

/// The longest run a horizontal call hashes in one chain: one block in
/// each of its 32 slots. Two chains halve the latency but add the power
/// r^L and the join, which cost more than they saved in these calls;
/// longer runs (zmm without IFMA, whose head and batches are a kilobyte)
/// take two.
const ONE_CHAIN_MAX: usize = 32 * 16;

/// For a horizontal call hashing `len` blocks or steps (at most 32), bit
/// `k` of entry `len` says whether slot `k` of its 32 takes one: item `i`
/// goes in slot `32 i / len`, so that they spread evenly over the call.
const SLOT_MASKS: [u32; 33] = {
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

/// The four words `w` in every 128-bit lane of `L`.
///
/// # Safety
/// The CPU has `L`'s features.
#[inline(always)]
unsafe fn row<L: Lanes>(w: &[u32; 4]) -> L {
    // SAFETY: the CPU has `L`'s features (this fn's contract); the load reads the 16 bytes of
    // `w`.
    unsafe { L::broadcast_row(_mm_loadu_si128(w.as_ptr().cast())) }
}

/// One ChaCha20 quarter round on four vectors (any layout).
#[inline(always)]
unsafe fn quarter<L: Lanes>(a: &mut L, b: &mut L, c: &mut L, d: &mut L) {
    // SAFETY: register-only `Lanes` methods; the CPU has `L`'s features (module contract).
    unsafe {
        *a = a.add(*b);
        *d = d.xor(*a).rotl16();
        *c = c.add(*d);
        *b = b.xor(*c).rotl12();
        *a = a.add(*b);
        *d = d.xor(*a).rotl8();
        *c = c.add(*d);
        *b = b.xor(*c).rotl7();
    }
}

/// `L::N` blocks from `counter` XORed from `input` into `output`
/// (`L::N * 64` bytes), with the Poly1305 of the bytes at `hash` (at most
/// that many, whole 32-byte steps) absorbed between the quarter rounds as
/// the width's [`Schedule`] says, in two chains or one.
///
/// # Safety
/// The CPU has `L`'s features; `input` and `output` point to `L::N * 64`
/// bytes (`input` may equal `output`), and `hash` is valid for reads (it
/// may be `output`: it is read before the stores).
#[inline(always)]
unsafe fn vertical<L: Lanes, const WIDE: bool>(
    state: &State,
    counter: u32,
    input: *const u8,
    output: *mut u8,
    poly: &mut Poly1305,
    hash: Option<Hash>,
    two_chains: bool,
) {
    // SAFETY: the CPU has `L`'s features and the pointers are valid as `vertical_run` needs
    // (this fn's contract, the same); `hash` is valid for reads while the kernel runs, and
    // the run reads it only in the rounds, before the stores that may overwrite it (open in
    // place): what the runs' `new` require.
    unsafe {
        let Some(h) = hash else {
            vertical_run::<L, WIDE, _>(state, counter, input, output, poly, NoRun);
            return;
        };
        let s = if WIDE { L::WIDE_SCHEDULE } else { L::SCHEDULE };
        debug_assert!(h.len / 32 <= s.steps(), "a run the schedule holds");
        if two_chains || WIDE {
            let run = TwoChains::new(h, poly.chains_begin(h.len / 32));
            let run = vertical_run::<L, WIDE, _>(state, counter, input, output, poly, run);
            poly.chains_end(run.chains);
        } else {
            let run = OneChain::<false>::new(h, poly.h());
            let run = vertical_run::<L, WIDE, _>(state, counter, input, output, poly, run);
            poly.set_h(run.h);
        }
    }
}

/// [`vertical`] with the run it hashes made: one chain or two, as
/// `two_chains` says (an open's wide first batch always takes two; see
/// [`two_chain_passes`]), or none.
///
/// # Safety
/// As for [`vertical`]; `run`'s bytes are read before the stores.
#[inline(always)]
unsafe fn vertical_run<L: Lanes, const WIDE: bool, R: SlotRun>(
    state: &State,
    counter: u32,
    input: *const u8,
    output: *mut u8,
    poly: &Poly1305,
    mut run: R,
) -> R {
    // SAFETY: the CPU has `L`'s features, `input`/`output` are valid for `L::N * 64` bytes
    // (this fn's contract), which is what `xor_vertical` needs.
    unsafe {
        let mut x = [L::splat(0); 16];
        for (i, xi) in x.iter_mut().enumerate() {
            *xi = L::splat(state.word(state.key, i));
        }
        x[12] = L::splat(counter).add(L::lane_index());
        // Only the counters are kept for the final addition; the other input
        // words are broadcast again then (on ymm, keeping all sixteen alive
        // through the rounds spilled).
        let x12 = x[12];
        let s = if WIDE { L::WIDE_SCHEDULE } else { L::SCHEDULE };
        let mut step = 0;
        // A double round; `$stitch` says whether it runs the schedule's chain
        // steps (the first `s.rounds` do, the rest do not: two loops, so that
        // neither tests the round number).
        macro_rules! double_round {
            ($stitch:expr) => {{
                let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = &mut x;
                macro_rules! steps {
                    ($q:literal) => {
                        if $stitch {
                            for _ in 0..s.after[$q] {
                                run.absorb_step(poly, step);
                                step += 1;
                            }
                        }
                    };
                }
                quarter(x0, x4, x8, x12);
                steps!(0);
                quarter(x1, x5, x9, x13);
                steps!(1);
                quarter(x2, x6, x10, x14);
                steps!(2);
                quarter(x3, x7, x11, x15);
                steps!(3);
                quarter(x0, x5, x10, x15);
                steps!(4);
                quarter(x1, x6, x11, x12);
                steps!(5);
                quarter(x2, x7, x8, x13);
                steps!(6);
                quarter(x3, x4, x9, x14);
                steps!(7);
            }};
        }
        for _ in 0..s.rounds {
            double_round!(true);
        }
        for _ in s.rounds..10 {
            double_round!(false);
        }
        for _ in 0..s.end {
            run.absorb_step(poly, step);
            step += 1;
        }
        // Read through an opaque pointer, so the compiler cannot reuse the
        // broadcasts from the start (kept alive through the rounds, they were
        // spilled and the key words left on the stack).
        let key = core::hint::black_box(state.key);
        for (i, xi) in x.iter_mut().enumerate() {
            let init = if i == 12 {
                x12
            } else {
                L::splat(state.word(key, i))
            };
            *xi = xi.add(init);
        }
        L::xor_vertical(&x, input, output);
        run
    }
}

/// `out.len() / 64` blocks (whole blocks, at most `SETS * L::ROW_BLOCKS`)
/// from `counter` in the horizontal layout, with `run`'s blocks (one
/// chain) or steps (two) absorbed one per slot, spread evenly over the
/// call's 32 slots (three per double round, two at the end).
#[inline(always)]
unsafe fn horizontal<L: Lanes, const SETS: usize, R: SlotRun>(
    state: &State,
    counter: u32,
    out: &mut [u8],
    poly: &Poly1305,
    mut run: R,
) -> R {
    // SAFETY: the CPU has `L`'s features (module contract); the assert bounds `out`, and each
    // `store_rows` writes `n * 64` bytes at block `first`, with `first + n <= out.len() / 64`;
    // the slots absorb items `0..run.items()`, one per set bit of its mask (`SLOT_MASKS`).
    unsafe {
        assert!(out.len().is_multiple_of(64) && out.len() <= SETS * L::ROW_BLOCKS * 64);
        let key = state.key;
        let (a0, b0, c0) = (
            row::<L>(&SIGMA),
            row::<L>(key[..4].try_into().expect("4 words")),
            row::<L>(key[4..].try_into().expect("4 words")),
        );
        // Row 3 of set `s` (block counters and nonce): made again for the
        // final addition rather than held through the rounds, where it
        // took a register per set.
        // (A macro, not a closure: a closure does not get the caller's
        // target features.)
        macro_rules! row3 {
            ($s:expr) => {
                L::broadcast_row(state.row3(counter.wrapping_add(($s * L::ROW_BLOCKS) as u32)))
                    .row_counters()
            };
        }
        let mut d = [L::splat(0); SETS];
        for (s, d) in d.iter_mut().enumerate() {
            *d = row3!(s);
        }
        let (mut a, mut b, mut c) = ([a0; SETS], [b0; SETS], [c0; SETS]);
        // The run spreads evenly over the call's 32 slots (see
        // `SLOT_MASKS`): the call is latency-bound, so bunching it in its
        // first rounds made it wait on it.
        let len = run.items();
        let mask = SLOT_MASKS[len];
        let mut next = 0;
        macro_rules! slot {
            ($k:expr) => {
                if mask >> $k & 1 == 1 {
                    run.absorb(poly, next);
                    next += 1;
                }
            };
        }
        for round in 0..10 {
            slot!(3 * round);
            for s in 0..SETS {
                quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
                b[s] = b[s].shuffle::<0x39>();
                c[s] = c[s].shuffle::<0x4e>();
                d[s] = d[s].shuffle::<0x93>();
            }
            slot!(3 * round + 1);
            for s in 0..SETS {
                quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
                b[s] = b[s].shuffle::<0x93>();
                c[s] = c[s].shuffle::<0x4e>();
                d[s] = d[s].shuffle::<0x39>();
            }
            slot!(3 * round + 2);
        }
        slot!(30);
        slot!(31);
        debug_assert_eq!(next, len, "every block");
        let blocks = out.len() / 64;
        // The input rows again, through an opaque pointer (as in `vertical`).
        let key = core::hint::black_box(state.key);
        let (a0, b0, c0) = (
            row::<L>(&SIGMA),
            row::<L>(key[..4].try_into().expect("4 words")),
            row::<L>(key[4..].try_into().expect("4 words")),
        );
        for s in 0..SETS {
            let first = s * L::ROW_BLOCKS;
            if first < blocks {
                let rows = [a[s].add(a0), b[s].add(b0), c[s].add(c0), d[s].add(row3!(s))];
                let n = (blocks - first).min(L::ROW_BLOCKS);
                L::store_rows(rows, out[first * 64..].as_mut_ptr(), n);
            }
        }
        run
    }
}

/// 2, 4, 6 or 8 blocks (`out.len()` 128, 256, 384 or 512) in the
/// latency-hiding horizontal layout, for short records.
#[inline(always)]
unsafe fn keystream_small<L: Lanes>(state: &State, counter: u32, out: &mut [u8], poly: &Poly1305) {
    // SAFETY: the CPU has `L`'s features (module contract); `horizontal` checks `out`.
    unsafe {
        macro_rules! call {
            ($lanes:ty, $out:expr, $counter:expr) => {{
                let blocks = $out.len() / 64;
                let sets = blocks.div_ceil(<$lanes>::ROW_BLOCKS);
                match sets {
                    1 => {
                        horizontal::<$lanes, 1, _>(state, $counter, $out, poly, NoRun);
                    }
                    2 => {
                        horizontal::<$lanes, 2, _>(state, $counter, $out, poly, NoRun);
                    }
                    3 => {
                        horizontal::<$lanes, 3, _>(state, $counter, $out, poly, NoRun);
                    }
                    4 => {
                        horizontal::<$lanes, 4, _>(state, $counter, $out, poly, NoRun);
                    }
                    _ => unreachable!("2, 4, 6 or 8 blocks"),
                }
            }};
        }
        match out.len() {
            128 => call!(L::Pair, out, counter),
            // Three sets of two-block rows (see `three_sets`).
            384 if L::ROW_BLOCKS > 2 => call!(L::Pair, out, counter),
            _ if out.len() / 64 <= L::MAX_SETS * L::ROW_BLOCKS => call!(L, out, counter),
            _ => {
                // More sets than registers allow: two calls.
                let (lo, hi) = out.split_at_mut(out.len() / 2);
                call!(L, lo, counter);
                call!(L, hi, counter.wrapping_add((lo.len() / 64) as u32));
            }
        }
    }
}

/// Keystream for the last `blocks` blocks of a record (1 ..= `L::N`) from
/// `counter` into `ks`, made by `call` (see [`tail_call`]), with the
/// Poly1305 of `run` (as [`tail_run_len`] makes it) absorbed between the
/// rounds. Returns the keystream, `blocks * 64` bytes of `ks`; `ks` must
/// hold [`tail_footprint`] bytes.
///
/// # Safety
/// The CPU has `L`'s features; `run` is valid for reads and does not
/// overlap `ks`.
#[inline(always)]
unsafe fn keystream_tail<'k, L: Lanes>(
    state: &State,
    counter: u32,
    ks: &'k mut [u8],
    blocks: usize,
    call: TailCall,
    poly: &mut Poly1305,
    run: Option<Hash>,
) -> &'k [u8] {
    // SAFETY: the CPU has `L`'s features and `run` is valid for reads (this fn's contract);
    // `horizontal` checks its output length, and the vertical pass gets one pointer to `ks`
    // (asserted to hold the `L::N * 64` bytes it reads and writes) for input and output.
    unsafe {
        assert!((1..=L::N).contains(&blocks), "a tail of 1 ..= N blocks");
        debug_assert!(run.is_none_or(|r| tail_run_len::<L>(call, r.len) == r.len));
        // A vertical pass XORs its keystream into zeroed scratch.
        macro_rules! vertical_tail {
            ($wide:literal, $two_chains:expr) => {{
                let out = &mut ks[..L::N * 64];
                out.fill(0);
                let p = out.as_mut_ptr();
                vertical::<L, $wide>(state, counter, p, p, poly, run, $two_chains);
                return &ks[..blocks * 64];
            }};
        }
        match call {
            TailCall::Vertical { two_chains } => vertical_tail!(false, two_chains),
            // The wide schedule always takes two chains.
            TailCall::Wide => vertical_tail!(true, true),
            TailCall::Horizontal => {}
        }
        let out = &mut ks[..blocks * 64];
        // No run is an empty one (a dangling pointer is valid for 0 bytes).
        let data = run.unwrap_or(Hash::new(core::ptr::NonNull::dangling().as_ptr(), 0));
        macro_rules! call {
            ($lanes:ty, $run:expr) => {{
                match blocks.div_ceil(<$lanes>::ROW_BLOCKS) {
                    1 => horizontal::<$lanes, 1, _>(state, counter, out, poly, $run),
                    2 => horizontal::<$lanes, 2, _>(state, counter, out, poly, $run),
                    3 => horizontal::<$lanes, 3, _>(state, counter, out, poly, $run),
                    _ => horizontal::<$lanes, 4, _>(state, counter, out, poly, $run),
                }
            }};
        }
        // No run is an empty one-chain run: one instantiation fewer. The
        // run's bytes do not overlap `ks`, which the call writes (this fn's
        // contract). r is read fresh at every block: the call's loop needs
        // every general register, and holding r there, the compiler spilled
        // a limb of h on the chain instead in some builds (a store and a
        // load at every block, 5-7 % on a 464-byte record).
        if data.len <= ONE_CHAIN_MAX {
            let run = OneChain::<true>::new(data, poly.h());
            let run = if blocks <= 2 {
                call!(L::Pair, run)
            } else {
                call!(L, run)
            };
            poly.set_h(run.h);
        } else {
            let run = TwoChains::new(data, poly.chains_begin(data.len / 32));
            let run = if blocks <= 2 {
                call!(L::Pair, run)
            } else {
                call!(L, run)
            };
            poly.chains_end(run.chains);
        }
        &ks[..blocks * 64]
    }
}

/// How [`keystream_tail`] makes a tail's keystream.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TailCall {
    /// One horizontal call of up to `L::MAX_SETS` sets (latency-bound).
    Horizontal,
    /// A vertical pass: more blocks than one horizontal call's registers
    /// hold; its run in two chains or one (see [`two_chain_passes`]).
    Vertical { two_chains: bool },
    /// A vertical pass on the wide schedule, for an open without a batch
    /// whose tail has at least `L::WIDE_TAIL_MIN` blocks: it hashes the
    /// whole record, as an open's first batch does. On ymm, 7 and 8 blocks
    /// (848–959-byte records) measured 2–3 % faster so than in a
    /// horizontal call of four sets, which is bound by its vector
    /// instructions (shuffles included) and hashed in the 32 slots around
    /// them; 6 blocks (three sets) measured 3–8 % slower so.
    Wide,
}

/// How the tail of `blocks` blocks is made; `open_without_batch`: the
/// record is opened and has no batch (the tail's call may hash it all);
/// `two_chains`: the record's vertical passes hash in two chains.
#[inline(always)]
const fn tail_call<L: Lanes>(
    blocks: usize,
    open_without_batch: bool,
    two_chains: bool,
) -> TailCall {
    if open_without_batch && blocks >= L::WIDE_TAIL_MIN {
        TailCall::Wide
    } else if blocks > L::MAX_SETS * L::ROW_BLOCKS {
        TailCall::Vertical { two_chains }
    } else {
        TailCall::Horizontal
    }
}

/// The bytes of scratch [`keystream_tail`] writes for `blocks` blocks.
#[inline(always)]
const fn tail_footprint<L: Lanes>(call: TailCall, blocks: usize) -> usize {
    match call {
        TailCall::Horizontal => blocks * 64,
        TailCall::Vertical { .. } | TailCall::Wide => L::N * 64,
    }
}

/// The run the tail's call hashes out of `avail` pending bytes. A
/// horizontal call hashes whole blocks in one chain, up to
/// [`ONE_CHAIN_MAX`], leaving less than [`ONE_CHAIN_SLACK`] more to hash
/// after it, or else whole two-chain steps, one per slot; a vertical pass whole
/// two-chain steps, up to its schedule's. (A valid run is one this
/// returns unchanged.)
#[inline(always)]
const fn tail_run_len<L: Lanes>(call: TailCall, avail: usize) -> usize {
    let blocks = avail / 16 * 16;
    let steps = avail / 32 * 32;
    let capacity = match call {
        TailCall::Horizontal if blocks <= ONE_CHAIN_MAX => return blocks,
        // (`<`: a two-chain run is then at least the bound, and valid.)
        TailCall::Horizontal if blocks < ONE_CHAIN_MAX + ONE_CHAIN_SLACK => return ONE_CHAIN_MAX,
        // `horizontal`: 32 slots.
        TailCall::Horizontal => 32 * 32,
        TailCall::Vertical { .. } => const { 32 * L::SCHEDULE.steps() },
        TailCall::Wide => const { 32 * L::WIDE_SCHEDULE.steps() },
    };
    if steps < capacity {
        steps
    } else {
        capacity
    }
}

/// How much more than [`ONE_CHAIN_MAX`] pending bytes may be when a
/// horizontal tail call still hashes one chain, the rest after it. On ymm
/// (opens of 529–800 bytes without a batch, measured before those up to
/// 576 bytes took the short path) that measured 2–8 % faster than two
/// chains up to 224 bytes over, the same at 288 and slower from 384: two chains in a call cost r^L and the join, about seven blocks'
/// worth, and a serial block about 13 cycles.
const ONE_CHAIN_SLACK: usize = 256;

/// Seals or opens `buf` (the plaintext is `src` followed by
/// `buf[src.len()..]` when sealing) and returns the tag. `ks` is zeroed
/// scratch of [`seal_scratch_len`] bytes to seal, [`scratch_len`] to open,
/// wiped again before returning. With `IFMA`, serial Poly1305 runs take the
/// IFMA Poly1305.
///
/// # Safety
/// The CPU has `L`'s features, and AVX-512 IFMA if `IFMA`.
#[inline(always)]
pub(super) unsafe fn crypt<L: Lanes, const IFMA: bool>(
    key: &[u32; 8],
    ks: &mut [u8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features, and IFMA where `IFMA` (this fn's contract: what
    // `padded_serial::<IFMA>` needs). Every raw pointer derives from
    // `ks`, `src` or `buf` as a whole: vertical passes on `ks` stay in its first `L::N * 64 <=
    // scratch_len` bytes (asserted); the head is `head <= n` bytes, read from `src` only if
    // `from_src >= head`;
    // each batch `[off, off + batch)` ends at or below `batches_end <= n`, reads `src` only if
    // it ends at or below `from_src <= src.len()`, and hashes bytes of `buf` below its end
    // (a seal's region before it, already written; an open's head and its own ciphertext,
    // read before its stores); the tail's call hashes `[pending, pending + run_len)`, at or
    // below `n`, and writes only its scratch.
    unsafe {
        assert!(src.len() <= buf.len(), "prefix longer than the buffer");
        let scratch = match dir {
            Direction::Seal => seal_scratch_len::<L>(),
            Direction::Open => scratch_len::<L>(),
        };
        assert_eq!(ks.len(), scratch, "keystream scratch");
        debug_assert!(ks.iter().all(|&b| b == 0), "zeroed scratch");
        let n = buf.len();
        // Block counter 0 is the Poly1305 key; data uses 1 ..= 2³²−1 and the
        // counter must never wrap within one message.
        assert!(counter_fits(n), "ChaCha20-Poly1305 message too long");
        // Short records take `small` (the entry points route them there).
        assert!(n > SMALL, "a record longer than SMALL");
        let state = State::new(key, nonce);
        let two_chains = two_chain_passes::<L>(n);
        // A wide tail's pass fits above pass 0 in an open's scratch.
        const {
            assert!(L::WIDE_TAIL_MIN == usize::MAX || 2 * L::N * 64 <= scratch_len::<L>());
        };

        // Region boundaries: head [0, head_max), batches, tail. Plaintext
        // comes from `src` for whole regions inside it, from `buf` after that.
        // The head is what one vertical pass from counter 0 covers after the
        // Poly1305 key block.
        let batch = L::N * 64;
        let head_max = batch - 64;
        let head = head_max.min(n);
        let batches_end = head + (n - head) / batch * batch;
        let from_src = if src.len() >= batches_end {
            batches_end
        } else if src.len() >= head {
            head + (src.len() - head) / batch * batch
        } else {
            0
        };
        if from_src < src.len() {
            buf[from_src..src.len()].copy_from_slice(&src[from_src..]);
        }

        // Pass 0: block 0 (the Poly1305 key) and the head's keystream. It
        // hashes nothing, so its Poly1305 state is a placeholder.
        let mut poly = Poly1305::new(&[0; 32]);
        let ks_ptr = ks.as_mut_ptr();
        vertical::<L, false>(&state, 0, ks_ptr, ks_ptr, &mut poly, None, false);
        poly.reset(ks[..32].try_into().expect("32 bytes"));
        poly.padded(aad);

        if IFMA && n > head_max && n <= PHASED_MAX {
            crypt_phased::<L>(&state, ks, &mut poly, src, buf, from_src, dir);
            let tag = finish(&mut poly, aad.len(), n);
            wipe(ks);
            return tag;
        }

        // Every pointer into `buf` from here on derives from this one.
        let base = buf.as_mut_ptr();
        // Ciphertext not yet hashed starts at `pending` (whole 16-byte blocks
        // unless it ends the message). A seal hashes each region during the
        // next pass; an open hashes each batch during its own pass, the head
        // during the first batch's or, with no batch, the tail's (or before
        // it, if its keystream cannot wait), XORing it only then.
        let mut pending = 0;
        let len = n - batches_end;
        let blocks = len.div_ceil(64);
        // The head's keystream then waits where pass 0 left it, and the
        // tail's goes above pass 0, where there is room (always for a
        // horizontal tail).
        let open_without_batch = dir == Direction::Open && batches_end == head;
        let call = tail_call::<L>(blocks, open_without_batch, two_chains);
        let head_later = open_without_batch
            && (blocks == 0 || tail_footprint::<L>(call, blocks) <= ks.len() - L::N * 64);
        match dir {
            Direction::Seal => {
                let head_in = plaintext_at(src, base, from_src, 0, head);
                L::xor_bytes(head_in, base, &ks[64..64 + head]);
            }
            // The first batch hashes the head, or the tail's call does, if
            // there is room to keep its keystream; else it is hashed now.
            Direction::Open if batches_end == head && !head_later => {
                poly.padded(&buf[..head]);
                L::xor_bytes(base, base, &ks[64..64 + head]);
                pending = head;
            }
            Direction::Open => {}
        }
        let mut counter = 1 + (head_max / 64) as u32;
        let mut off = head;
        match dir {
            Direction::Seal => {
                // The first batch hashes the head, the others the batch before
                // (two loops, so that each hash length is a constant).
                macro_rules! seal_batch {
                    ($hash_len:expr) => {{
                        let input = plaintext_at(src, base, from_src, off, off + batch);
                        let hash = Hash::new(base.add(off - $hash_len), $hash_len);
                        vertical::<L, false>(
                            &state,
                            counter,
                            input,
                            base.add(off),
                            &mut poly,
                            Some(hash),
                            two_chains,
                        );
                        pending = off;
                        counter = counter.wrapping_add(L::N as u32);
                        off += batch;
                    }};
                }
                if off < batches_end {
                    debug_assert_eq!(head, head_max);
                    seal_batch!(head_max);
                }
                while off < batches_end {
                    seal_batch!(batch);
                }
            }
            Direction::Open => {
                // Each batch hashes its own ciphertext before its stores, the
                // first one the head's too (then XORed).
                if off < batches_end {
                    debug_assert_eq!(head, head_max);
                    let hash = Hash::new(base, head_max + batch);
                    let p = base.add(off);
                    vertical::<L, true>(&state, counter, p, p, &mut poly, Some(hash), two_chains);
                    L::xor_bytes(base, base, &ks[64..64 + head]);
                    counter = counter.wrapping_add(L::N as u32);
                    off += batch;
                    pending = off;
                }
                while off < batches_end {
                    let p = base.add(off);
                    vertical::<L, false>(
                        &state,
                        counter,
                        p,
                        p,
                        &mut poly,
                        Some(Hash::new(p, batch)),
                        two_chains,
                    );
                    counter = counter.wrapping_add(L::N as u32);
                    off += batch;
                    pending = off;
                }
            }
        }

        // Tail: less than a batch, with the cheapest keystream that covers
        // it. Its call hashes, between its rounds, what is pending (a seal:
        // the last region; an open: the head if still pending, and the
        // tail's own ciphertext), as far as whole steps and the call's
        // capacity go; the rest is hashed around it.
        if blocks == 0 {
            // A seal's pending head ends the message; an open hashed it.
            padded_serial::<IFMA>(&mut poly, &buf[pending..n]);
            if head_later {
                L::xor_bytes(base, base, &ks[64..64 + head]);
            }
        } else {
            let stop = match dir {
                Direction::Seal => off,
                Direction::Open => n,
            };
            // With IFMA, a long pending run is hashed on the vector Poly1305
            // before a horizontal call instead of by scalar chains between
            // its rounds: that call is latency-bound and leaves the vector
            // units mostly idle, and the chain steps made it as long as the
            // run, not the keystream (a vertical tail fills the vector units
            // and hides the chains). An open hashes everything then.
            if IFMA && call == TailCall::Horizontal && stop - pending >= IFMA_MIN {
                padded_serial::<IFMA>(&mut poly, &buf[pending..stop]);
                pending = stop;
            }
            let run_len = tail_run_len::<L>(call, stop - pending);
            let run = (run_len > 0).then(|| Hash::new(base.add(pending), run_len));
            // A later head's keystream stays where pass 0 left it; the
            // tail's goes above.
            let (pass0, above) = ks.split_at_mut(L::N * 64);
            let (scratch, head_ks) = if head_later {
                (above, &pass0[64..64 + head])
            } else {
                (&mut *ks, &[][..])
            };
            let tail_ks =
                keystream_tail::<L>(&state, counter, scratch, blocks, call, &mut poly, run);
            pending += run_len;
            if dir == Direction::Seal {
                let tail = buf[off..].as_mut_ptr();
                L::xor_bytes(tail, tail, &tail_ks[..len]);
                // What the call could not take of the last region (whole
                // steps), then the tail.
                padded_serial::<IFMA>(&mut poly, &buf[pending..]);
            } else {
                padded_serial::<IFMA>(&mut poly, &buf[pending..]);
                let p = base.add(off);
                L::xor_bytes(p, p, &tail_ks[..len]);
                if head_later {
                    L::xor_bytes(base, base, head_ks);
                }
            }
        }
        // The tag first: Poly1305's key would otherwise be live across the
        // wipe's `memset` call and spilled (the stack-residue test).
        let tag = finish(&mut poly, aad.len(), n);
        wipe(ks);
        tag
    }
}

/// Whether an `n`-byte record's vertical passes hash in two chains (an
/// open's wide first pass always does). One chain costs no power r^L and
/// no join per pass, about seven blocks' worth of instructions, but the
/// record's whole hash is then one dependency chain of about 13 cycles a
/// block: on ymm and xmm it measured faster up to 4 KiB, slower beyond;
/// zmm passes hash 64 blocks each, more than their rounds take for one chain.
#[inline(always)]
const fn two_chain_passes<L: Lanes>(n: usize) -> bool {
    L::TWO_CHAIN_PASSES || n > ONE_CHAIN_RECORD_MAX
}

/// The longest record whose vertical passes hash in one chain where the
/// width allows it (see [`two_chain_passes`]).
const ONE_CHAIN_RECORD_MAX: usize = 4096;

/// The longest record the IFMA engine takes in phases ([`crypt_phased`]).
const PHASED_MAX: usize = 4096;

/// A record on the IFMA engine longer than pass 0's head and at most
/// [`PHASED_MAX`] bytes, after pass 0 (its keystream in `ks`) and the
/// AAD: the rest of its keystream in passes and a tail call that hash
/// nothing, and its whole hash in one IFMA Poly1305 run (whole 128-byte
/// steps, then the remainder scalar), before any XOR for an open, after
/// the last for a seal. Stitched scalar chains made these records wait on
/// Poly1305 where no wide pass runs: the tail call, and a seal's hash of
/// its tail after it. The lengths block is the caller's.
///
/// # Safety
/// The CPU has `L`'s features and AVX-512 IFMA; `ks` is `crypt`'s
/// scratch with pass 0's keystream, `from_src` as `crypt` made it and
/// `buf` already holds `src[from_src..]`.
#[inline(always)]
unsafe fn crypt_phased<L: Lanes>(
    state: &State,
    ks: &mut [u8],
    poly: &mut Poly1305,
    src: &[u8],
    buf: &mut [u8],
    from_src: usize,
    dir: Direction,
) {
    // SAFETY: the CPU has the features (this fn's contract: `padded_serial::<true>` needs
    // IFMA). Every pointer derives from `src`, `buf` (`base`) or `ks`: the head is `head < n`
    // bytes, read from `src` only if `from_src >= head`; each batch `[off, off + batch)` ends at
    // or below `batches_end <= n` and reads `src` only if it ends at or below `from_src <=
    // src.len()`; no reference into `buf` is alive while they are used.
    unsafe {
        let n = buf.len();
        let batch = L::N * 64;
        let head = batch - 64;
        assert!(n > head, "longer than the head");
        let batches_end = head + (n - head) / batch * batch;
        let seal = dir == Direction::Seal;

        // An open hashes its ciphertext first, a seal after all of it is
        // written: one IFMA run each (whole steps, then the remainder).
        // Issuing a seal's steps between its passes measured slower.
        if !seal {
            padded_serial::<true>(poly, buf);
        }
        // Every pointer into `buf` until the seal's hash derives from this.
        let base = buf.as_mut_ptr();
        let head_in = plaintext_at(src, base, from_src, 0, head);
        L::xor_bytes(head_in, base, &ks[64..64 + head]);
        let mut counter = 1 + (head / 64) as u32;
        let mut off = head;
        let len = n - batches_end;
        while off < batches_end {
            let end = off + batch;
            let input = plaintext_at(src, base, from_src, off, end);
            vertical::<L, false>(state, counter, input, base.add(off), poly, None, false);
            counter = counter.wrapping_add(L::N as u32);
            off = end;
        }
        if len > 0 {
            let blocks = len.div_ceil(64);
            let call = tail_call::<L>(blocks, false, false);
            let tail_ks = keystream_tail::<L>(state, counter, ks, blocks, call, poly, None);
            let tail = buf[off..].as_mut_ptr();
            L::xor_bytes(tail, tail, &tail_ks[..len]);
        }
        if seal {
            padded_serial::<true>(poly, buf);
        }
    }
}

/// Serial Poly1305 runs at least this long (bytes) take the IFMA
/// Poly1305 where the backend has it: below it, making the eight lanes'
/// powers of r cost more than the vector steps saved (measured on Zen 4:
/// 2–4 % slower at 449–480-byte records, 7–17 % faster from 512 to
/// 960 bytes).
const IFMA_MIN: usize = 512;

/// Absorbs `data`, zero-padded: a run no wide ChaCha20 pass overlaps
/// (what a record hashes after its last keystream, or before a horizontal
/// tail call, which is latency-bound). With `IFMA` (the CPU has AVX-512
/// IFMA) and at least [`IFMA_MIN`] bytes, its whole 128-byte steps run on
/// the vector Poly1305, which is idle there.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 IFMA if `IFMA`.
#[inline(always)]
unsafe fn padded_serial<const IFMA: bool>(poly: &mut Poly1305, data: &[u8]) {
    if IFMA && data.len() >= IFMA_MIN {
        let whole = data.len() / 16 * 16;
        // The blocks before the first whole step go the scalar way; the
        // vector run takes `h` and ends on the last whole step.
        let lead = whole % 128;
        poly.blocks(&data[..lead]);
        // Wiped on drop.
        let mut powers = poly1305_ifma::Powers::new();
        poly.ifma_powers(&mut powers);
        // SAFETY: the CPU has the features (this fn's contract); each step reads the 128 bytes
        // at `lead + 128 * i`, below `whole <= data.len()`.
        unsafe {
            let mut run = poly1305_ifma::begin(&powers, poly.h());
            let steps = (whole - lead) / 128;
            for i in 0..steps {
                let step = data[lead + 128 * i..][..128].as_ptr();
                poly1305_ifma::step(&mut run, &powers, step, i + 1 == steps);
            }
            poly.set_h(poly1305_ifma::end(&run));
        }
        poly.padded(&data[whole..]);
    } else {
        poly.padded(data);
    }
}

/// XORs `chunk` with `ks` in place and absorbs the ciphertext into Poly1305:
/// before the XOR when opening, after it when sealing.
#[inline(always)]
unsafe fn crypt_chunk<L: Lanes>(poly: &mut Poly1305, dir: Direction, chunk: &mut [u8], ks: &[u8]) {
    // SAFETY: the assert makes `chunk` valid for the `ks.len()` bytes `xor_bytes` reads and
    // writes.
    unsafe {
        assert_eq!(chunk.len(), ks.len(), "one keystream byte per byte");
        if dir == Direction::Open {
            poly.padded(chunk);
        }
        let p = chunk.as_mut_ptr();
        L::xor_bytes(p, p, ks);
        if dir == Direction::Seal {
            poly.padded(chunk);
        }
    }
}

/// Clears keystream scratch with one memset, behind `black_box` so it is
/// not elided. (`Zeroizing` would write it a volatile byte at a time, which
/// cost more than a short record.)
#[inline(always)]
fn wipe(scratch: &mut [u8]) {
    scratch.fill(0);
    core::hint::black_box(scratch);
}

/// A record of at most [`small_max`] bytes (`crypt_small` with its state).
///
/// # Safety
/// The CPU has `L`'s features.
#[inline(always)]
pub(super) unsafe fn small<L: Lanes>(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features (this fn's contract); the assert
    // below gives `crypt_small` the lengths it relies on.
    unsafe {
        assert!(
            src.len() <= buf.len() && buf.len() <= small_max::<L>(dir),
            "a short record"
        );
        crypt_small::<L>(&State::new(key, nonce), aad, src, buf, dir)
    }
}

/// Records of at most `SMALL` bytes: one horizontal call of 2, 4, 6 or 8
/// independent blocks yields the Poly1305 key and all the keystream, with a
/// scratch buffer sized for that alone (clearing a whole batch buffer cost
/// more than a short record).
#[inline(always)]
unsafe fn crypt_small<L: Lanes>(
    state: &State,
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features (module contract).
    unsafe {
        // The key block and the data's blocks, rounded up to 2, 4 or 8, or
        // to 6 in three sets of rows where `three_sets` says so; the
        // scratch is exactly that (zeroing and wiping the largest size for
        // every record cost a 16-byte record about 3 %); a ymm open longer
        // than `SMALL` takes 10 blocks, in two calls.
        match buf.len() {
            0..=64 => crypt_small_in::<L, 128>(state, aad, src, buf, dir),
            65..=192 => crypt_small_in::<L, 256>(state, aad, src, buf, dir),
            n if three_sets::<L>(n) => crypt_small_in::<L, 384>(state, aad, src, buf, dir),
            n if n <= SMALL => crypt_small_in::<L, 512>(state, aad, src, buf, dir),
            _ => crypt_small_in::<L, 640>(state, aad, src, buf, dir),
        }
    }
}

/// [`crypt_small`] with `USED` bytes of keystream scratch (at least
/// `buf.len() + 64`).
///
/// # Safety
/// The CPU has `L`'s features.
#[inline(always)]
unsafe fn crypt_small_in<L: Lanes, const USED: usize>(
    state: &State,
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features (module contract); the open's run reads `buf[..whole]`
    // during the call, which writes only `rest` (scratch), and the XOR after it reads and
    // writes the `n` bytes of `buf` with the `n` keystream bytes it is given.
    unsafe {
        let n = buf.len();
        if !src.is_empty() {
            buf[..src.len()].copy_from_slice(src);
        }
        let mut ks = [0u8; USED];
        // The key block comes first: the placeholder Poly1305 is not used.
        let mut poly = Poly1305::new(&[0; 32]);
        if dir == Direction::Open && USED >= 512 && L::ROW_BLOCKS == 2 {
            // An open of 321–576 bytes on ymm: the key block and block 1 in
            // one two-block call, then blocks 2–7 (2–9) in three (four)
            // sets that hash the ciphertext between their rounds, its
            // first 512 bytes (`ONE_CHAIN_MAX`; the rest after the call).
            // For 321–448 bytes one call of four sets is bound by its
            // vector instructions, not its latency, and the hash after it
            // was one more serial stage; for 449–576 bytes this measured
            // 7–12 % faster than pass 0 and a tail call (`crypt`).
            let (first, rest) = ks.split_at_mut(128);
            keystream_small::<L>(state, 0, first, &poly);
            poly.reset(first[..32].try_into().expect("32 bytes"));
            poly.padded(aad);
            let whole = n / 16 * 16;
            // r read fresh at every block: no stack scrub follows the
            // three-set calls, and kept in registers it spilled (opt-level 2).
            let hashed = whole.min(ONE_CHAIN_MAX);
            let run = OneChain::<true>::new(Hash::new(buf.as_ptr(), hashed), poly.h());
            let run = if USED == 512 {
                horizontal::<L, 3, _>(state, 2, rest, &poly, run)
            } else {
                horizontal::<L, 4, _>(state, 2, rest, &poly, run)
            };
            poly.set_h(run.h);
            poly.padded(&buf[hashed..]);
            let p = buf.as_mut_ptr();
            L::xor_bytes(p, p, &ks[64..64 + n]);
        } else {
            keystream_small::<L>(state, 0, &mut ks, &poly);
            poly.reset(ks[..32].try_into().expect("32 bytes"));
            poly.padded(aad);
            crypt_chunk::<L>(&mut poly, dir, buf, &ks[64..64 + n]);
        }
        // The tag first: Poly1305's key would otherwise be live across the
        // wipe's `memset` call and spilled (the stack-residue test).
        let tag = finish(&mut poly, aad.len(), n);
        wipe(&mut ks);
        tag
    }
}

/// Whether a short record of `n` bytes takes 6 blocks in three sets of
/// two-block rows (ymm), for 193 to 320 bytes: on ymm that measured 14 %
/// faster than four sets (the third set spills rows, none with key words
/// or keystream: no scrub); on zmm (whose 32 registers hold three ymm sets
/// without spills) it replaces two four-block sets, 8 blocks of work for 6.
#[inline(always)]
const fn three_sets<L: Lanes>(n: usize) -> bool {
    (L::ROW_BLOCKS == 2 || L::ROW_BLOCKS == 4) && n > 192 && n <= 320
}

/// Absorbs the lengths block and returns the tag.
#[inline(always)]
fn finish(poly: &mut Poly1305, aad_len: usize, n: usize) -> [u8; TAG_LEN] {
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(aad_len as u64).to_le_bytes());
    lengths[8..].copy_from_slice(&(n as u64).to_le_bytes());
    poly.blocks(&lengths);
    poly.finish()
}

/// The first `B` bytes of ChaCha20 block `inputs[i]` into `out[i]`, where
/// each input is the block's `LE32(counter) ‖ nonce` (RFC 8439 §2.3), in
/// vertical passes of `L::N` blocks (a single input takes the scalar block
/// instead: `Key::blocks`). The temporaries holding key and keystream are
/// wiped before returning.
///
/// # Safety
/// The CPU has `L`'s features; `out.len() == inputs.len()` and `B <= 16`.
#[inline(always)]
pub(super) unsafe fn independent_blocks<L: Lanes, const B: usize>(
    key: &[u32; 8],
    inputs: &[[u8; 16]],
    out: &mut [[u8; B]],
) {
    // SAFETY: the CPU has `L`'s features (this fn's contract); `xor_vertical` gets one pointer
    // to `ks[..L::N * 64]` for input and output, and the volatile writes target elements of the
    // local `x`.
    unsafe {
        let state = State::new(key, &[0; NONCE_LEN]);
        let mut ks = [0u8; MAX_BATCH];
        for (chunk, outs) in inputs.chunks(L::N).zip(out.chunks_mut(L::N)) {
            // Words 12..16 of every block, lane-major per word.
            let mut words = [[0u32; 16]; 4];
            for (lane, input) in chunk.iter().enumerate() {
                for (w, bytes) in words.iter_mut().zip(input.chunks_exact(4)) {
                    w[lane] = u32::from_le_bytes(bytes.try_into().expect("4 bytes"));
                }
            }
            let mut x = [L::splat(0); 16];
            for (i, xi) in x.iter_mut().enumerate().take(12) {
                *xi = L::splat(state.word(key, i));
            }
            for (i, w) in words.iter().enumerate() {
                x[12 + i] = L::load_lanes(&w[..L::N]);
            }
            let init = x;
            for _ in 0..10 {
                let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = &mut x;
                quarter(x0, x4, x8, x12);
                quarter(x1, x5, x9, x13);
                quarter(x2, x6, x10, x14);
                quarter(x3, x7, x11, x15);
                quarter(x0, x5, x10, x15);
                quarter(x1, x6, x11, x12);
                quarter(x2, x7, x8, x13);
                quarter(x3, x4, x9, x14);
            }
            for (xi, i) in x.iter_mut().zip(init) {
                *xi = xi.add(i);
            }
            let ks = &mut ks[..L::N * 64];
            ks.fill(0);
            let p = ks.as_mut_ptr();
            L::xor_vertical(&x, p, p);
            for (lane, o) in outs.iter_mut().enumerate() {
                o.copy_from_slice(&ks[lane * 64..lane * 64 + B]);
            }
            for v in x.iter_mut() {
                core::ptr::write_volatile(v, L::splat(0));
            }
        }
        wipe(&mut ks);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn block_counter_never_wraps() {
        assert!(super::counter_fits(0));
        assert!(
            super::counter_fits((1 << 38) - 64),
            "counter 2^32-1 is the last block"
        );
        assert!(
            !super::counter_fits((1 << 38) - 63),
            "one more byte would wrap the counter"
        );
    }
}
