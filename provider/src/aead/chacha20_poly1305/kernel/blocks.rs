//! Independent ChaCha20 blocks (QUIC header-protection masks): vertical
//! passes, and one block in rows.

use super::lanes::{row, Lanes};
use super::record::wipe;
use super::rounds::quarter;
use super::state::State;
use super::{MAX_BATCH, SIGMA};
use crate::aead::NONCE_LEN;

/// The first `B` bytes of ChaCha20 block `inputs[i]` into `out[i]`, where
/// each input is the block's `LE32(counter) ‖ nonce` (RFC 8439 §2.3), in
/// vertical passes of `L::N` blocks (a single input takes [`one_block`]
/// or the scalar block instead: `backend::blocks`). The temporaries
/// holding key and keystream are wiped before returning.
///
/// # Safety
/// The CPU has `L`'s features; `out.len() == inputs.len()` and `B <= 16`.
#[inline(always)]
pub(crate) unsafe fn independent_blocks<L: Lanes, const B: usize>(
    key: &[u32; 8],
    inputs: &[[u8; 16]],
    out: &mut [[u8; B]],
) {
    // SAFETY: the CPU has `L`'s features (this fn's contract); `xor_vertical` gets one pointer
    // to `ks[..L::N * 64]` for input and output, and the volatile writes target elements of the
    // local `x`.
    unsafe {
        let state = State::new(key, &[0; NONCE_LEN]);
        let mut ks = [0u8; MAX_BATCH];
        for (chunk, outs) in inputs.chunks(L::N).zip(out.chunks_mut(L::N)) {
            // Words 12..16 of every block, lane-major per word.
            let mut words = [[0u32; 16]; 4];
            for (lane, input) in chunk.iter().enumerate() {
                for (w, bytes) in words.iter_mut().zip(input.chunks_exact(4)) {
                    w[lane] = u32::from_le_bytes(bytes.try_into().expect("4 bytes"));
                }
            }
            let mut x = [L::splat(0); 16];
            for (i, xi) in x.iter_mut().enumerate().take(12) {
                *xi = L::splat(state.word(key, i));
            }
            for (i, w) in words.iter().enumerate() {
                x[12 + i] = L::load_lanes(&w[..L::N]);
            }
            let init = x;
            for _ in 0..10 {
                let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = &mut x;
                quarter(x0, x4, x8, x12);
                quarter(x1, x5, x9, x13);
                quarter(x2, x6, x10, x14);
                quarter(x3, x7, x11, x15);
                quarter(x0, x5, x10, x15);
                quarter(x1, x6, x11, x12);
                quarter(x2, x7, x8, x13);
                quarter(x3, x4, x9, x14);
            }
            for (xi, i) in x.iter_mut().zip(init) {
                *xi = xi.add(i);
            }
            let ks = &mut ks[..L::N * 64];
            ks.fill(0);
            let p = ks.as_mut_ptr();
            L::xor_vertical(&x, p, p);
            for (lane, o) in outs.iter_mut().enumerate() {
                o.copy_from_slice(&ks[lane * 64..lane * 64 + B]);
            }
            for v in x.iter_mut() {
                core::ptr::write_volatile(v, L::splat(0));
            }
        }
        wipe(&mut ks);
    }
}

/// The first `B` bytes of the ChaCha20 block of one `LE32(counter) ‖
/// nonce` `input`, in `L`'s rows (the block's four rows, repeated in each
/// row block of `L`): each half round is one quarter-round chain of twelve
/// vector steps (fourteen where rotations by 12 and 7 are two shifts and
/// an OR), the diagonals by rotating rows a, c and d, as in `horizontal`:
/// a quarter of the instructions general registers take, whose 48 a half
/// round contend for the ALU ports (docs/decisions.md, "One ChaCha20
/// block"). The rows are wiped; what the compiler spills the caller
/// scrubs.
///
/// # Safety
/// The CPU has `L`'s features.
#[inline(always)]
pub(crate) unsafe fn one_block<L: Lanes, const B: usize>(
    key: &[u32; 8],
    input: &[u8; 16],
) -> [u8; B] {
    // SAFETY: the CPU has `L`'s features (this fn's contract); `store_rows` writes one block,
    // 64 bytes, into the 64-byte `block`; the volatile writes target the locals.
    unsafe {
        const { assert!(B <= 16, "the first row") };
        let words: [u32; 4] = core::array::from_fn(|i| {
            u32::from_le_bytes(input[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        });
        let a0 = row::<L>(&SIGMA);
        let (mut a, mut b, mut c, mut d) = (
            a0,
            row::<L>(key[..4].try_into().expect("4 words")),
            row::<L>(key[4..].try_into().expect("4 words")),
            row::<L>(&words),
        );
        for _ in 0..10 {
            quarter(&mut a, &mut b, &mut c, &mut d);
            a = a.shuffle::<0x93>();
            c = c.shuffle::<0x39>();
            d = d.shuffle::<0x4e>();
            quarter(&mut a, &mut b, &mut c, &mut d);
            a = a.shuffle::<0x39>();
            c = c.shuffle::<0x93>();
            d = d.shuffle::<0x4e>();
        }
        // Only row a (bytes 0..16) is needed; the other rows go out as zeros.
        let zero = L::splat(0);
        let mut block = [0u8; 64];
        L::store_rows([a.add(a0), zero, zero, zero], block.as_mut_ptr(), 1);
        let mut out = [0u8; B];
        out.copy_from_slice(&block[..B]);
        wipe(&mut block);
        for v in [&mut a, &mut b, &mut c, &mut d] {
            core::ptr::write_volatile(v, zero);
        }
        out
    }
}
