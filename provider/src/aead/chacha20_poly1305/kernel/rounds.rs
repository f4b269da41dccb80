//! The ChaCha20 kernels: the quarter round, the vertical kernel (one block
//! per lane, Poly1305 steps between its rounds) and the horizontal call
//! (one block per 128-bit lane, slot runs between its rounds).

use super::super::poly1305::Poly1305;
use super::lanes::{row, Lanes};
use super::slots::{Hash, NoRun, OneChain, SlotRun, TwoChains, SLOT_MASKS};
use super::state::State;
use super::SIGMA;

/// One ChaCha20 quarter round on four vectors (any layout).
#[inline(always)]
pub(super) unsafe fn quarter<L: Lanes>(a: &mut L, b: &mut L, c: &mut L, d: &mut L) {
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

/// [`quarter`] with each XOR-rotate as [`Lanes::xor_rotl16`] and the
/// others: two cycles after the add it waits on instead of three, so a
/// latency-bound call's double round is 24 cycles instead of 32 on AVX-512
/// (docs/decisions.md, "ChaCha20 rotations off the chain"). Only where the
/// engine's `Lanes::FUSED_PAIR` allows (those methods need AVX-512VL there)
/// and the key chose it (`Features::rotate_slow`: Zen 4).
#[inline(always)]
pub(super) unsafe fn quarter_fused<L: Lanes>(a: &mut L, b: &mut L, c: &mut L, d: &mut L) {
    // SAFETY: register-only `Lanes` methods; the CPU has `L`'s features and, where the
    // `xor_rotl*` are overridden, AVX-512F/VL (this fn runs only in `horizontal` with `fused`,
    // whose contract says so).
    unsafe {
        *a = a.add(*b);
        *d = d.xor_rotl16(*a);
        *c = c.add(*d);
        *b = b.xor_rotl12(*c);
        *a = a.add(*b);
        *d = d.xor_rotl8(*a);
        *c = c.add(*d);
        *b = b.xor_rotl7(*c);
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
pub(super) unsafe fn vertical<L: Lanes, const WIDE: bool>(
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
pub(super) unsafe fn vertical_run<L: Lanes, const WIDE: bool, R: SlotRun>(
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
/// call's 32 slots (three per double round, two at the end). With `fused`,
/// the rounds are [`quarter_fused`]'s.
///
/// # Safety
/// As the module's; with `fused`, the CPU also has AVX-512F and VL (the
/// callers pass `fused` true only where the engine's `Lanes::FUSED_PAIR`
/// is set, which only the AVX-512 engines' lane type sets).
#[inline(always)]
pub(super) unsafe fn horizontal<L: Lanes, const SETS: usize, R: SlotRun>(
    state: &State,
    counter: u32,
    out: &mut [u8],
    poly: &Poly1305,
    mut run: R,
    fused: bool,
) -> R {
    // SAFETY: the CPU has `L`'s features (module contract), and AVX-512F/VL where `fused` (this
    // fn's contract); the assert bounds `out`, and each
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
        // Diagonals by rotating rows a, c and d (by -1, +1, +2 words), not
        // b, c and d (+1, +2, +3): a quarter round ends on b, whose
        // rotation would sit on the chain before the next round's first
        // add; a, c and d were last written earlier in the quarter round,
        // so theirs overlap it.
        for round in 0..10 {
            slot!(3 * round);
            for s in 0..SETS {
                if fused {
                    quarter_fused(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
                } else {
                    quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
                }
                a[s] = a[s].shuffle::<0x93>();
                c[s] = c[s].shuffle::<0x39>();
                d[s] = d[s].shuffle::<0x4e>();
            }
            slot!(3 * round + 1);
            for s in 0..SETS {
                if fused {
                    quarter_fused(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
                } else {
                    quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
                }
                a[s] = a[s].shuffle::<0x39>();
                c[s] = c[s].shuffle::<0x93>();
                d[s] = d[s].shuffle::<0x4e>();
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
/// latency-hiding horizontal layout, for short records. With `fused`, the
/// 2-block call runs [`quarter_fused`] where `L::FUSED_PAIR` allows it.
#[inline(always)]
pub(super) unsafe fn keystream_small<L: Lanes>(
    state: &State,
    counter: u32,
    out: &mut [u8],
    poly: &Poly1305,
    fused: bool,
) {
    // SAFETY: the CPU has `L`'s features (module contract), which include AVX-512F/VL where
    // `L::FUSED_PAIR` is set (its contract), as `horizontal` with `fused` needs (passed only
    // there); `horizontal` checks `out`.
    unsafe {
        macro_rules! call {
            ($lanes:ty, $out:expr, $counter:expr, $fused:expr) => {{
                let blocks = $out.len() / 64;
                let sets = blocks.div_ceil(<$lanes>::ROW_BLOCKS);
                match sets {
                    1 => {
                        horizontal::<$lanes, 1, _>(state, $counter, $out, poly, NoRun, $fused);
                    }
                    2 => {
                        horizontal::<$lanes, 2, _>(state, $counter, $out, poly, NoRun, $fused);
                    }
                    3 => {
                        horizontal::<$lanes, 3, _>(state, $counter, $out, poly, NoRun, $fused);
                    }
                    4 => {
                        horizontal::<$lanes, 4, _>(state, $counter, $out, poly, NoRun, $fused);
                    }
                    _ => unreachable!("2, 4, 6 or 8 blocks"),
                }
            }};
        }
        match out.len() {
            // Two instances, one branch a record on the key's choice.
            128 if L::FUSED_PAIR && fused => call!(L::Pair, out, counter, true),
            128 => call!(L::Pair, out, counter, false),
            // Three sets of two-block rows (see `three_sets`).
            384 if L::ROW_BLOCKS > 2 => call!(L::Pair, out, counter, false),
            _ if out.len() / 64 <= L::MAX_SETS * L::ROW_BLOCKS => call!(L, out, counter, false),
            _ => {
                // More sets than registers allow: two calls.
                let (lo, hi) = out.split_at_mut(out.len() / 2);
                call!(L, lo, counter, false);
                call!(L, hi, counter.wrapping_add((lo.len() / 64) as u32), false);
            }
        }
    }
}
