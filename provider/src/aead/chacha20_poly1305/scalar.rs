//! One ChaCha20 block in general-purpose registers: what a single QUIC
//! header-protection sample needs (RFC 9001 §5.4.4) where the vector rows
//! do not run it faster: the four quarter rounds of a half round are
//! independent, and add, xor and `rol` take one cycle each. The AVX2 and
//! AVX-512 engines on Intel run it in vector rows instead
//! (`kernel::one_block`), a quarter of the instructions
//! (docs/decisions.md, "One ChaCha20 block").

/// "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

#[inline(always)]
fn quarter(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

/// The first `B` bytes of the ChaCha20 block for `key` and the 16-byte
/// `LE32(counter) ‖ nonce` `input` (RFC 8439 §2.3). The state is wiped
/// before returning; what the compiler spills of it the caller scrubs.
///
/// # Panics
/// If `B > 64` (constant: no cost).
#[inline(always)]
pub(super) fn block_prefix<const B: usize>(key: &[u32; 8], input: &[u8; 16]) -> [u8; B] {
    assert!(B <= 64, "a block is 64 bytes");
    let mut init = [0u32; 16];
    init[..4].copy_from_slice(&SIGMA);
    init[4..12].copy_from_slice(key);
    for (w, b) in init[12..].iter_mut().zip(input.chunks_exact(4)) {
        *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
    }
    let mut x = init;
    for _ in 0..10 {
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 1, 5, 9, 13);
        quarter(&mut x, 2, 6, 10, 14);
        quarter(&mut x, 3, 7, 11, 15);
        quarter(&mut x, 0, 5, 10, 15);
        quarter(&mut x, 1, 6, 11, 12);
        quarter(&mut x, 2, 7, 8, 13);
        quarter(&mut x, 3, 4, 9, 14);
    }
    let mut out = [0u8; B];
    for (i, o) in out.iter_mut().enumerate() {
        *o = x[i / 4].wrapping_add(init[i / 4]).to_le_bytes()[i % 4];
    }
    zeroize::Zeroize::zeroize(&mut x);
    zeroize::Zeroize::zeroize(&mut init);
    out
}

#[cfg(test)]
mod tests {
    /// RFC 8439 §2.3.2's block.
    #[test]
    fn rfc_8439_block() {
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let words: [u32; 8] =
            core::array::from_fn(|i| u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().unwrap()));
        let mut input = [0u8; 16];
        input[..4].copy_from_slice(&1u32.to_le_bytes());
        input[4..].copy_from_slice(&[0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0]);
        let want: [u8; 16] = [
            0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20,
            0x71, 0xc4,
        ];
        assert_eq!(super::block_prefix::<16>(&words, &input), want);
        assert_eq!(super::block_prefix::<5>(&words, &input), want[..5]);
    }
}
