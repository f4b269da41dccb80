//! One record of more than the short path takes: pass 0 (the Poly1305 key
//! and the head), the vertical passes, the tail, the lengths block; and the
//! keystream scratch a record takes.

use super::super::poly1305::Poly1305;
use super::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use super::phased::{crypt_phased, padded_serial, IFMA_MIN, PHASED_MAX, PHASED_MAX_ZMM_SPLIT};
use super::rounds::vertical;
use super::slots::{Hash, ONE_CHAIN_MAX};
use super::state::{plaintext_at, State};
use super::tail::{keystream_tail, tail_call, tail_footprint, tail_run_len, TailCall};
use super::{counter_fits, SMALL};
use crate::aead::{Direction, NONCE_LEN, TAG_LEN};

/// Only x86-64 has the IFMA Poly1305: elsewhere every serial run is scalar.
#[cfg(not(target_arch = "x86_64"))]
const IFMA_MIN: usize = usize::MAX;
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn padded_serial<const IFMA: bool>(poly: &mut Poly1305, data: &[u8]) {
    poly.padded(data);
}

/// Seals or opens `buf` (the plaintext is `src` followed by
/// `buf[src.len()..]` when sealing) and returns the tag. `ks` is zeroed
/// scratch of [`seal_scratch_len`] bytes to seal, [`scratch_len`] to open,
/// wiped again before returning. With `IFMA`, serial Poly1305 runs take the
/// IFMA Poly1305 and records up to `PHASED_MAX` go in phases, up to
/// `PHASED_MAX_ZMM_SPLIT` with `zmm_split` (the key's
/// `Features::zmm_split`: Zen 4).
///
/// # Safety
/// The CPU has `L`'s features, and AVX-512 IFMA if `IFMA`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // always inlined: the record, its key and the key's CPU choice
pub(crate) unsafe fn crypt<L: Lanes, const IFMA: bool>(
    key: &[u32; 8],
    ks: &mut [u8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
    zmm_split: bool,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features, and IFMA where `IFMA` (this fn's contract: what
    // `padded_serial::<IFMA>` needs). Every raw pointer derives from
    // `ks`, `src` or `buf` as a whole: vertical passes on `ks` stay in its first `L::N * 64 <=
    // scratch_len` bytes (asserted), a split open's batch in the next `L::N * 64` (asserted
    // within `scratch_len` where `SPLIT_OPEN_TAIL_MAX > 0`); the head is `head <= n` bytes,
    // read from `src` only if `from_src >= head`;
    // each batch `[off, off + batch)` ends at or below `batches_end <= n`, reads `src` only if
    // it ends at or below `from_src <= src.len()`, and hashes bytes of `buf` below its end
    // (a seal's region before it, already written; an open's head and its own ciphertext,
    // read before its stores; a split open's batch stores only to the scratch); the tail's
    // call hashes `[pending, pending + run_len)`, at or below `n`, and writes only its
    // scratch, which never overlaps a split open's batch keystream.
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

        #[cfg(target_arch = "x86_64")]
        let phased_max = if zmm_split {
            PHASED_MAX_ZMM_SPLIT
        } else {
            PHASED_MAX
        };
        // Only the IFMA engine's phases read it.
        #[cfg(not(target_arch = "x86_64"))]
        let _ = zmm_split;
        #[cfg(target_arch = "x86_64")]
        if IFMA && n > head_max && n <= phased_max {
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
        // it, if its keystream cannot wait), XORing it only then; a split
        // open (below) leaves most of its one batch to the tail's call.
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
        // An open of one batch and a short horizontal tail takes a seal's
        // shape: the batch hashes the head and at most the pass's steps
        // (512 bytes in all) and leaves its keystream above pass 0's; the
        // tail's call hashes the rest of the batch's ciphertext in its idle
        // slots, and the batch is XORed after it (docs/decisions.md,
        // "ChaCha20-Poly1305 Poly1305 runs and tail calls (AMD EPYC Zen 4)").
        let split = dir == Direction::Open
            && batches_end == head + batch
            && call == TailCall::Horizontal
            && (1..=L::SPLIT_OPEN_TAIL_MAX).contains(&blocks);
        const {
            assert!(L::SPLIT_OPEN_TAIL_MAX == 0 || 2 * L::N * 64 <= scratch_len::<L>());
            assert!(L::SPLIT_OPEN_TAIL_MAX <= L::MAX_SETS * L::ROW_BLOCKS);
        };
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
            Direction::Open if split => {
                // The head, and as much of the batch as leaves the tail's
                // call one chain's worth (whole steps, within the pass's).
                let extra = (n - head).saturating_sub(ONE_CHAIN_MAX) / 32 * 32;
                let hashed = (head + extra).min(32 * L::SCHEDULE.steps());
                let above = ks[L::N * 64..2 * L::N * 64].as_mut_ptr();
                let hash = Hash::new(base, hashed);
                vertical::<L, false>(
                    &state,
                    counter,
                    above,
                    above,
                    &mut poly,
                    Some(hash),
                    two_chains,
                );
                L::xor_bytes(base, base, &ks[64..64 + head]);
                counter = counter.wrapping_add(L::N as u32);
                off += batch;
                pending = hashed;
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
        // the last region; an open: the head if still pending, a split
        // open's batch, and the tail's own ciphertext), as far as whole
        // steps and the call's capacity go; the rest is hashed around it.
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
            // The tail's scratch, and the keystream an open XORs after the
            // tail's call, with its offset in the record: a later head's,
            // where pass 0 left it (the tail's goes above), or a split
            // open's batch's, above pass 0's (the tail's goes below).
            let (pass0, above) = ks.split_at_mut(L::N * 64);
            let (scratch, later) = if head_later {
                (above, Some((0, &pass0[64..64 + head])))
            } else if split {
                (pass0, Some((head, &above[..batch])))
            } else {
                (&mut *ks, None)
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
                if let Some((at, later_ks)) = later {
                    let p = base.add(at);
                    L::xor_bytes(p, p, later_ks);
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
/// block: on ymm and xmm that wins up to 4 KiB and loses beyond
/// (docs/decisions.md, "ChaCha20-Poly1305 record shapes (Intel Xeon)");
/// zmm passes hash 64 blocks each, more than their rounds take for one chain.
#[inline(always)]
pub(super) const fn two_chain_passes<L: Lanes>(n: usize) -> bool {
    L::TWO_CHAIN_PASSES || n > ONE_CHAIN_RECORD_MAX
}

/// The longest record whose vertical passes hash in one chain where the
/// width allows it (see [`two_chain_passes`]).
pub(super) const ONE_CHAIN_RECORD_MAX: usize = 4096;

/// XORs `chunk` with `ks` in place and absorbs the ciphertext into Poly1305:
/// before the XOR when opening, after it when sealing.
#[inline(always)]
pub(super) unsafe fn crypt_chunk<L: Lanes>(
    poly: &mut Poly1305,
    dir: Direction,
    chunk: &mut [u8],
    ks: &[u8],
) {
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
pub(super) fn wipe(scratch: &mut [u8]) {
    scratch.fill(0);
    core::hint::black_box(scratch);
}

/// Absorbs the lengths block and returns the tag.
#[inline(always)]
pub(super) fn finish(poly: &mut Poly1305, aad_len: usize, n: usize) -> [u8; TAG_LEN] {
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(aad_len as u64).to_le_bytes());
    lengths[8..].copy_from_slice(&(n as u64).to_le_bytes());
    poly.blocks(&lengths);
    poly.finish()
}

/// The keystream scratch [`crypt`] takes to open with lane type `L`:
/// pass 0's blocks (the Poly1305 key and the head), then room for a
/// horizontal tail's, so that an open can keep the head's keystream until
/// the tail's call has hashed the head (and the IFMA engine's phased open
/// can make a horizontal tail's keystream before its hash). The backend's `Key` holds it in its
/// own frame, above the stack the kernel uses, so the scrub after the call
/// need not cover it (the kernel wipes it).
pub(crate) const fn scratch_len<L: Lanes>() -> usize {
    L::N * 64 + L::MAX_SETS * L::ROW_BLOCKS * 64
}

/// The keystream scratch [`crypt`] takes to seal: pass 0's blocks, which
/// the tail's keystream then reuses (a seal keeps no head keystream, and a
/// tail takes at most `L::N` blocks' room: asserted below). Half an open's
/// on ymm, so half the clearing.
pub(crate) const fn seal_scratch_len<L: Lanes>() -> usize {
    const { assert!(tail_footprint::<L>(TailCall::Wide, L::N) <= L::N * 64) };
    L::N * 64
}

/// Keystream scratch, aligned to half a page. Its alignment aligns the
/// frame of the `Key` method that holds it, and the engine's entry point,
/// called from that frame, then runs entirely inside one half page: no
/// vector spill slot of the kernel, which the compiler aligns only to 16
/// bytes, can straddle a page boundary, where each of its spills and
/// reloads would be split across two pages (docs/decisions.md, "Engine
/// frames inside one page").
#[repr(C, align(2048))]
pub(crate) struct Scratch<const N: usize>(pub(crate) [u8; N]);
