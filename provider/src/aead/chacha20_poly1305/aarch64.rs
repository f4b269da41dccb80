//! The aarch64 row register of the ChaCha20 kernel (`kernel/`): one
//! 128-bit row of the state (four words) in a NEON register. NEON is part
//! of the aarch64 Linux ABI (the target enables it), so these are safe
//! functions.
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use crate::aead::NONCE_LEN;

/// One state row: four words in a NEON register.
pub(crate) type Row = uint32x4_t;

/// `words` as a row.
#[inline(always)]
pub(crate) fn load_row(words: &[u32; 4]) -> Row {
    // SAFETY: NEON (the target's baseline); the load reads the 16 bytes of `words`.
    unsafe { vld1q_u32(words.as_ptr()) }
}

/// Row 3 for block counter 0, `0 ‖ nonce`, made in registers (as on
/// x86-64: a row loaded from words just stored one by one would wait on
/// store forwarding).
#[inline(always)]
pub(crate) fn nonce_row(nonce: &[u8; NONCE_LEN], word2: u32) -> Row {
    // SAFETY: NEON (the target's baseline); the 8-byte load reads `nonce[..8]`.
    unsafe {
        let n01 = vreinterpretq_u32_u8(vcombine_u8(vdup_n_u8(0), vld1_u8(nonce.as_ptr())));
        // Words: 0, 0, n0, n1 → 0, n0, n1, word2.
        vsetq_lane_u32::<3>(word2, vextq_u32::<1>(n01, vdupq_n_u32(0)))
    }
}

/// `row` with `counter` added to its first word (the block counter).
#[inline(always)]
pub(crate) fn add_counter(row: Row, counter: u32) -> Row {
    // SAFETY: register-only NEON intrinsics (the target's baseline).
    unsafe { vaddq_u32(row, vsetq_lane_u32::<0>(counter, vdupq_n_u32(0))) }
}
