//! One record: the short path, the batches, the tail, the length block and
//! the tag; the seal and open entry points the backends call.

use super::super::arch::{self, Block};

use zeroize::Zeroize;

use super::batch::{open_batches, seal_batches, wipe_regs};
use super::ctr::{encrypt_block, j0, keystream, keystream_plus};
use super::ghash::{ghash_blocks, ghash_bytes, lengths_block};
use super::key::{take_and_wipe, wipe, KeyData};
use super::lanes::Lanes;
use super::partial::{crypt_tail, load_partial, masked_short, masked_tail, wide_tail};
use super::{short, Direction, MAX_REGS};
use crate::aead::{ct_eq, NONCE_LEN, TAG_LEN};

/// Encrypts or decrypts `buf[..]` (with the first `src.len()` plaintext
/// bytes read from `src` when sealing) and returns the GHASH-based tag.
#[inline(always)]
pub(super) unsafe fn crypt<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const EXTRA: bool,
    const HOIST: u8,
>(
    key: &KeyData<V, NR, P, X>,
    j0: Block,
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
    extra: Option<Extra<'_>>,
) -> ([u8; TAG_LEN], [u8; 16]) {
    // SAFETY: the CPU has the module's features and `V`'s (this fn's contract). Every raw
    // pointer derives from `src` or `buf` as a whole: the batches cover `[0, tail_start)` with
    // `tail_start <= n`, reading `src` only below `from_src <= src.len()` (a batch boundary or
    // `tail_start`, so no batch straddles it); the extra block is loaded at `e.at` only when
    // `e.at <= tail_start - 16` (no overflow), or, in the fused pass, `e.at + 16 <= main_end`;
    // the fused pass copies `rem = n - main_end < V::BATCH * 16` bytes between `buf[main_end..]`
    // and `last`, `MAX_REGS >= V::REGS` registers, which `seal_batches` seals whole; the
    // masked tail gets `buf[tail_start..]`, `rem` bytes in at most 8 registers (31 blocks,
    // `masked_all`, or under half a batch); the one pass (`one_pass`) gets `buf` whole, `n` bytes in
    // `(n.div_ceil(16) + 1).div_ceil(V::BLOCKS)` registers (checked by `masked_short`), after the
    // prefix is copied in; every other load or store is on a whole local array or goes through
    // `load_partial`/`store_partial`.
    unsafe {
        assert!(src.len() <= buf.len(), "prefix longer than the buffer");
        assert!((buf.len() as u64) <= (1 << 36) - 32, "GCM message too long");
        let n = buf.len();
        let mut extra_out = [0u8; 16];
        let mut extra_done = false;
        // Whole batches to `main_end`, then one half batch if that much is
        // left, then the tail (less than half a batch; on lane types with
        // byte masks, a record of under one batch is all tail: `masked_all`,
        // or, up to `ONE_PASS_MAX`, one pass with E(K, J0) in it).
        let batch_bytes = V::BATCH * 16;
        let main_end = n - n % batch_bytes;
        // A seal whose remainder is over half a batch seals all of it in one
        // full-width pass, below, in an instance of its own (`LAST`), unless
        // an extra block would have to wait for that pass.
        let fuse = V::FUSE_LAST
            && dir == Direction::Seal
            && runs::<V, NR, HOIST>(n) == LAST
            && n - main_end > batch_bytes / 2
            && (!EXTRA || extra.is_none_or(|e| e.at + 16 <= main_end));
        // Where the lane type has byte masks, a record of under one batch
        // (up to 31 blocks: with the lengths block its hash's powers reach
        // H^32) past `one_pass`'s runs as one masked pass (`masked_tail`),
        // no half batch.
        // After whole batches the half batch stays: stitched with the hash
        // of the batch before it, it measured faster than that hash alone
        // and one pass for the rest (docs/decisions.md, "The record's tail").
        // QUIC's header-protection block keeps the half batch: it rides in
        // the tail's pass, which it could not if that pass wrote its input.
        // Only the instances without the loop (`NEVER`, and `BY_LENGTH` in
        // tests) run records this short.
        let masked_all = V::MASKED
            && (HOIST == NEVER || HOIST == BY_LENGTH)
            && !(EXTRA && extra.is_some())
            && main_end == 0
            && n <= batch_bytes - 16;
        let half = !fuse && !masked_all && n - main_end >= batch_bytes / 2;
        let tail_start = main_end + if half { batch_bytes / 2 } else { 0 };
        let (acc, ek0) = if one_pass::<V, HOIST>(n, aad.len()) {
            // One masked pass of up to 7 registers, E(K, J0) in it
            // (`masked_short`); an extra block follows the tag, below.
            copy_prefix(buf, src, 0);
            let p = buf.as_mut_ptr();
            match (n.div_ceil(16) + 1).div_ceil(V::BLOCKS) {
                1 => masked_short::<V, NR, P, X, 1>(key, j0, aad, p, n, dir),
                2 => masked_short::<V, NR, P, X, 2>(key, j0, aad, p, n, dir),
                3 => masked_short::<V, NR, P, X, 3>(key, j0, aad, p, n, dir),
                4 => masked_short::<V, NR, P, X, 4>(key, j0, aad, p, n, dir),
                5 => masked_short::<V, NR, P, X, 5>(key, j0, aad, p, n, dir),
                6 => masked_short::<V, NR, P, X, 6>(key, j0, aad, p, n, dir),
                _ => masked_short::<V, NR, P, X, 7>(key, j0, aad, p, n, dir),
            }
        } else if short(n, aad.len()) {
            // Short record: E(J0) and every keystream block in one AES pass,
            // then AAD, ciphertext and lengths in one GHASH reduction.
            let mut ks = [arch::zero(); 9];
            let mut ghash_in = [arch::zero(); 13];
            let blocks = n.div_ceil(16);
            keystream(key, j0, blocks + 1, &mut ks);
            let mut m = 0;
            for chunk in aad.chunks(16) {
                ghash_in[m] = load_partial(chunk).bswap();
                m += 1;
            }
            copy_prefix(buf, src, 0);
            m += crypt_tail(&ks[1..], buf, dir, &mut ghash_in[m..]);
            ghash_in[m] = lengths_block(aad.len(), n);
            let acc = ghash_blocks(key, arch::zero(), &ghash_in[..=m]);
            (acc, take_and_wipe(&mut ks, 0))
        } else if fuse {
            // The remainder (over half a batch), zero-padded to a batch in
            // `last`, sealed in one full-width pass stitched with the GHASH
            // of the batch before it: a half batch and a tail were two AES
            // passes, the second on the record's critical path
            // (docs/decisions.md, "The record's tail").
            let mut ks = [arch::zero(); 1];
            keystream(core::hint::black_box(key), j0, 1, &mut ks);
            let acc = ghash_bytes(key, arch::zero(), aad);
            let from_src = from_src(src.len(), tail_start, main_end, batch_bytes);
            copy_prefix(buf, src, from_src);
            let rem = n - main_end;
            let mut last = [V::zero(); MAX_REGS];
            let lp: *mut u8 = last.as_mut_ptr().cast();
            core::ptr::copy_nonoverlapping(buf.as_ptr().add(main_end), lp, rem);
            // The remainder's whole registers, hashed in the batch loop's
            // last step; its blocks after them, below.
            let regs = rem / 16 / V::BLOCKS;
            let mut y = arch::zero();
            let ex = match extra {
                Some(e) if EXTRA => Some((e.rk, e.at, &mut y)),
                _ => None,
            };
            let has_extra = ex.is_some();
            let (_, acc) = seal_batches::<V, NR, P, X, false, false>(
                key,
                j0.add_ctr(1),
                acc,
                src.as_ptr(),
                from_src,
                buf.as_mut_ptr(),
                main_end,
                false,
                Some((lp, regs)),
                ex,
            );
            if has_extra {
                y.storeu(extra_out.as_mut_ptr());
                extra_done = true;
            }
            buf[main_end..].copy_from_slice(core::slice::from_raw_parts(lp, rem));
            // The keystream past the record's end is secret.
            wipe_regs(&mut last);
            let mut ghash_in = [arch::zero(); 5];
            let mut m = 0;
            for chunk in buf[main_end + regs * V::BLOCKS * 16..].chunks(16) {
                ghash_in[m] = load_partial(chunk).bswap();
                m += 1;
            }
            ghash_in[m] = lengths_block(aad.len(), n);
            let acc = ghash_blocks(key, acc, &ghash_in[..=m]);
            (acc, take_and_wipe(&mut ks, 0))
        } else {
            // The tail is under half a batch: at most 16 blocks, plus lengths
            // (31 and lengths in one masked pass where `masked_all`).
            // E(K, J0) and the tail read the round keys through an opaque
            // pointer each, and E(K, J0) waits in `ek0`, read back at the end:
            // held in registers across the batches, the round keys and E(K, J0)
            // were spilled and left on the stack (the stack-residue test).
            let mut ek0 = [arch::zero(); 1];
            keystream(core::hint::black_box(key), j0, 1, &mut ek0);
            let mut acc = ghash_bytes(key, arch::zero(), aad);
            // Batches come from `src` up to `from_src` (a batch boundary), then
            // from `buf`.
            let from_src = from_src(src.len(), tail_start, main_end, batch_bytes);
            copy_prefix(buf, src, from_src);
            let ctr = j0.add_ctr(1);
            // One seal batch loop, by `seal_batches`'s `HOIST` and `LOOP`.
            macro_rules! seal_with {
                ($hoist:literal, $loop_:literal) => {
                    seal_batches::<V, NR, P, X, $hoist, $loop_>(
                        key,
                        ctr,
                        acc,
                        src.as_ptr(),
                        from_src,
                        buf.as_mut_ptr(),
                        main_end,
                        half,
                        None,
                        None,
                    )
                };
            }
            // One open batch loop, by `open_batches`'s `HOIST` and `LOOP`.
            macro_rules! open_with {
                ($hoist:literal, $loop_:literal) => {
                    open_batches::<V, NR, P, X, $hoist, $loop_>(
                        key,
                        ctr,
                        acc,
                        buf.as_mut_ptr(),
                        main_end,
                        half,
                    )
                };
            }
            let (ctr, acc_main) = match dir {
                // Large records of a lane type that measures faster with the
                // round keys and hash powers hoisted out of the batch loop
                // (and spilled: the caller scrubs the stack, see
                // `Lanes::HOIST_SEAL_FROM`).
                Direction::Seal if runs::<V, NR, HOIST>(n) == ALWAYS => seal_with!(true, false),
                // The lane type's own loop, with halves made per record
                // (`Lanes::batches`, `Lanes::halves_seal_from`).
                Direction::Seal if runs::<V, NR, HOIST>(n) == LOOP => seal_with!(false, true),
                Direction::Seal => seal_with!(false, false),
                Direction::Open if V::HOIST_OPEN_FROM < usize::MAX && n >= V::HOIST_OPEN_FROM => {
                    open_with!(true, false)
                }
                // The lane type's own loop, in the open instances that have it.
                Direction::Open if HOIST == LOOP || HOIST == BY_LENGTH => open_with!(false, true),
                Direction::Open => open_with!(false, false),
            };
            acc = acc_main;
            let rem = n - tail_start;
            if V::MASKED && rem > 0 {
                // The tail in one masked pass (`masked_tail`): at most 8
                // registers (31 blocks, `masked_all`), or 4 after whole batches. The extra
                // block rides in it, as below.
                let mut y = arch::zero();
                let ride = match extra {
                    Some(e) if EXTRA && tail_start >= 16 && e.at <= tail_start - 16 => {
                        y = Block::loadu(buf.as_ptr().add(e.at));
                        Some(e.rk)
                    }
                    _ => None,
                };
                let ex = ride.map(|rk| (rk, &mut y));
                let p = buf.as_mut_ptr().add(tail_start);
                let lengths = lengths_block(aad.len(), n);
                // The round keys and powers through an opaque pointer, as the
                // other tail's: not held in registers across the batches.
                let key = core::hint::black_box(key);
                let acc = match rem.div_ceil(V::BLOCKS * 16) {
                    1 => masked_tail::<V, NR, P, X, 1>(key, ctr, p, rem, dir, acc, lengths, ex),
                    2 => masked_tail::<V, NR, P, X, 2>(key, ctr, p, rem, dir, acc, lengths, ex),
                    3 => masked_tail::<V, NR, P, X, 3>(key, ctr, p, rem, dir, acc, lengths, ex),
                    4 => masked_tail::<V, NR, P, X, 4>(key, ctr, p, rem, dir, acc, lengths, ex),
                    // Five or more only where `masked_all` (not compiled in the
                    // other instances).
                    5..=8 if !(HOIST == NEVER || HOIST == BY_LENGTH) => {
                        unreachable!("a tail of under half a batch")
                    }
                    5 => masked_tail::<V, NR, P, X, 5>(key, ctr, p, rem, dir, acc, lengths, ex),
                    6 => masked_tail::<V, NR, P, X, 6>(key, ctr, p, rem, dir, acc, lengths, ex),
                    7 => masked_tail::<V, NR, P, X, 7>(key, ctr, p, rem, dir, acc, lengths, ex),
                    8 => masked_tail::<V, NR, P, X, 8>(key, ctr, p, rem, dir, acc, lengths, ex),
                    _ => unreachable!("a remainder of under one batch"),
                };
                if ride.is_some() {
                    y.storeu(extra_out.as_mut_ptr());
                    extra_done = true;
                }
                (acc, take_and_wipe(&mut ek0, 0))
            } else {
                // The tail's keystream (at most 16 blocks).
                let mut ks = [arch::zero(); 16];
                let mut ghash_in = [arch::zero(); 17];
                // The tail's whole registers on the lane type (wide lanes: at
                // most 3, the tail being under half a batch), the rest one block
                // per register.
                let wide = if V::BLOCKS > 1 {
                    (n - tail_start) / (V::BLOCKS * 16)
                } else {
                    0
                };
                let wide_ctr = ctr;
                let ctr = ctr.add_ctr((wide * V::BLOCKS) as i32);
                let rest_start = tail_start + wide * V::BLOCKS * 16;
                let tail_blocks = (n - rest_start).div_ceil(16);
                let key = core::hint::black_box(key);
                match extra {
                    // The extra block's input is ciphertext the batches already
                    // wrote: it rides in the tail's AES pass.
                    Some(e)
                        if EXTRA
                            && tail_blocks > 0
                            && tail_start >= 16
                            && e.at <= tail_start - 16 =>
                    {
                        let mut y = Block::loadu(buf.as_ptr().add(e.at));
                        keystream_plus(key, ctr, tail_blocks, &mut ks, e.rk, &mut y);
                        y.storeu(extra_out.as_mut_ptr());
                        extra_done = true;
                    }
                    _ => keystream(key, ctr, tail_blocks, &mut ks),
                }
                let tail = &mut buf[rest_start..];
                let m = crypt_tail(&ks, tail, dir, &mut ghash_in);
                ghash_in[m] = lengths_block(aad.len(), n);
                let rest = &ghash_in[..=m];
                let p = buf.as_mut_ptr().add(tail_start);
                let acc = match wide {
                    0 => ghash_blocks(key, acc, rest),
                    1 => wide_tail::<V, NR, P, X, 1>(key, wide_ctr, p, dir, acc, rest),
                    2 => wide_tail::<V, NR, P, X, 2>(key, wide_ctr, p, dir, acc, rest),
                    _ => wide_tail::<V, NR, P, X, 3>(key, wide_ctr, p, dir, acc, rest),
                };
                wipe(&mut ks);
                (acc, take_and_wipe(&mut ek0, 0))
            }
        };
        let mut tag = [0u8; TAG_LEN];
        acc.bswap().xor(ek0).storeu(tag.as_mut_ptr());
        if let Some(e) = extra {
            if EXTRA && !extra_done {
                // The input reaches into the tag, or no AES pass was left to
                // share: one block of its own, after the tag.
                let mut input = [0u8; 16];
                for (i, b) in input.iter_mut().enumerate() {
                    let j = e.at + i;
                    *b = if j < n { buf[j] } else { tag[j - n] };
                }
                let mut rk2 = load_round_keys(e.rk);
                let y = encrypt_block::<NR>(&rk2, Block::loadu(input.as_ptr()));
                wipe(&mut rk2);
                y.storeu(extra_out.as_mut_ptr());
            }
        }
        (tag, extra_out)
    }
}

/// Records of at most this many bytes run as one masked pass where the
/// lane type has byte masks (`masked_short`): 7 registers, whose powers,
/// with 4 AAD blocks and the lengths block, reach H^32.
const ONE_PASS_MAX: usize = 432;

/// Whether a record of `n` bytes with `aad_len` bytes of AAD runs as one
/// masked pass with E(K, J0) in it (`masked_short`): on lane types with
/// byte masks, in the instances without the loop (which every record this
/// short runs).
#[inline(always)]
fn one_pass<V: Lanes, const HOIST: u8>(n: usize, aad_len: usize) -> bool {
    V::MASKED && (HOIST == NEVER || HOIST == BY_LENGTH) && n <= ONE_PASS_MAX && aad_len <= 64
}

/// Copies `src[from..]` into `buf[from..src.len()]` where that is not empty:
/// `copy_from_slice` calls `memcpy` even for no bytes, and that call (with
/// its `vzeroupper`) cost a seal in place 15–20 ns in some runs
/// (docs/decisions.md, "Short records on zmm").
#[inline(always)]
fn copy_prefix(buf: &mut [u8], src: &[u8], from: usize) {
    if from < src.len() {
        buf[from..src.len()].copy_from_slice(&src[from..]);
    }
}

/// Where a seal's batches stop reading `src` (the plaintext's prefix) and
/// read `buf`: at `tail_start` or `main_end` if `src` reaches them, else at
/// the last batch boundary within `src`, so that no batch straddles it.
#[inline(always)]
fn from_src(src_len: usize, tail_start: usize, main_end: usize, batch_bytes: usize) -> usize {
    if src_len >= tail_start {
        tail_start
    } else if src_len >= main_end {
        main_end
    } else {
        src_len - src_len % batch_bytes
    }
}

/// Which seal batch loop a seal compiles (`crypt`'s `HOIST`): the one that
/// reloads round keys and powers (`NEVER`), the one that hoists them
/// (`ALWAYS`), the lane type's own loop with halves made per record
/// (`LOOP`, [`Lanes::batches`]), `NEVER`'s with the remainder in one pass
/// (`LAST`, below), or all of them, chosen by length (`BY_LENGTH`, as
/// [`seal_loop`] chooses).
/// The backends' seal entry points are split by length so that each frame
/// holds one loop's spill slots and arrays: with the hoisting loop beside
/// the other, the ymm seal's frame was 2 KiB and its scrub after every
/// record 2.5 KiB; with the assembly loop's halves beside the reloading
/// loop, the ymm seals of 256–768 B ran 5–15 % slower (docs/decisions.md,
/// "AES-GCM batches", "The ymm batch loop").
pub(crate) const NEVER: u8 = 0;
pub(crate) const ALWAYS: u8 = 1;
pub(crate) const BY_LENGTH: u8 = 2;
pub(crate) const LOOP: u8 = 3;
/// `NEVER`'s loop, then the remainder, over half a batch, in one full-width
/// pass (`crypt`'s `fuse`): its own instance, since in `NEVER`'s the
/// larger frame and code made every other seal 3–6 % slower
/// (docs/decisions.md, "The record's tail").
pub(crate) const LAST: u8 = 4;

/// Which of the four a seal of `n` bytes runs on lane type `V`, on a key
/// whose seals take the `LOOP` instance from `loop_from` bytes
/// (`Loops::seal`): the `HOIST` instance [`Key::seal`](super::Key) calls.
#[inline(always)]
pub(crate) fn seal_loop<V: Lanes, const NR: usize>(n: usize, loop_from: usize) -> u8 {
    if n >= V::HOIST_SEAL_FROM {
        ALWAYS
    } else if n >= loop_from {
        LOOP
    } else if V::FUSE_LAST && n % (V::BATCH * 16) > V::BATCH * 8 {
        LAST
    } else {
        NEVER
    }
}

/// Which open instance [`Key::open`](super::Key) calls for `n` bytes on
/// lane type `V`: one for every open (`BY_LENGTH`), or, where the lane
/// type splits them (`Lanes::SPLIT_OPEN`), `LOOP` from `loop_from` bytes
/// (the key's `Loops::open`) and `NEVER` below.
#[inline(always)]
pub(crate) fn open_loop<V: Lanes, const NR: usize>(n: usize, loop_from: usize) -> u8 {
    if !V::SPLIT_OPEN {
        BY_LENGTH
    } else if n >= loop_from {
        LOOP
    } else {
        NEVER
    }
}

/// The loop a seal of `n` bytes compiled with `HOIST` runs: `HOIST`
/// itself, or, where it is `BY_LENGTH` (tests only), [`seal_loop`]'s
/// choice from `halves_seal_from`.
#[inline(always)]
fn runs<V: Lanes, const NR: usize, const HOIST: u8>(n: usize) -> u8 {
    if HOIST == BY_LENGTH {
        seal_loop::<V, NR>(n, V::halves_seal_from(NR))
    } else {
        HOIST
    }
}

/// A block to encrypt under other AES round keys (with the same round
/// count) alongside a seal: the 16 bytes at offset `at` of
/// ciphertext ‖ tag.
#[derive(Clone, Copy)]
pub(crate) struct Extra<'a> {
    pub(crate) rk: &'a [[u8; 16]; 15],
    pub(crate) at: usize,
}

#[inline(always)]
fn load_round_keys(rk: &[[u8; 16]; 15]) -> [Block; 15] {
    let mut out = [arch::zero(); 15];
    for (o, k) in out.iter_mut().zip(rk) {
        *o = arch::load(k);
    }
    out
}

/// Seal with lane type `V` and `NR` AES rounds; `HOIST` says which batch
/// loop it compiles ([`runs`]).
///
/// # Safety
/// The CPU has the block features and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[inline(always)]
pub(crate) unsafe fn seal<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: u8,
>(
    key: &KeyData<V, NR, P, X>,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    // SAFETY: `crypt` needs only the CPU features, which this fn's contract
    // provides; it checks every length it relies on.
    unsafe {
        crypt::<V, NR, P, X, false, HOIST>(key, j0(nonce), aad, src, buf, Direction::Seal, None).0
    }
}

/// Seal, and encrypt the 16 bytes at `extra.at` of ciphertext ‖ tag under
/// `extra.rk` in the same call (`HOIST` as for [`seal`]). Returns the tag
/// and that block.
///
/// # Safety
/// The CPU has the block features and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[inline(always)]
pub(crate) unsafe fn seal_with_block<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: u8,
>(
    key: &KeyData<V, NR, P, X>,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
    extra: Extra<'_>,
) -> ([u8; TAG_LEN], [u8; 16]) {
    // SAFETY: as for `seal`; `crypt` loads the extra block from `buf` only when
    // `at <= tail_start - 16`, or `at + 16 <= main_end` in the fused pass, within the
    // batches it wrote.
    unsafe {
        crypt::<V, NR, P, X, true, HOIST>(
            key,
            j0(nonce),
            aad,
            &[],
            buf,
            Direction::Seal,
            Some(extra),
        )
    }
}

/// Seal from an arbitrary pre-counter block (tests: 32-bit counter wrap).
///
/// # Safety
/// The CPU has the block features and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[cfg(test)]
#[inline(always)]
pub(crate) unsafe fn seal_with_j0<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    // SAFETY: as for `seal`; `j0` is a 16-byte array.
    unsafe {
        crypt::<V, NR, P, X, false, BY_LENGTH>(
            key,
            Block::loadu(j0.as_ptr()).bswap(),
            aad,
            &[],
            buf,
            Direction::Seal,
            None,
        )
        .0
    }
}

/// Open with lane type `V` and `NR` AES rounds; zeroes `buf` on failure.
/// `HOIST` is `NEVER` for the instance without the lane type's own loop
/// ([`Lanes::batches`]), `LOOP` or `BY_LENGTH` for one whose opens from
/// `Lanes::halves_open_from(NR)` run it (the key chooses `LOOP` from its
/// `Loops::open` where `Lanes::SPLIT_OPEN` splits them).
///
/// # Safety
/// The CPU has the block features and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[inline(always)]
pub(crate) unsafe fn open<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: u8,
>(
    key: &KeyData<V, NR, P, X>,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> bool {
    // SAFETY: as for `seal`.
    unsafe {
        let (expected, _) = crypt::<V, NR, P, X, false, HOIST>(
            key,
            j0(nonce),
            aad,
            &[],
            buf,
            Direction::Open,
            None,
        );
        if ct_eq(&expected, tag) {
            true
        } else {
            buf.zeroize();
            false
        }
    }
}
