//! A record's inputs: the key words, the ChaCha20 input state, where a
//! pass reads its plaintext, and the tag check.

use zeroize::Zeroize;

use super::super::arch::{self, Row};
use super::SIGMA;
use crate::aead::{NONCE_LEN, TAG_LEN};

/// The key as ChaCha20's eight little-endian key words (RFC 8439 §2.3).
#[inline(always)]
pub(crate) fn le_words(key: &[u8; 32]) -> [u32; 8] {
    core::array::from_fn(|i| u32::from_le_bytes(core::array::from_fn(|j| key[4 * i + j])))
}

/// The key as eight little-endian words, written straight into their box.
/// No frame of the setup holds them, so none is marked in a `SetupStack`
/// and no scrub follows (`tests/stack_residue/` checks that none is
/// needed).
pub(crate) fn key_words(key: &[u8; 32]) -> Box<zeroize::Zeroizing<[u32; 8]>> {
    // Allocated first (`malloc`; a zeroed box is a slower `calloc`), then
    // the words go from the caller's key straight into it: no key word is
    // live across the allocation, where it would be spilled.
    let mut words = Box::<zeroize::Zeroizing<[u32; 8]>>::new_uninit();
    // The key read through an opaque copy of its address, made after the
    // allocation: no load of it can be hoisted above `malloc`, where a live
    // key word would be saved across the call.
    let key = core::hint::black_box(key);
    // SAFETY: `write` initialises the whole box, so `assume_init` is sound.
    unsafe {
        words.write(zeroize::Zeroizing::new(le_words(key)));
        words.assume_init()
    }
}

/// Compares the computed tag with the received one in constant time; on a
/// mismatch zeroes `buf` (no unauthenticated plaintext is released).
pub(crate) fn check(
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

/// Where a pass reads the plaintext of region `[off, end)`: from `src` if
/// the region lies in its directly read part (below `from_src`), else from
/// the buffer at `base`, which holds the rest (`crypt` copies it there).
///
/// # Safety
/// `src` is `crypt`'s, with `from_src <= src.len()`, and `base` points to
/// its buffer; the pointer returned is valid for `end - off` bytes if
/// `end` is at most the buffer's length.
#[inline(always)]
pub(super) unsafe fn plaintext_at(
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

/// The ChaCha20 input state for block counter 0: the key, read where it
/// is used from its box (never copied to the stack; a copy there would
/// also be a store that the first rows' loads wait on), and the public
/// nonce.
pub(super) struct State<'k> {
    pub(super) key: &'k [u32; 8],
    /// Words 13–15.
    pub(super) nonce: [u32; 3],
    /// Words 12–15 as one row, counter word 0: `0 ‖ nonce`, made in
    /// registers for the horizontal calls (`arch::nonce_row`).
    pub(super) nonce_row: Row,
}

impl<'k> State<'k> {
    #[inline(always)]
    pub(super) fn new(key: &'k [u32; 8], nonce: &[u8; NONCE_LEN]) -> Self {
        let word =
            |i: usize| u32::from_le_bytes(nonce[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        let nonce_row = arch::nonce_row(nonce, word(2));
        Self {
            key,
            nonce: [word(0), word(1), word(2)],
            nonce_row,
        }
    }

    /// Input word `i` for block counter 0, the key words read from `key`
    /// (this state's, or the same through an opaque pointer).
    #[inline(always)]
    pub(super) fn word(&self, key: &[u32; 8], i: usize) -> u32 {
        match i {
            0..4 => SIGMA[i],
            4..12 => key[i - 4],
            12 => 0,
            _ => self.nonce[i - 13],
        }
    }

    /// Row 3 (block counter and nonce) for block `counter`.
    #[inline(always)]
    pub(super) fn row3(&self, counter: u32) -> Row {
        arch::add_counter(self.nonce_row, counter)
    }
}
