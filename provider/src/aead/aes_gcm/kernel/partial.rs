//! Partial blocks and tails: loads and stores of under 16 bytes through
//! general registers, and the keystream XOR of a record's last blocks.

use super::super::arch::{self, Block};

use super::lanes::Lanes;
use super::Direction;

/// Up to 16 bytes, zero-padded. Partial blocks move in 8-, 4-, 2- and
/// 1-byte pieces through general registers: no stack staging of plaintext,
/// and no `memcpy` call (a call clobbers every vector register, so the
/// keystream block was spilled around it and left on the stack).
#[inline(always)]
pub(super) unsafe fn load_partial(bytes: &[u8]) -> Block {
    // SAFETY: the 16-byte load runs only when `bytes` has at least 16 bytes.
    unsafe {
        if bytes.len() >= 16 {
            return Block::loadu(bytes.as_ptr());
        }
        arch::from_u128(read_le(bytes))
    }
}

/// Writes the first `dst.len()` (at most 16) bytes of `x` to `dst`.
#[inline(always)]
pub(super) unsafe fn store_partial(x: Block, dst: &mut [u8]) {
    // SAFETY: the 16-byte store runs only when `dst` has at least 16 bytes.
    unsafe {
        if dst.len() >= 16 {
            return x.storeu(dst.as_mut_ptr());
        }
        write_le(arch::to_u128(x), dst);
    }
}

/// `bytes` (under 16) as a little-endian number, read in power-of-two
/// pieces (the length is public).
#[inline(always)]
pub(super) fn read_le(bytes: &[u8]) -> u128 {
    let mut v = 0u128;
    let mut at = 0;
    macro_rules! piece {
        ($t:ty, $n:literal) => {
            if bytes.len() & $n != 0 {
                let p = <$t>::from_le_bytes(bytes[at..at + $n].try_into().expect("piece"));
                v |= u128::from(p) << (8 * at);
                at += $n;
            }
        };
    }
    piece!(u64, 8);
    piece!(u32, 4);
    piece!(u16, 2);
    piece!(u8, 1);
    let _ = at;
    v
}

/// The low `dst.len()` (under 16) bytes of `v` into `dst`, in power-of-two
/// pieces.
#[inline(always)]
pub(super) fn write_le(v: u128, dst: &mut [u8]) {
    let n = dst.len();
    let mut at = 0;
    macro_rules! piece {
        ($t:ty, $n:literal) => {
            if n & $n != 0 {
                dst[at..at + $n].copy_from_slice(&((v >> (8 * at)) as $t).to_le_bytes());
                at += $n;
            }
        };
    }
    piece!(u64, 8);
    piece!(u32, 4);
    piece!(u16, 2);
    piece!(u8, 1);
    let _ = at;
}

/// XORs keystream into `data` (at most 16 blocks) and collects the ciphertext
/// blocks, byte-reflected, into `ghash_in`. Returns how many.
#[inline(always)]
pub(super) unsafe fn crypt_tail(
    ks: &[Block],
    data: &mut [u8],
    dir: Direction,
    ghash_in: &mut [Block],
) -> usize {
    // SAFETY: register-only intrinsics (module contract); partial loads and stores are bounded
    // by each chunk's length.
    unsafe {
        let mut m = 0;
        for (chunk, &k) in data.chunks_mut(16).zip(ks) {
            let input = load_partial(chunk);
            let output = input.xor(k);
            store_partial(output, chunk);
            // Hash the ciphertext: the output when sealing, the input when opening.
            let ct = if dir == Direction::Seal {
                load_partial(chunk)
            } else {
                input
            };
            ghash_in[m] = ct.bswap();
            m += 1;
        }
        m
    }
}
