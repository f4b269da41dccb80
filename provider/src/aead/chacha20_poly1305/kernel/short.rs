//! Records of at most `SMALL` bytes (open: `Lanes::SMALL_OPEN`): one
//! horizontal call, Poly1305 between its rounds.

use super::super::poly1305::Poly1305;
use super::lanes::Lanes;
use super::record::{crypt_chunk, finish, wipe};
use super::rounds::{horizontal, keystream_small};
use super::slots::{Hash, OneChain, ONE_CHAIN_MAX};
use super::state::State;
use super::{small_max, SMALL};
use crate::aead::{Direction, NONCE_LEN, TAG_LEN};

/// A record of at most [`small_max`] bytes (`crypt_small` with its state);
/// `fused`: the key's choice of the fused 2-block call (`Key::fused`).
///
/// # Safety
/// The CPU has `L`'s features.
#[inline(always)]
pub(crate) unsafe fn small<L: Lanes>(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
    fused: bool,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features (this fn's contract); the assert
    // below gives `crypt_small` the lengths it relies on.
    unsafe {
        assert!(
            src.len() <= buf.len() && buf.len() <= small_max::<L>(dir),
            "a short record"
        );
        crypt_small::<L>(&State::new(key, nonce), aad, src, buf, dir, fused)
    }
}

/// Records of at most `SMALL` bytes: one horizontal call of 2, 4, 6 or 8
/// independent blocks yields the Poly1305 key and all the keystream, with a
/// scratch buffer sized for that alone (clearing a whole batch buffer cost
/// more than a short record).
#[inline(always)]
pub(super) unsafe fn crypt_small<L: Lanes>(
    state: &State,
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
    fused: bool,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features (module contract).
    unsafe {
        // The key block and the data's blocks, rounded up to 2, 4 or 8, or
        // to 6 in three sets of rows where `three_sets` says so; the
        // scratch is exactly that, since zeroing and wiping the largest size
        // for every record costs the shortest ones (docs/decisions.md,
        // "ChaCha20-Poly1305 Poly1305 runs and tail calls (AMD EPYC Zen 4)");
        // a ymm open longer than `SMALL` takes 10 blocks, in two calls.
        match buf.len() {
            0..=64 => crypt_small_in::<L, 128>(state, aad, src, buf, dir, fused),
            65..=192 => crypt_small_in::<L, 256>(state, aad, src, buf, dir, false),
            n if three_sets::<L>(n) => crypt_small_in::<L, 384>(state, aad, src, buf, dir, false),
            n if n <= SMALL => crypt_small_in::<L, 512>(state, aad, src, buf, dir, false),
            _ => crypt_small_in::<L, 640>(state, aad, src, buf, dir, false),
        }
    }
}

/// [`crypt_small`] with `USED` bytes of keystream scratch (at least
/// `buf.len() + 64`); `fused` as `small`'s (it matters for `USED` 128).
///
/// # Safety
/// The CPU has `L`'s features.
#[inline(always)]
pub(super) unsafe fn crypt_small_in<L: Lanes, const USED: usize>(
    state: &State,
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
    fused: bool,
) -> [u8; TAG_LEN] {
    // SAFETY: the CPU has `L`'s features (module contract); the open's run reads `buf[..whole]`
    // during the call, which writes only `rest` (scratch), and the XOR after it reads and
    // writes the `n` bytes of `buf` with the `n` keystream bytes it is given. A split seal
    // (`n > 320`) XORs the first 320 bytes of `buf` with 320 keystream bytes, and its run
    // then reads `buf[..320]` during the call, which writes only `rest`.
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
            // vector instructions, not its latency, and a hash after it
            // would be one more serial stage; for 449–576 bytes the two
            // calls are faster than pass 0 and a tail call (`crypt`)
            // (docs/decisions.md, "ChaCha20-Poly1305 record shapes (Intel Xeon)").
            let (first, rest) = ks.split_at_mut(128);
            keystream_small::<L>(state, 0, first, &poly, false);
            poly.reset(first[..32].try_into().expect("32 bytes"));
            poly.padded(aad);
            let whole = n / 16 * 16;
            // r read fresh at every block: no stack scrub follows the
            // three-set calls, and kept in registers it spilled (opt-level 2).
            let hashed = whole.min(ONE_CHAIN_MAX);
            let run = OneChain::<true>::new(Hash::new(buf.as_ptr(), hashed), poly.h());
            let run = if USED == 512 {
                horizontal::<L, 3, _>(state, 2, rest, &poly, run, false)
            } else {
                horizontal::<L, 4, _>(state, 2, rest, &poly, run, false)
            };
            poly.set_h(run.h);
            poly.padded(&buf[hashed..]);
            let p = buf.as_mut_ptr();
            L::xor_bytes(p, p, &ks[64..64 + n]);
        } else if dir == Direction::Seal && split_seal::<L>(n) {
            // A seal of 321–448 bytes on ymm: the key block and blocks 1–5
            // in three sets, XORed; then blocks 6–7 in one set that hashes
            // those 320 bytes of ciphertext between its rounds; the rest
            // after it. One call of four sets spilled, and its whole
            // ciphertext was hashed after it, one more serial stage.
            let (first, rest) = ks.split_at_mut(384);
            keystream_small::<L>(state, 0, first, &poly, false);
            poly.reset(first[..32].try_into().expect("32 bytes"));
            poly.padded(aad);
            let p = buf.as_mut_ptr();
            L::xor_bytes(p, p, &first[64..]);
            let run = OneChain::<true>::new(Hash::new(buf.as_ptr(), 320), poly.h());
            // The state through an opaque pointer: the second call's key
            // rows are not the first's, kept live across the XOR (spilled).
            let run =
                horizontal::<L, 1, _>(core::hint::black_box(state), 6, rest, &poly, run, false);
            poly.set_h(run.h);
            crypt_chunk::<L>(&mut poly, dir, &mut buf[320..], &rest[..n - 320]);
        } else {
            keystream_small::<L>(state, 0, &mut ks, &poly, fused);
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

/// Whether a short seal of `n` bytes takes two calls: three sets, then one
/// that hashes their ciphertext (ymm, 321–448 bytes; `crypt_small_in`).
#[inline(always)]
pub(super) const fn split_seal<L: Lanes>(n: usize) -> bool {
    L::ROW_BLOCKS == 2 && L::MAX_SETS >= 4 && n > 320 && n <= SMALL
}

/// Whether a short record of `n` bytes takes 6 blocks in three sets of
/// two-block rows (ymm), for 193 to 320 bytes: on ymm that is faster than
/// four sets (the third set spills rows, none with key words or keystream:
/// no scrub); on zmm (whose 32 registers hold three ymm sets without
/// spills) it replaces two four-block sets, 8 blocks of work for 6
/// (docs/decisions.md, "ChaCha20-Poly1305 Poly1305 runs and tail calls
/// (AMD EPYC Zen 4)").
#[inline(always)]
pub(super) const fn three_sets<L: Lanes>(n: usize) -> bool {
    (L::ROW_BLOCKS == 2 || L::ROW_BLOCKS == 4) && n > 192 && n <= 320
}
