//! What the x86-64 ChaCha20-Poly1305 engines share: the record logic
//! (state, stitched hash, head, batches, tail, wipe) and one ChaCha20
//! kernel — quarter round, vertical kernel, horizontal short call — generic
//! over the vector type ([`Lanes`]: xmm for SSSE3, ymm for AVX2, zmm for
//! AVX-512). Each backend file implements `Lanes` for its type and
//! instantiates the engine with [`backend!`] inside its own
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

//!
//! # Layout
//! [`lanes`] (the lane trait), [`slots`] (what a call hashes between its
//! rounds), [`state`] (a record's inputs and scratch), [`kernel`] (quarter
//! round, vertical kernel, horizontal call), [`record`] (one record in
//! passes), [`tail`] (its last blocks), `phased` (the IFMA engine's
//! medium records; x86-64 only), [`short`] (the short path), [`blocks`] (independent
//! blocks for QUIC), [`backend`] (the key type over a backend's entry
//! points) and [`entries`] (the macro each backend file instantiates).

mod backend;
mod blocks;
mod entries;
mod lanes;
#[cfg(target_arch = "x86_64")]
mod phased;
mod record;
mod rounds;
mod short;
mod slots;
mod state;
mod tail;

pub(super) use crate::aead::Direction;
pub(crate) use backend::Entry;
pub(super) use backend::{Blocks, Key};
pub(super) use blocks::{independent_blocks, one_block};
pub(super) use entries::{backend, record_entries};
pub(super) use lanes::Lanes;
pub(super) use lanes::Schedule;
pub(super) use record::{crypt, scratch_len, seal_scratch_len, Scratch};
pub(super) use short::small;
pub(super) use state::{check, key_words, le_words};

use short::{split_seal, three_sets};

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

/// Whether a short record of `n` bytes runs a call of four ymm sets (an
/// open of 449–576 bytes; a seal of 321–448 takes three sets and one, see
/// `split_seal`, whose second call reads the key through an opaque
/// pointer so that no key row of the first stays live across the XOR
/// between them): its 16 state rows and the
/// input rows of the final addition outnumber the 16 ymm registers, and
/// the compiler spills state rows there. Rows of a block's last state
/// before that addition, with its keystream (known wherever the plaintext
/// is), give the key words, so the frame is scrubbed after such a call
/// (`tests/stack_residue/` searches every intermediate state). Lane
/// types whose calls of more than two blocks spill (NEON's register
/// pairs) set [`Lanes::SHORT_SPILLS_OVER`]: every longer short record
/// scrubs its frame.
pub(super) const fn small_spills<L: Lanes>(dir: Direction, n: usize) -> bool {
    // As `crypt_small` routes them: a seal past 192 bytes not in three
    // sets or split takes one call of four; an open past `SMALL`, a call
    // of two blocks and one of four sets.
    n > L::SHORT_SPILLS_OVER
        || L::ROW_BLOCKS == 2
            && match dir {
                Direction::Seal => n > 192 && !three_sets::<L>(n) && !split_seal::<L>(n),
                Direction::Open => n > SMALL,
            }
}

/// ChaCha20's "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Whether an `n`-byte message keeps the data block counter in 1 ..= 2³²−1.
const fn counter_fits(n: usize) -> bool {
    (n as u64).div_ceil(64) < 1 << 32
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
