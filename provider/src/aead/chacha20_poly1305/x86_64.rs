//! The x86-64 row register of the ChaCha20 kernel (`kernel/`): one
//! 128-bit row of the state (four words) in an xmm register, which every
//! x86 lane type broadcasts (`Lanes::broadcast_row`). SSE2 only, which
//! every x86-64 CPU has, so these are safe functions. It also holds the
//! zmm engines' choice of which records run on ymm lanes, which both zmm
//! engines share.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use crate::aead::NONCE_LEN;

/// One state row: four words in an xmm register.
pub(crate) type Row = __m128i;

/// `words` as a row.
#[inline(always)]
pub(crate) fn load_row(words: &[u32; 4]) -> Row {
    // SAFETY: SSE2 (every x86-64 CPU); the load reads the 16 bytes of `words`.
    unsafe { _mm_loadu_si128(words.as_ptr().cast()) }
}

/// Row 3 for block counter 0, `0 ‖ nonce`, made in registers: loaded from
/// memory just written word by word, the row spans several stores and
/// store forwarding fails (a stall at the head of a short record's one
/// dependency chain).
#[inline(always)]
pub(crate) fn nonce_row(nonce: &[u8; NONCE_LEN], word2: u32) -> Row {
    // SAFETY: SSE2 (every x86-64 CPU); the 8-byte load reads `nonce[..8]`.
    unsafe {
        let n01 = _mm_loadl_epi64(nonce.as_ptr().cast());
        _mm_slli_si128::<4>(_mm_unpacklo_epi64(n01, _mm_cvtsi32_si128(word2 as i32)))
    }
}

/// `row` with `counter` added to its first word (the block counter).
#[inline(always)]
pub(crate) fn add_counter(row: Row, counter: u32) -> Row {
    // SAFETY: register-only SSE2 intrinsics (every x86-64 CPU).
    unsafe { _mm_add_epi32(row, _mm_cvtsi32_si128(counter as i32)) }
}

/// Whether a zmm engine's record of `n` bytes (over the short path's)
/// takes ymm lanes, on a core that splits zmm instructions in two halves
/// (`split`: Zen 4) or not. Split: seals up to 1664 bytes; opens up to 832
/// and from 960 to 1792 bytes. Where a 16-block pass would go mostly
/// unused, ymm's 8-block passes and its short call for opens of 449–576
/// bytes are faster; an open of 833–959 bytes is faster on zmm (its last
/// partial passes on ymm are not). Not split (Intel, Zen 5): records up to 576
/// bytes, where ymm's short calls beat a 16-block pass; from 640 bytes a
/// full-width zmm pass is 5–25 % faster. docs/decisions.md
/// ("ChaCha20-Poly1305 mid-size records on zmm").
pub(crate) const fn zmm_takes_ymm(dir: crate::aead::Direction, n: usize, split: bool) -> bool {
    if !split {
        return n <= 576;
    }
    match dir {
        crate::aead::Direction::Seal => n <= 1664,
        crate::aead::Direction::Open => n <= 832 || 960 <= n && n <= 1792,
    }
}
