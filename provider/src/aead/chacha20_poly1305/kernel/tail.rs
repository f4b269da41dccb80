//! A record's last blocks: how the tail's keystream is made and which
//! pending ciphertext its call hashes.

use super::super::poly1305::Poly1305;
use super::lanes::Lanes;
use super::rounds::{horizontal, vertical};
use super::slots::{Hash, OneChain, TwoChains, ONE_CHAIN_MAX};
use super::state::State;

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
pub(super) unsafe fn keystream_tail<'k, L: Lanes>(
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
                    1 => horizontal::<$lanes, 1, _>(state, counter, out, poly, $run, false),
                    2 => horizontal::<$lanes, 2, _>(state, counter, out, poly, $run, false),
                    3 => horizontal::<$lanes, 3, _>(state, counter, out, poly, $run, false),
                    _ => horizontal::<$lanes, 4, _>(state, counter, out, poly, $run, false),
                }
            }};
        }
        // No run is an empty one-chain run: one instantiation fewer. The
        // run's bytes do not overlap `ks`, which the call writes (this fn's
        // contract). r is read fresh at every block: the call's loop needs
        // every general register, and with r held there some builds spill a
        // limb of h on the chain instead, a store and a load at every block
        // (docs/decisions.md, "ChaCha20-Poly1305 record shapes (Intel Xeon)").
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
pub(super) enum TailCall {
    /// One horizontal call of up to `L::MAX_SETS` sets (latency-bound).
    Horizontal,
    /// A vertical pass: more blocks than one horizontal call's registers
    /// hold; its run in two chains or one (see [`two_chain_passes`]).
    Vertical { two_chains: bool },
    /// A vertical pass on the wide schedule, for an open without a batch
    /// whose tail has at least `L::WIDE_TAIL_MIN` blocks: it hashes the
    /// whole record, as an open's first batch does. On ymm, 7 and 8 blocks
    /// (848–959-byte records) run faster so than in a horizontal call of
    /// four sets, which is bound by its vector instructions (shuffles
    /// included) and hashed in the 32 slots around them; 6 blocks (three
    /// sets) run slower so (docs/decisions.md, "ChaCha20-Poly1305 record
    /// shapes (Intel Xeon)").
    Wide,
}

/// How the tail of `blocks` blocks is made; `open_without_batch`: the
/// record is opened and has no batch (the tail's call may hash it all);
/// `two_chains`: the record's vertical passes hash in two chains.
#[inline(always)]
pub(super) const fn tail_call<L: Lanes>(
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
pub(super) const fn tail_footprint<L: Lanes>(call: TailCall, blocks: usize) -> usize {
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
pub(super) const fn tail_run_len<L: Lanes>(call: TailCall, avail: usize) -> usize {
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
/// horizontal tail call still hashes one chain, the rest after it: two
/// chains in a call cost r^L and the join, about seven blocks' worth, and
/// a serial block about 13 cycles, so on ymm one chain wins while the rest
/// is short (docs/decisions.md, "ChaCha20-Poly1305 record shapes (Intel
/// Xeon)").
pub(super) const ONE_CHAIN_SLACK: usize = 256;
