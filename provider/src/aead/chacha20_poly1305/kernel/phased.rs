//! The IFMA engine's records up to 4 KiB: keystream in passes, then
//! Poly1305 on the IFMA unit where no wide pass runs.

use super::super::poly1305::Poly1305;
use super::super::poly1305_ifma;
use super::lanes::Lanes;
use super::rounds::vertical;
use super::state::{plaintext_at, State};
use super::tail::{keystream_tail, tail_call, tail_footprint};
use crate::aead::Direction;

/// The longest record the IFMA engine takes in phases ([`crypt_phased`]).
pub(super) const PHASED_MAX: usize = 4096;

/// The same where the core runs each zmm instruction as two halves
/// (`Features::zmm_split`: Zen 4): records that pass 0 and at most one
/// more pass cover. With more passes the stitched scalar chains are
/// faster there (docs/decisions.md, "ChaCha20-Poly1305 phases on Zen 4").
/// Pass 0's 15 blocks after the Poly1305 key block, and one 16-block pass.
pub(super) const PHASED_MAX_ZMM_SPLIT: usize = (15 + 16) * 64;

/// A record on the IFMA engine longer than pass 0's head and at most
/// [`PHASED_MAX`] bytes, after pass 0 (its keystream in `ks`) and the
/// AAD: the rest of its keystream in passes and a tail call that hash
/// nothing, and its whole hash in one IFMA Poly1305 run (whole 128-byte
/// steps, then the remainder scalar), before any XOR for an open (whose
/// tail keystream, where it fits above pass 0's in `ks`, is made before
/// that run), after the last for a seal. Stitched scalar chains made these records wait on
/// Poly1305 where no wide pass runs: the tail call, and a seal's hash of
/// its tail after it. The lengths block is the caller's.
///
/// # Safety
/// The CPU has `L`'s features and AVX-512 IFMA; `ks` is `crypt`'s
/// scratch with pass 0's keystream, `from_src` as `crypt` made it and
/// `buf` already holds `src[from_src..]`.
#[inline(always)]
pub(super) unsafe fn crypt_phased<L: Lanes>(
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

        let len = n - batches_end;
        let blocks = len.div_ceil(64);
        let call = tail_call::<L>(blocks, false, false);
        // Pass 0's keystream (the head's) below; above, an open's room for
        // a horizontal tail's (up to `L::MAX_SETS * L::ROW_BLOCKS` blocks).
        let (pass0, above) = ks.split_at_mut(batch);
        // An open makes such a tail's keystream first, above pass 0's: it
        // touches no byte of `buf`, so its latency-bound pass overlaps the
        // hash, which must read the ciphertext before any XOR; made after
        // the hash, the two chains ran one after the other
        // (docs/decisions.md, "ChaCha20-Poly1305 Poly1305 runs and tail
        // calls (AMD EPYC Zen 4)").
        let early = !seal && len > 0 && tail_footprint::<L>(call, blocks) <= above.len();
        let tail_counter = 1 + (head / 64 + (batches_end - head) / batch * L::N) as u32;
        let early_ks: &[u8] = if early {
            keystream_tail::<L>(state, tail_counter, above, blocks, call, poly, None)
        } else {
            &[]
        };
        // An open hashes its ciphertext first, a seal after all of it is
        // written: one IFMA run each (whole steps, then the remainder).
        // Issuing a seal's steps between its passes is slower
        // (docs/decisions.md, "ChaCha20-Poly1305 record shapes (Intel Xeon)").
        if !seal {
            padded_serial::<true>(poly, buf);
        }
        // Every pointer into `buf` until the seal's hash derives from this.
        let base = buf.as_mut_ptr();
        let head_in = plaintext_at(src, base, from_src, 0, head);
        L::xor_bytes(head_in, base, &pass0[64..64 + head]);
        let mut counter = 1 + (head / 64) as u32;
        let mut off = head;
        while off < batches_end {
            let end = off + batch;
            let input = plaintext_at(src, base, from_src, off, end);
            vertical::<L, false>(state, counter, input, base.add(off), poly, None, false);
            counter = counter.wrapping_add(L::N as u32);
            off = end;
        }
        if len > 0 {
            debug_assert_eq!(counter, tail_counter);
            let tail_ks = if early {
                early_ks
            } else {
                keystream_tail::<L>(state, counter, pass0, blocks, call, poly, None)
            };
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
/// powers of r costs more than the vector steps save (docs/decisions.md,
/// "ChaCha20-Poly1305 Poly1305 runs and tail calls (AMD EPYC Zen 4)").
pub(super) const IFMA_MIN: usize = 512;

/// Absorbs `data`, zero-padded: a run no wide ChaCha20 pass overlaps
/// (what a record hashes after its last keystream, or before a horizontal
/// tail call, which is latency-bound). With `IFMA` (the CPU has AVX-512
/// IFMA) and at least [`IFMA_MIN`] bytes, its whole 128-byte steps run on
/// the vector Poly1305, which is idle there.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 IFMA if `IFMA`.
#[inline(always)]
pub(super) unsafe fn padded_serial<const IFMA: bool>(poly: &mut Poly1305, data: &[u8]) {
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
