//! The batch loops: AES-CTR of one batch interleaved with GHASH of the
//! batch before (seal) or of itself (open).

use super::super::arch::{self, Block};

use super::ghash::{ghash_step, Acc};
use super::key::KeyData;
use super::lanes::{BatchKeys, Lanes};
use super::{MAX_REGS, SCHOOLBOOK_OPEN_FROM};

/// Runs `regs` registers of counter blocks through AES and XORs the
/// keystream with `input`. Between the rounds it GHASHes `hash`, a batch of
/// `hash.1` registers (sealing: the previous batch's ciphertext; opening:
/// this batch's), with `acc` folded in, and returns the new GHASH value.
/// `extra`, if any, is one more block encrypted in the same rounds under
/// its own round keys (QUIC's header-protection mask in a seal's last pass).
///
/// # Safety
/// The CPU has the module's and `V`'s features; `input` and `output` are
/// valid for `regs * V::BLOCKS * 16` bytes (they may be equal), and so is
/// the hashed batch, `hash.0`, for `hash.1` registers; `regs <= MAX_REGS`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // always inlined; each is a loop-invariant or the cursor
pub(super) unsafe fn batch<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const OPEN: bool,
    const HOIST: bool,
>(
    key: &KeyData<V, NR, P, X>,
    ctr: V,
    input: *const u8,
    output: *mut u8,
    regs: usize,
    hash: Option<(*const u8, usize)>,
    acc: Block,
    halves: Option<*const V>,
    schoolbook: bool,
    mut extra: Option<(&[[u8; 16]; 15], &mut Block)>,
) -> Block {
    // SAFETY: the CPU has the module's and `V`'s features, and `input`, `output` and the hashed
    // batch are valid for `regs * V::BLOCKS * 16` bytes (this fn's contract): every offset
    // below is `j * V::BLOCKS * 16` for `j < regs`. Round keys are whole 16-byte entries of
    // `key.rk`.
    unsafe {
        // An open, and a seal unless `HOIST`, reads round keys and hash powers
        // from the key in every batch: hoisted out of the batch loop they do
        // not fit in the registers and spill, which costs time and leaves key
        // material on the stack (docs/decisions.md, "AES-GCM batches"; see
        // `Lanes::HOIST_SEAL_FROM`).
        let key = if HOIST {
            key
        } else {
            core::hint::black_box(key)
        };
        let mut x = [V::zero(); MAX_REGS];
        let k0 = V::broadcast(key.rk[0].as_ptr());
        for (j, xj) in x.iter_mut().enumerate().take(regs) {
            *xj = ctr.add_ctr((j * V::BLOCKS) as i32).bswap().xor(k0);
        }
        if let Some((rk2, y)) = extra.as_mut() {
            **y = y.xor(arch::load(&rk2[0]));
        }
        let mut sum = Acc::<V>::for_batch(hash.map_or(0, |(_, r)| r), schoolbook);
        // (A macro, not a closure: a closure does not get the caller's
        // target features.)
        macro_rules! round {
            ($r:expr) => {{
                let r: usize = $r;
                // A seal that does not hoist loads each round key where it is
                // used, through an opaque pointer: loaded early, the first
                // round keys spill and stay on the stack. An open's do not
                // spill and load directly, since the pointer slows its loop
                // (docs/decisions.md, "AES-GCM batches").
                let k = if HOIST || OPEN {
                    V::broadcast(key.rk[r].as_ptr())
                } else {
                    V::broadcast(core::hint::black_box(&key.rk)[r].as_ptr())
                };
                for xj in x.iter_mut().take(regs) {
                    *xj = xj.aesenc(k);
                }
                if let Some((rk2, y)) = extra.as_mut() {
                    **y = y.aesenc(arch::load(&rk2[r]));
                }
                // One hash step per round, last register first, so the
                // running value `acc` joins last.
                if let Some((h, hash_regs)) = hash {
                    if r <= hash_regs {
                        ghash_step(key, &mut sum, h, hash_regs - r, hash_regs, acc, halves);
                    }
                }
            }};
        }
        // Unrolled for the ymm seals that hoist their keys (4 KiB and up):
        // as a loop, LLVM kept their rounds a run-time loop, with its
        // counter, branches and the running sums reloaded every round.
        // Opens, shorter seals and zmm seals are slower unrolled
        // (docs/decisions.md, "Round loop"). Unrolled too on lane types that
        // ask for it (`Lanes::UNROLL_ROUNDS`).
        each_round!((V::BLOCKS == 2 && HOIST) || V::UNROLL_ROUNDS, NR, |r| {
            round!(r);
        });
        if let Some((h, hash_regs)) = hash {
            for j in NR..=hash_regs {
                ghash_step(key, &mut sum, h, hash_regs - j, hash_regs, acc, halves);
            }
        }
        let klast = V::broadcast(key.rk[NR].as_ptr());
        if let Some((rk2, y)) = extra {
            *y = y.aesenclast(arch::load(&rk2[NR]));
        }
        // An open hashes the same bytes it decrypts here. Reloading them, rather
        // than keeping the values loaded for the hash alive through the rounds,
        // leaves the registers to the AES state, which the xmm open otherwise
        // spills (docs/decisions.md, "AES-GCM batches").
        let input = core::hint::black_box(input);
        for (j, xj) in x.iter().enumerate().take(regs) {
            let off = j * V::BLOCKS * 16;
            xj.aesenclast(klast.xor(V::loadu(input.add(off))))
                .storeu(output.add(off));
        }
        if hash.is_some() {
            sum.finish()
        } else {
            acc
        }
    }
}

/// Where a seal or open is within the batches.
pub(super) struct Cursor<V> {
    ctr: V,
    acc: Block,
    off: usize,
}

/// Seals one batch of `regs` registers at `cur.off`, hashing `prev`.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `input` and
/// `buf + cur.off` are valid for the batch's `regs * V::BLOCKS * 16` bytes,
/// and `prev`, if any, for the previous batch's.
#[inline(always)]
pub(super) unsafe fn seal_one<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: bool,
>(
    key: &KeyData<V, NR, P, X>,
    cur: &mut Cursor<V>,
    regs: usize,
    input: *const u8,
    buf: *mut u8,
    prev: &mut Option<(*const u8, usize)>,
    halves: Option<*const V>,
) {
    // SAFETY: `buf + cur.off` and `input` are valid for the batch's `regs * V::BLOCKS * 16`
    // bytes (this fn's contract), as `batch` needs; `prev` is the previous batch, already
    // written.
    unsafe {
        let out = buf.add(cur.off);
        // The halves are a full batch's: a half batch hashes with other powers.
        let halves = halves.filter(|_| matches!(*prev, Some((_, r)) if r == V::REGS));
        cur.acc = batch::<_, NR, P, X, false, HOIST>(
            key, cur.ctr, input, out, regs, *prev, cur.acc, halves, true, None,
        );
        cur.ctr = cur.ctr.add_ctr((regs * V::BLOCKS) as i32);
        *prev = Some((out, regs));
        cur.off += regs * V::BLOCKS * 16;
    }
}

/// Seals `[0, end)`: whole batches, then a half batch if `half`. Input
/// comes from `src` for batches ending at or below `from_src`, from `buf`
/// above. GHASH runs one batch behind AES. Returns the next counter and the
/// GHASH state.
///
/// With `last = Some((tmp, regs))` (and not `half`), one more full batch
/// is sealed in place in `tmp`, the record's remainder zero-padded, in the
/// same pass as the GHASH of the batch before; the GHASH state returned
/// covers `tmp`'s first `regs` registers. `extra = Some((rk, at, y))`
/// (with `last` only) encrypts the 16 bytes at `buf + at`, which the whole
/// batches wrote, into `y` in that pass (docs/decisions.md, "The record's
/// tail").
///
/// # Safety
/// The CPU has the module's and `V`'s features; `end` is a whole number of
/// batches (`V::BATCH * 16` bytes each); `buf` is valid for reads and
/// writes of `end` bytes, plus half a batch if `half`; `src` for reads of
/// `from_src` bytes, a batch boundary (or the end of the half batch);
/// `tmp` for reads and writes of a batch and `1 <= regs < V::REGS`; `at + 16 <= end`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn seal_batches<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: bool,
    const LOOP: bool,
>(
    key: &KeyData<V, NR, P, X>,
    ctr: Block,
    acc: Block,
    src: *const u8,
    from_src: usize,
    buf: *mut u8,
    end: usize,
    half: bool,
    last: Option<(*mut u8, usize)>,
    extra: Option<(&[[u8; 16]; 15], usize, &mut Block)>,
) -> (Block, Block) {
    // SAFETY: `src` is valid below `from_src` and `buf` below `end` plus a half batch if `half`
    // (this fn's contract); each batch starts at a batch boundary and lies wholly below
    // `from_src` or wholly at or above it, so the pointer `from` picks is valid for the whole
    // batch; `tmp` is valid for a batch and `at + 16 <= end` (this fn's contract). `kept`
    // is a local array of `MAX_REGS` registers of `V`, 64-byte aligned and at least a batch
    // where `V::KEEP_LAST` (the assertion below), as `Lanes::batches` requires of `keep`.
    unsafe {
        const {
            assert!(
                !V::KEEP_LAST
                    || (align_of::<V>() >= 64 && MAX_REGS * size_of::<V>() >= V::BATCH * 16)
            )
        };
        debug_assert!(end.is_multiple_of(V::BATCH * 16), "whole batches");
        debug_assert!(!(half && last.is_some()), "a half batch or a last pass");
        debug_assert!(
            last.is_none_or(|(_, r)| r >= 1 && r < V::REGS),
            "the last pass hashes 1 to REGS - 1 registers"
        );
        let mut cur = Cursor {
            ctr: V::counters(ctr),
            acc,
            off: 0,
        };
        let mut prev = None;
        // Batch boundaries only: a batch is wholly below `from_src` or above it.
        let from = |off: usize| {
            if off < from_src {
                src.add(off)
            } else {
                buf.add(off) as *const u8
            }
        };
        // Where the lane type's loop keeps its last batch (`Lanes::KEEP_LAST`)
        // and the output is not 32-byte aligned, the hash after the loop
        // reads that batch from `kept`: from an aligned output the reload
        // does not wait, and there the copy measured slower. Not at
        // opt-level 2, where the array takes the zmm seal's frame past half
        // a page (2,112 bytes: tests/frame_placement.rs).
        let keep_last = V::KEEP_LAST && cfg!(fusion_opt3) && !(buf as usize).is_multiple_of(32);
        let mut kept = core::mem::MaybeUninit::<[V; MAX_REGS]>::uninit();
        let keep = if keep_last {
            kept.as_mut_ptr().cast::<u8>()
        } else {
            core::ptr::null_mut()
        };
        let mut hx = [V::zero(); MAX_REGS];
        // Only the `LOOP` instance makes halves: in the others' frames the
        // array and the loop's call slowed the short seals (record.rs, `LOOP`).
        // (Not `bool::then`: a closure does not get the caller's target features.)
        let halves = if LOOP && end >= V::halves_seal_from(NR) {
            Some(record_halves(key, &mut hx))
        } else {
            None
        };
        while cur.off < end {
            let input = from(cur.off);
            // After a full batch, the lane type's own loop (if it has one)
            // takes the full batches that read from the same pointer.
            let after_full = matches!(prev, Some((_, r)) if r == V::REGS);
            if let (Some(hx), true) = (halves, after_full) {
                let batch = V::BATCH * 16;
                let stop = if cur.off < from_src {
                    from_src.min(end)
                } else {
                    end
                };
                let n = (stop - cur.off) / batch;
                let out = buf.add(cur.off);
                let keys = batch_keys(key, hx);
                if n > 0
                    && V::batches::<NR, false>(
                        keys,
                        &mut cur.ctr,
                        &mut cur.acc,
                        input,
                        out,
                        n,
                        keep,
                    )
                {
                    cur.off += n * batch;
                    let hashed = if keep_last {
                        keep.cast_const()
                    } else {
                        buf.add(cur.off - batch).cast_const()
                    };
                    prev = Some((hashed, V::REGS));
                    continue;
                }
            }
            seal_one::<_, NR, P, X, HOIST>(key, &mut cur, V::REGS, input, buf, &mut prev, halves);
        }
        if half {
            let input = from(cur.off);
            seal_one::<_, NR, P, X, HOIST>(
                key,
                &mut cur,
                V::REGS / 2,
                input,
                buf,
                &mut prev,
                halves,
            );
        } else if let Some((tmp, regs)) = last {
            let halves = halves.filter(|_| matches!(prev, Some((_, r)) if r == V::REGS));
            let extra = match extra {
                Some((rk, at, y)) => {
                    *y = Block::loadu(buf.add(at));
                    Some((rk, y))
                }
                None => None,
            };
            cur.acc = batch::<_, NR, P, X, false, HOIST>(
                key,
                cur.ctr,
                tmp,
                tmp,
                V::REGS,
                prev,
                cur.acc,
                halves,
                true,
                extra,
            );
            prev = Some((tmp.cast_const(), regs));
        }
        if halves.is_some() {
            wipe_regs(&mut hx);
        }
        if let Some((last, regs)) = prev {
            let mut sum = Acc::<V>::for_batch(regs, true);
            for j in 0..regs {
                ghash_step(key, &mut sum, last, j, regs, cur.acc, None);
            }
            cur.acc = sum.finish();
        }
        (ctr.add_ctr((cur.off / 16) as i32), cur.acc)
    }
}

/// Opens one batch of `regs` registers at `cur.off` in place.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `buf + cur.off` is valid
/// for the batch's `regs * V::BLOCKS * 16` bytes.
#[inline(always)]
pub(super) unsafe fn open_one<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: bool,
>(
    key: &KeyData<V, NR, P, X>,
    cur: &mut Cursor<V>,
    regs: usize,
    buf: *mut u8,
    halves: Option<*const V>,
    schoolbook: bool,
) {
    // SAFETY: `buf + cur.off` is valid for the batch's `regs * V::BLOCKS * 16` bytes (this fn's
    // contract).
    unsafe {
        let p = buf.add(cur.off);
        cur.acc = batch::<_, NR, P, X, true, HOIST>(
            key,
            cur.ctr,
            p,
            p,
            regs,
            Some((p, regs)),
            cur.acc,
            halves.filter(|_| regs == V::REGS),
            schoolbook,
            None,
        );
        cur.ctr = cur.ctr.add_ctr((regs * V::BLOCKS) as i32);
        cur.off += regs * V::BLOCKS * 16;
    }
}

/// Opens `[0, end)` (whole batches, then a half batch if `half`) of `buf` in
/// place, hashing each batch's ciphertext while it is decrypted.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `end` is a whole number of
/// batches (`V::BATCH * 16` bytes each); `buf` is valid for reads and
/// writes of `end` bytes, plus half a batch if `half`.
#[inline(always)]
pub(super) unsafe fn open_batches<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: bool,
    const LOOP: bool,
>(
    key: &KeyData<V, NR, P, X>,
    ctr: Block,
    acc: Block,
    buf: *mut u8,
    end: usize,
    half: bool,
) -> (Block, Block) {
    // SAFETY: `buf` is valid for `end` bytes plus a half batch if `half` (this fn's contract),
    // the batches `open_one` visits.
    unsafe {
        debug_assert!(end.is_multiple_of(V::BATCH * 16), "whole batches");
        let mut cur = Cursor {
            ctr: V::counters(ctr),
            acc,
            off: 0,
        };
        let mut hx = [V::zero(); MAX_REGS];
        // (Not `bool::then`: a closure does not get the caller's target features.)
        // Only the `LOOP` instance makes halves (as for seals).
        let halves = if LOOP && end >= V::halves_open_from(NR) {
            Some(record_halves(key, &mut hx))
        } else {
            None
        };
        // The lane type's own loop, if it has one, takes every full batch.
        if let Some(hx) = halves {
            let n = end / (V::BATCH * 16);
            let keys = batch_keys(key, hx);
            let none = core::ptr::null_mut();
            if n > 0 && V::batches::<NR, true>(keys, &mut cur.ctr, &mut cur.acc, buf, buf, n, none)
            {
                cur.off = end;
            }
        }
        // Schoolbook products only in long opens (two loops, so that each
        // is compiled for one kind of product): a short open is bound by
        // its batches' latency, which the fourth multiply lengthens.
        if !V::KARATSUBA && end >= SCHOOLBOOK_OPEN_FROM {
            while cur.off < end {
                open_one::<_, NR, P, X, HOIST>(key, &mut cur, V::REGS, buf, halves, true);
            }
        } else {
            while cur.off < end {
                open_one::<_, NR, P, X, HOIST>(key, &mut cur, V::REGS, buf, halves, false);
            }
        }
        if half {
            open_one::<_, NR, P, X, HOIST>(key, &mut cur, V::REGS / 2, buf, None, false);
        }
        if halves.is_some() {
            wipe_regs(&mut hx);
        }
        (ctr.add_ctr((cur.off / 16) as i32), cur.acc)
    }
}

/// The Karatsuba halves of a full batch's powers, made once per record into
/// `hx` (on the caller's stack, read back as memory operands; the key keeps
/// only the powers, and made at each use they cost a shuffle and an XOR per
/// register). The caller wipes `hx` with [`wipe_regs`] (the frame itself
/// is scrubbed after the record only where `Lanes::batches_spill` says so).
///
/// # Safety
/// The CPU has the module's and `V`'s features.
#[inline(always)]
unsafe fn record_halves<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    hx: &mut [V; MAX_REGS],
) -> *const V {
    // SAFETY: the CPU has `V`'s features (this fn's contract); `power` asserts its exponent,
    // `(V::REGS - j) * V::BLOCKS <= V::BATCH <= P`.
    unsafe {
        for (j, hj) in hx.iter_mut().enumerate().take(V::REGS) {
            *hj = key.power::<V>((V::REGS - j) * V::BLOCKS).1;
        }
        core::hint::black_box(hx.as_ptr())
    }
}

/// The pointers [`Lanes::batches`] reads: the round keys, one batch's
/// powers and their halves `hx` (from [`record_halves`]).
#[inline(always)]
fn batch_keys<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    hx: *const V,
) -> BatchKeys {
    BatchKeys {
        rk: key.rk.as_ptr().cast(),
        // The last `V::BATCH` entries: H^BATCH … H^1.
        h: key.h[P - V::BATCH..].as_ptr().cast(),
        hx: hx.cast(),
    }
}

/// Zeroes a batch's worth of registers kept on the stack (the halves
/// [`record_halves`] made, a seal's last pass), with volatile stores.
#[inline(always)]
pub(super) unsafe fn wipe_regs<V: Lanes>(hx: &mut [V; MAX_REGS]) {
    // SAFETY: each volatile write targets one element of `hx`, a valid `&mut`; the CPU has
    // `V`'s features (caller's contract).
    unsafe {
        for v in hx.iter_mut() {
            core::ptr::write_volatile(v, V::zero());
        }
    }
}
