//! Header protection masking (RFC 9001 §5.4.1), without a branch on any
//! protected bit: the packet-number length, read from the unmasked first
//! byte, only selects mask bytes arithmetically.

/// Bits of the first byte header protection covers: the low 4 of a long
/// header (`0x80` set), the low 5 of a short one. The header form bit is
/// not protected; it is still used only arithmetically.
#[inline(always)]
fn protected_bits(first: u8) -> u8 {
    0x1f ^ ((first >> 7) << 4)
}

/// Applies (`protect`) or removes header protection with `mask` in place:
/// the protected bits of `first`, then the first `pn_len` bytes of `pn`,
/// where `pn_len` comes from the unmasked first byte. Bytes of `pn` beyond
/// `pn_len` keep their values (quinn passes 4-byte slices). Returns
/// `pn_len`.
///
/// `pn_len` selects mask bytes only through a shift (constant time on
/// every x86-64 and aarch64 core): a per-byte `i < pn_len` select was
/// compiled into a branch, which the valgrind check caught.
///
/// # Panics
/// If `pn` is longer than 4 bytes (callers check first).
pub(crate) fn xor_mask(mask: &[u8; 5], first: &mut u8, pn: &mut [u8], protect: bool) -> usize {
    assert!(pn.len() <= 4, "packet number longer than 4 bytes");
    let bits = protected_bits(*first);
    let masked = *first ^ (mask[0] & bits);
    let unmasked = if protect { *first } else { masked };
    let pn_len = u32::from(unmasked & 3) + 1;
    *first = masked;
    // The pn mask bytes, big-endian, with the bytes past `pn_len` cleared:
    // `pn_len` 1 keeps the top byte, 4 all four.
    let pn_mask = u32::from_be_bytes(mask[1..].try_into().expect("4 bytes"))
        & (u32::MAX << (8 * (4 - pn_len)));
    for (b, m) in pn.iter_mut().zip(pn_mask.to_be_bytes()) {
        *b ^= m;
    }
    pn_len as usize
}

#[cfg(test)]
mod tests {
    use super::xor_mask;

    /// Every first byte and packet-number length: protect then remove is
    /// the identity; only the protected bits and `pn_len` bytes change.
    #[test]
    fn round_trip_every_first_byte() {
        let mask = [0xa5, 0x11, 0x22, 0x33, 0x44];
        for first in 0..=255u8 {
            let pn0 = [1, 2, 3, 4];
            let (mut f, mut pn) = (first, pn0);
            let n = xor_mask(&mask, &mut f, &mut pn, true);
            assert_eq!(n, usize::from(first & 3) + 1);
            let bits = if first & 0x80 != 0 { 0x0f } else { 0x1f };
            assert_eq!(f, first ^ (mask[0] & bits));
            for i in 0..4 {
                let want = if i < n { pn0[i] ^ mask[i + 1] } else { pn0[i] };
                assert_eq!(pn[i], want, "first {first:#x}, byte {i}");
            }
            assert_eq!(xor_mask(&mask, &mut f, &mut pn, false), n);
            assert_eq!((f, pn), (first, pn0));
        }
    }
}
