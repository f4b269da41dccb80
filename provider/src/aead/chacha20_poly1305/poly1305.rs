//! Poly1305 (RFC 8439 §2.5) with 64-bit limbs and 128-bit products.
//!
//! Scalar on purpose: it runs on the integer multiplier while ChaCha20 runs
//! on the vector units, so the AVX2 engine interleaves the two in one loop.
//! Constant time: no branches or indices depend on the key or the data;
//! the final reduction selects with masks.

use zeroize::Zeroize;

/// A Poly1305 state for one message.
pub(super) struct Poly1305 {
    r0: u64,
    r1: u64,
    /// `r1 + r1/4` (`r1` is a multiple of 4): folds the 2¹³⁰ ≡ 5 wrap.
    s1: u64,
    h0: u64,
    h1: u64,
    h2: u64,
    pad: [u64; 2],
}

impl Poly1305 {
    /// `key` is `r ‖ s`; `r` is clamped here.
    #[inline(always)]
    pub(super) fn new(key: &[u8; 32]) -> Self {
        let word = |i: usize| u64::from_le_bytes(key[i..i + 8].try_into().expect("8 bytes"));
        let r0 = word(0) & 0x0fff_fffc_0fff_ffff;
        let r1 = word(8) & 0x0fff_fffc_0fff_fffc;
        Self {
            r0,
            r1,
            s1: r1 + (r1 >> 2),
            h0: 0,
            h1: 0,
            h2: 0,
            pad: [word(16), word(24)],
        }
    }

    /// Absorbs whole 16-byte blocks (`data.len()` a multiple of 16).
    #[inline(always)]
    pub(super) fn blocks(&mut self, data: &[u8]) {
        debug_assert_eq!(data.len() % 16, 0);
        for block in data.chunks_exact(16) {
            self.block(block);
        }
    }

    /// Absorbs `data`, zero-padded to a whole number of blocks (the AEAD's
    /// padding of AAD and ciphertext).
    #[inline(always)]
    pub(super) fn padded(&mut self, data: &[u8]) {
        let whole = data.len() - data.len() % 16;
        self.blocks(&data[..whole]);
        if whole < data.len() {
            let mut last = [0u8; 16];
            last[..data.len() - whole].copy_from_slice(&data[whole..]);
            self.block(&last);
        }
    }

    /// h = (h + m + 2¹²⁸) · r, partially reduced (h < 2¹³⁰ + small).
    #[inline(always)]
    fn block(&mut self, m: &[u8]) {
        let m0 = u64::from_le_bytes(m[..8].try_into().expect("8 bytes"));
        let m1 = u64::from_le_bytes(m[8..16].try_into().expect("8 bytes"));
        let (h0, c) = self.h0.overflowing_add(m0);
        let (h1, c1) = self.h1.overflowing_add(m1);
        let (h1, c2) = h1.overflowing_add(c as u64);
        let h2 = self.h2 + c1 as u64 + c2 as u64 + 1;

        let mul = |a: u64, b: u64| a as u128 * b as u128;
        let d0 = mul(h0, self.r0) + mul(h1, self.s1);
        let d1 = mul(h0, self.r1) + mul(h1, self.r0) + mul(h2, self.s1) + (d0 >> 64);
        let d2 = h2 * self.r0 + (d1 >> 64) as u64;

        // Everything from bit 130 up, times 5, folds back into the bottom.
        let fold = (d2 & !3) + (d2 >> 2);
        let (h0, c) = (d0 as u64).overflowing_add(fold);
        let (h1, c) = (d1 as u64).overflowing_add(c as u64);
        self.h0 = h0;
        self.h1 = h1;
        self.h2 = (d2 & 3) + c as u64;
    }

    /// The tag: (h mod 2¹³⁰−5) + s mod 2¹²⁸.
    #[inline(always)]
    pub(super) fn finish(mut self) -> [u8; 16] {
        // h < 2·p here, so one conditional subtraction of p (done as
        // "add 5 and keep it if that reaches 2¹³⁰") reduces fully.
        let (g0, c) = self.h0.overflowing_add(5);
        let (g1, c) = self.h1.overflowing_add(c as u64);
        let g2 = self.h2 + c as u64;
        let keep_g = (g2 >> 2).wrapping_neg(); // all ones if h + 5 ≥ 2¹³⁰
        let h0 = (self.h0 & !keep_g) | (g0 & keep_g);
        let h1 = (self.h1 & !keep_g) | (g1 & keep_g);
        let (t0, c) = h0.overflowing_add(self.pad[0]);
        let t1 = h1.wrapping_add(self.pad[1]).wrapping_add(c as u64);
        self.zeroize_state();
        let mut tag = [0u8; 16];
        tag[..8].copy_from_slice(&t0.to_le_bytes());
        tag[8..].copy_from_slice(&t1.to_le_bytes());
        tag
    }

    fn zeroize_state(&mut self) {
        self.r0.zeroize();
        self.r1.zeroize();
        self.s1.zeroize();
        self.h0.zeroize();
        self.h1.zeroize();
        self.h2.zeroize();
        self.pad.zeroize();
    }
}

impl Drop for Poly1305 {
    fn drop(&mut self) {
        self.zeroize_state();
    }
}

#[cfg(test)]
mod tests {
    use poly1305::universal_hash::KeyInit;

    use super::Poly1305;

    fn reference(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
        poly1305::Poly1305::new(key.into())
            .compute_unpadded(msg)
            .into()
    }

    /// Whole-block messages (all the AEAD ever feeds) against RustCrypto's
    /// Poly1305, with keys and data chosen to push every carry.
    #[test]
    fn matches_reference_on_extreme_inputs() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..400 {
            let mut key = [0u8; 32];
            let fill = match case % 4 {
                0 => 0xff,
                1 => 0x00,
                _ => 0x5a,
            };
            key.iter_mut()
                .for_each(|b| *b = if case % 4 == 3 { next() as u8 } else { fill });
            let blocks = 1 + (next() % 40) as usize;
            let msg: Vec<u8> = (0..blocks * 16)
                .map(|i| match case % 3 {
                    0 => 0xff,
                    1 if i % 16 < 8 => 0xff,
                    _ => next() as u8,
                })
                .collect();
            let mut p = Poly1305::new(&key);
            p.blocks(&msg);
            assert_eq!(p.finish(), reference(&key, &msg), "case {case}");
        }
    }
}
