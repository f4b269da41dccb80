//! Poly1305 (RFC 8439 §2.5) with 64-bit limbs and 128-bit products.
//!
//! Scalar on purpose: it runs on the integer multiplier while ChaCha20 runs
//! on the vector units, so the SIMD engines interleave the two in one loop.
//!
//! One Horner step, h = (h + m)·r, is a dependency chain of about 16
//! cycles. The zmm vertical kernels' runs of 2·L blocks (and the ymm and
//! xmm ones' in records over 4 KiB, and an open's wide first pass), and
//! serial runs of at least 64 blocks, therefore go through two independent
//! Horner chains:
//! chain A absorbs blocks 0..L from h, chain B blocks L..2L from zero,
//! interleaved step by step, and the run ends with h = A·r^L + B. That is
//! the same Horner sum (B's blocks are zero in A's chain and vice versa)
//! with half the latency, for the price of r^L (cached) and one general
//! multiplication, about seven blocks' worth of instructions. Shorter
//! serial runs, a horizontal call's run (at most 32 blocks, beside one
//! latency-bound ChaCha20 call) and the ymm and xmm passes of records up
//! to 4 KiB take one chain ([`Poly1305::chain_block`]): there the
//! instructions cost more than the latency, back to back.
//! ("Lanes" in this crate are SIMD lanes; these are chains.)
//! Constant time: no branches or indices depend on the key or the data;
//! the final reduction selects with masks.

use zeroize::Zeroize;

#[cfg(target_arch = "x86_64")]
use super::poly1305_ifma::{mul_limbs, to_limbs, Powers};

/// A Poly1305 state for one message.
pub(super) struct Poly1305 {
    r0: u64,
    r1: u64,
    /// `r1 + r1/4` (`r1` is a multiple of 4): folds the 2¹³⁰ ≡ 5 wrap.
    s1: u64,
    h0: u64,
    h1: u64,
    h2: u64,
    /// Cached powers (L, r^L) for chain lengths in use (L = 0: empty).
    powers: [(usize, [u64; 3]); 2],
    pad: [u64; 2],
}

/// Two Horner chains over a run of 2·L blocks: chain A continues h over
/// blocks 0..L, chain B starts from zero over blocks L..2L.
pub(super) struct Chains {
    a: [u64; 3],
    b: [u64; 3],
    len: usize,
}

/// Fewest blocks a serial run takes in two chains. Two chains halve the
/// latency but add the power r^L and the join, about seven blocks' worth
/// of instructions: below this, one chain is faster in back-to-back
/// records, which is how records arrive (docs/decisions.md, "Poly1305
/// kernels").
const MIN_CHAINS_RUN: usize = 64;

impl Chains {
    /// The steps L of the run (each chain's blocks).
    #[inline(always)]
    pub(super) fn steps(&self) -> usize {
        self.len
    }
}

impl Drop for Chains {
    fn drop(&mut self) {
        self.a.zeroize();
        self.b.zeroize();
    }
}

/// `*x`, read from memory where it is used (a volatile read): for key
/// material the compiler would otherwise keep in a register across a long
/// stretch of code and spill to a stack slot that nothing wipes.
#[inline(always)]
#[allow(unsafe_code)]
fn fresh(x: &u64) -> u64 {
    // SAFETY: a volatile read through a reference, valid and aligned.
    unsafe { core::ptr::read_volatile(x) }
}

#[inline(always)]
fn mul(a: u64, b: u64) -> u128 {
    a as u128 * b as u128
}

/// `x + m + 2¹²⁸` for a 16-byte block `m`. With `x₂ ≤ 4`, the result's top
/// limb is at most 6.
#[inline(always)]
fn add_block([x0, x1, x2]: [u64; 3], m: &[u8]) -> [u64; 3] {
    let m0 = u64::from_le_bytes(m[..8].try_into().expect("8 bytes"));
    let m1 = u64::from_le_bytes(m[8..16].try_into().expect("8 bytes"));
    let (h0, c) = x0.overflowing_add(m0);
    let (h1, c1) = x1.overflowing_add(m1);
    let (h1, c2) = h1.overflowing_add(c as u64);
    [h0, h1, x2 + c1 as u64 + c2 as u64 + 1]
}

/// `x·y + z mod 2¹³⁰−5`, partially reduced (top limb ≤ 4), for any
/// partially reduced `x`, `y`, `z` (top limbs ≤ 4): the general
/// multiplication, used for powers of r and to join the chains.
#[inline(always)]
fn mul_add([x0, x1, x2]: [u64; 3], [y0, y1, y2]: [u64; 3], z: [u64; 3]) -> [u64; 3] {
    // Column sums of 64-bit pieces cannot overflow a u128.
    let mut col = [0u128; 5];
    let mut add = |i: usize, v: u128| {
        col[i] += v as u64 as u128;
        col[i + 1] += v >> 64;
    };
    add(0, mul(x0, y0));
    add(1, mul(x0, y1));
    add(1, mul(x1, y0));
    add(2, mul(x1, y1));
    add(2, mul(x0, y2));
    add(2, mul(x2, y0));
    add(3, mul(x1, y2));
    add(3, mul(x2, y1));
    col[4] += (x2 * y2) as u128;
    col[0] += z[0] as u128;
    col[1] += z[1] as u128;
    col[2] += z[2] as u128;
    let t0 = col[0] as u64;
    let s = (col[0] >> 64) + col[1];
    let t1 = s as u64;
    let s = (s >> 64) + col[2];
    let t2 = s as u64;
    let s = (s >> 64) + col[3];
    let t3 = s as u64;
    let t4 = ((s >> 64) + col[4]) as u64;
    // t = low 130 bits + 2¹³⁰·q ≡ low + 4q + q, where 4q is (t2 & !3, t3, t4).
    let q0 = (t2 >> 2) | (t3 << 62);
    let q1 = (t3 >> 2) | (t4 << 62);
    let q2 = t4 >> 2;
    let s = t0 as u128 + (t2 & !3) as u128 + q0 as u128;
    let h0 = s as u64;
    let s = (s >> 64) + t1 as u128 + t3 as u128 + q1 as u128;
    let h1 = s as u64;
    let h2 = (s >> 64) as u64 + (t2 & 3) + t4 + q2;
    // h2 is small now; fold it once more.
    let fold = (h2 & !3) + (h2 >> 2);
    let (h0, c) = h0.overflowing_add(fold);
    let (h1, c) = h1.overflowing_add(c as u64);
    [h0, h1, (h2 & 3) + c as u64]
}

impl Poly1305 {
    /// `key` is `r ‖ s`; `r` is clamped here.
    #[inline(always)]
    pub(super) fn new(key: &[u8; 32]) -> Self {
        let mut poly = Self {
            r0: 0,
            r1: 0,
            s1: 0,
            h0: 0,
            h1: 0,
            h2: 0,
            powers: [(0, [0; 3]); 2],
            pad: [0; 2],
        };
        poly.reset(key);
        poly
    }

    /// Starts a new message under `key`, in place (a state built elsewhere
    /// and moved here would leave a copy of the key behind).
    #[inline(always)]
    pub(super) fn reset(&mut self, key: &[u8; 32]) {
        let word = |i: usize| u64::from_le_bytes(key[i..i + 8].try_into().expect("8 bytes"));
        self.r0 = word(0) & 0x0fff_fffc_0fff_ffff;
        self.r1 = word(8) & 0x0fff_fffc_0fff_fffc;
        self.s1 = self.r1 + (self.r1 >> 2);
        self.h0 = 0;
        self.h1 = 0;
        self.h2 = 0;
        self.powers = [(0, [0; 3]); 2];
        self.pad = [word(16), word(24)];
    }

    /// h, partially reduced.
    #[inline(always)]
    pub(super) fn h(&self) -> [u64; 3] {
        [self.h0, self.h1, self.h2]
    }

    /// Sets h (partially reduced: top limb ≤ 4).
    #[inline(always)]
    pub(super) fn set_h(&mut self, h: [u64; 3]) {
        [self.h0, self.h1, self.h2] = h;
    }

    /// Writes the powers of r a vector (IFMA) run needs into `out`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(super) fn ifma_powers(&self, out: &mut Powers) {
        let r = to_limbs([self.r0, self.r1, 0]);
        let mut p = [r; 9];
        // A tree three multiplications deep: a chain of seven would be the
        // setup's latency (docs/decisions.md, "ChaCha20-Poly1305 Poly1305
        // runs and tail calls (AMD EPYC Zen 4)").
        p[2] = mul_limbs(r, r);
        p[3] = mul_limbs(p[2], r);
        p[4] = mul_limbs(p[2], p[2]);
        p[5] = mul_limbs(p[4], r);
        p[6] = mul_limbs(p[4], p[2]);
        p[7] = mul_limbs(p[4], p[3]);
        p[8] = mul_limbs(p[4], p[4]);
        out.r8 = [p[8][0], p[8][1], p[8][2], 20 * p[8][1], 20 * p[8][2]];
        // Lane k of the last step holds block k/2 + 4·(k mod 2).
        for k in 0..8 {
            let q = p[8 - (k / 2 + 4 * (k % 2))];
            out.last[0][k] = q[0];
            out.last[1][k] = q[1];
            out.last[2][k] = q[2];
            out.last[3][k] = 20 * q[1];
            out.last[4][k] = 20 * q[2];
        }
        p.zeroize();
    }

    /// Absorbs whole 16-byte blocks (`data.len()` a multiple of 16), in two
    /// chains when there are enough of them.
    #[inline(always)]
    pub(super) fn blocks(&mut self, data: &[u8]) {
        debug_assert_eq!(data.len() % 16, 0);
        let blocks = data.len() / 16;
        if blocks < MIN_CHAINS_RUN {
            for block in data.chunks_exact(16) {
                self.block(block);
            }
            return;
        }
        // An odd block first, then one two-chain run over the rest.
        let odd = 16 * (blocks % 2);
        if odd > 0 {
            self.block(&data[..16]);
        }
        let run = &data[odd..];
        let mut chains = self.chains_begin(run.len() / 32);
        for i in 0..chains.len {
            self.chain_step::<true>(&mut chains, run, i);
        }
        self.chains_end(chains);
    }

    /// One Horner step of a chain continuing h outside this state (a
    /// horizontal call's run): `(h + m + 2¹²⁸)·r`. `FRESH`: see
    /// [`Self::mul_r`].
    #[inline(always)]
    pub(super) fn chain_block<const FRESH: bool>(&self, h: [u64; 3], m: &[u8; 16]) -> [u64; 3] {
        self.mul_r::<FRESH>(add_block(h, m))
    }

    /// Starts a two-chain run of `2 * len` blocks. Until `chains_end`,
    /// `chain_step` must run for every `i` in `0..len`, in order, and
    /// nothing else may be absorbed.
    #[inline(always)]
    pub(super) fn chains_begin(&mut self, len: usize) -> Chains {
        self.cache_power(len);
        Chains {
            a: [self.h0, self.h1, self.h2],
            b: [0; 3],
            len,
        }
    }

    /// Step `i` of a run starting at `run`: chain A absorbs block `i`,
    /// chain B block `len + i`; steps from `len` on do nothing. Serial runs
    /// only (`update`); a vertical pass's steps read their blocks unchecked
    /// (`kernel/slots.rs`, `TwoChains`). `FRESH`: see [`Self::mul_r`].
    #[inline(always)]
    pub(super) fn chain_step<const FRESH: bool>(&self, chains: &mut Chains, run: &[u8], i: usize) {
        if i >= chains.len {
            return;
        }
        chains.a = self.mul_r::<FRESH>(add_block(chains.a, &run[16 * i..]));
        chains.b = self.mul_r::<FRESH>(add_block(chains.b, &run[16 * (chains.len + i)..]));
    }

    /// Step of a two-chain run given its two blocks: chain A absorbs
    /// `a`, chain B `b` (a horizontal call's step, with r read fresh).
    #[inline(always)]
    pub(super) fn chain_blocks<const FRESH: bool>(
        &self,
        chains: &mut Chains,
        a: &[u8; 16],
        b: &[u8; 16],
    ) {
        chains.a = self.mul_r::<FRESH>(add_block(chains.a, a));
        chains.b = self.mul_r::<FRESH>(add_block(chains.b, b));
    }

    /// Joins the chains: h = A·r^L + B.
    #[inline(always)]
    pub(super) fn chains_end(&mut self, chains: Chains) {
        // r^L read back from the cache, which `finish` wipes: returned and
        // kept in registers through the run instead, it was spilled to
        // stack slots nothing wipes (the zmm short path, which has no stack
        // scrub).
        let slot = usize::from(self.powers[0].0 != chains.len);
        debug_assert_eq!(self.powers[slot].0, chains.len);
        let p = &self.powers[slot].1;
        let power = [fresh(&p[0]), fresh(&p[1]), fresh(&p[2])];
        [self.h0, self.h1, self.h2] = mul_add(chains.a, power, chains.b);
    }

    /// Puts r^len (len ≥ 1) in the two-entry cache, unless it is there:
    /// the stitched kernels use one or two run lengths per message.
    #[inline(always)]
    fn cache_power(&mut self, len: usize) {
        debug_assert!(len >= 1);
        if self.powers.iter().any(|(l, _)| *l == len) {
            return;
        }
        // Square and multiply over the bits of len (public), from the top.
        let r = [fresh(&self.r0), fresh(&self.r1), 0];
        let mut x = r;
        for bit in (0..len.ilog2()).rev() {
            x = mul_add(x, x, [0; 3]);
            if len >> bit & 1 == 1 {
                x = self.mul_r::<true>(x);
            }
        }
        self.powers[1] = self.powers[0];
        self.powers[0] = (len, x);
    }

    /// Absorbs `data`, zero-padded to a whole number of blocks (the AEAD's
    /// padding of AAD and ciphertext).
    #[inline(always)]
    pub(super) fn padded(&mut self, data: &[u8]) {
        let rem = data.len() % 16;
        let whole = data.len() - rem;
        self.blocks(&data[..whole]);
        if rem > 0 {
            // The partial block as a number, built in registers: copying it
            // into a zeroed buffer and reading that back stalled store
            // forwarding on the Poly1305 chain. With 16 bytes to hand, load
            // the last 16 and shift the ones before the block out.
            let m = if data.len() >= 16 {
                let last: [u8; 16] = data[data.len() - 16..].try_into().expect("16 bytes");
                u128::from_le_bytes(last) >> (8 * (16 - rem))
            } else {
                data.iter()
                    .rev()
                    .fold(0u128, |m, &b| (m << 8) | u128::from(b))
            };
            self.block(&m.to_le_bytes());
        }
    }

    /// h = (h + m + 2¹²⁸) · r, partially reduced (h < 2¹³⁰ + small).
    #[inline(always)]
    fn block(&mut self, m: &[u8]) {
        [self.h0, self.h1, self.h2] = self.mul_r::<true>(add_block([self.h0, self.h1, self.h2], m));
    }

    /// `x·r` for `x₂ ≤ 6`, partially reduced (top limb ≤ 4). The clamp
    /// makes r₁ a multiple of 4, so x₁r₁·2¹²⁸ ≡ x₁·s₁ folds in directly.
    ///
    /// `FRESH`: r is read from this state (which `finish` wipes) at every
    /// block, with volatile loads. The code outside the stitched kernels
    /// (`blocks`, `padded`: all a short record hashes) does so: kept in
    /// registers across a record there, r was spilled to stack slots
    /// nothing wipes, and the ymm and zmm short paths have no stack scrub.
    /// The kernels' stitched chain steps keep r in registers, since fresh
    /// loads slow the bulk (docs/decisions.md, "ChaCha20-Poly1305 Poly1305
    /// runs and tail calls (AMD EPYC Zen 4)"); the scrub after a long
    /// record covers their frame.
    #[inline(always)]
    fn mul_r<const FRESH: bool>(&self, [x0, x1, x2]: [u64; 3]) -> [u64; 3] {
        let [r0, r1, s1] = if FRESH {
            [fresh(&self.r0), fresh(&self.r1), fresh(&self.s1)]
        } else {
            [self.r0, self.r1, self.s1]
        };
        // x₂·s₁ < 7·2⁶¹ and x₂·r₀ < 7·2⁶⁰ fit 64 bits: one imul each.
        let d0 = mul(x0, r0) + mul(x1, s1);
        let d1 = mul(x0, r1) + mul(x1, r0) + (x2 * s1) as u128 + (d0 >> 64);
        let d2 = x2 * r0 + (d1 >> 64) as u64;

        // Everything from bit 130 up, times 5, folds back into the bottom,
        // its carries through `u128` sums (an add/adc chain: with
        // `overflowing_add` the compiler reassociated the sum and rebuilt
        // the carry with `cmp`/`setb`, two more integer ops a block).
        let fold = (d2 & !3) + (d2 >> 2);
        let t = u128::from(d0 as u64) + u128::from(fold);
        let t1 = u128::from(d1 as u64) + (t >> 64);
        [t as u64, t1 as u64, (d2 & 3) + (t1 >> 64) as u64]
    }

    /// The tag: (h mod 2¹³⁰−5) + s mod 2¹²⁸.
    #[inline(always)]
    pub(super) fn finish(&mut self) -> [u8; 16] {
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
        self.powers.zeroize();
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

    /// Partial final blocks (AAD and ciphertext lengths that are not a
    /// multiple of 16): zero padding, against RustCrypto's padded mode.
    #[test]
    fn padded_matches_reference() {
        use poly1305::universal_hash::UniversalHash;
        let key = [0x5au8; 32];
        let msg: Vec<u8> = (0..200u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in 0..=msg.len() {
            let mut reference = poly1305::Poly1305::new(&key.into());
            reference.update_padded(&msg[..len]);
            let mut p = Poly1305::new(&key);
            p.padded(&msg[..len]);
            assert_eq!(
                p.finish(),
                <[u8; 16]>::from(reference.finalize()),
                "len {len}"
            );
        }
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
            let blocks = 1 + (next() % 100) as usize;
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
