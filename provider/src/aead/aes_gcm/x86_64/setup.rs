//! Key setup: the AES key schedule (AESKEYGENASSIST), the GHASH key
//! powers, and [`RoundKeys`] on their own (AES-ECB, QUIC header
//! protection).

use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::ctr::encrypt_block;
use super::ghash::{gf_mul, mul_lanes};
use super::key::{wipe, wipe_blocks, KeyData};
use super::lanes::{load128, Lanes};

/// Expands `key` (16 or 32 bytes, as `NR` says) into `data` in place and
/// precomputes the GHASH powers, writing every field of `data` (round keys
/// past `NR` as zeros); every temporary that held key material is
/// wiped before returning, and this frame (the setup's deepest) is marked
/// in `stack` for the scrub after it.
///
/// The powers are a doubling: H¹ … H^B serially (B = `V::BLOCKS`), then
/// each step multiplies every register of powers so far by the highest of
/// them, so the chain is 3 + log₂(P / B) products deep (6 for the zmm
/// engine's 32 powers, not 31).
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ, SSSE3 and `V`'s features, the
/// caller must enable them, and `key.len()` must be 16 if `NR == 10`, else
/// 32.
#[inline(always)]
pub(crate) unsafe fn expand<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    data: &mut core::mem::MaybeUninit<KeyData<V, NR, P, X>>,
    key: &[u8],
    stack: &mut crate::aead::secret::SetupStack,
) {
    const {
        assert!(
            P.is_multiple_of(V::BLOCKS) && (P / V::BLOCKS).is_power_of_two(),
            "the doubling reaches P exactly"
        );
        assert!(matches!(V::BLOCKS, 1 | 2 | 4), "H¹ … H^B below");
    }
    stack.mark();
    // SAFETY: the CPU has AES-NI, PCLMULQDQ, SSSE3 and `V`'s features, enabled by the caller
    // (this fn's contract). `rk`, `h` and `hx` point to the fields of `data` (no reference to
    // uninitialised memory is made); every store writes one whole 16-byte entry of one (index
    // below its length: 15, `P`, `X`), every `V` load and store spans `V::BLOCKS` entries of
    // `h` starting at most at `P - V::BLOCKS`, and every load reads an entry written before
    // it. `expand_key` checks the key length.
    unsafe {
        let out = data.as_mut_ptr();
        let rk_out = core::ptr::addr_of_mut!((*out).rk).cast::<u8>();
        let base = core::ptr::addr_of_mut!((*out).h).cast::<u8>();
        let hx_out = core::ptr::addr_of_mut!((*out).hx).cast::<u8>();
        let mut rk = expand_key(key);
        for (i, k) in rk.iter().enumerate() {
            _mm_storeu_si128(rk_out.add(16 * i).cast(), *k);
        }
        // H = E(K, 0), byte-reflected, then multiplied by x⁻¹ (a 1-bit left
        // shift in this representation, reduced by the polynomial).
        let mut h = [0u8; 16];
        _mm_storeu_si128(
            h.as_mut_ptr().cast(),
            encrypt_block(&rk[..=NR], _mm_setzero_si128()),
        );
        let mut v = u128::from_be_bytes(h);
        let carry = (v >> 127).wrapping_neg();
        let mut twisted =
            ((v << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001)).to_le_bytes();
        let h1 = _mm_loadu_si128(twisted.as_ptr().cast());
        // Entry `P - k` holds H^k. H² and H⁴ are two products deep.
        let entry = |k: usize| base.add(16 * (P - k)).cast::<__m128i>();
        _mm_storeu_si128(entry(1), h1);
        let mut power = h1;
        if V::BLOCKS >= 2 {
            power = gf_mul(h1, h1);
            _mm_storeu_si128(entry(2), power);
        }
        if V::BLOCKS == 4 {
            _mm_storeu_si128(entry(3), gf_mul(power, h1));
            power = gf_mul(power, power);
            _mm_storeu_si128(entry(4), power);
        }
        let mut have = V::BLOCKS;
        while have < P {
            let step = V::broadcast(base.add(16 * (P - have)));
            for top in (V::BLOCKS..=have).step_by(V::BLOCKS) {
                let x = V::loadu(base.add(16 * (P - top)));
                mul_lanes(x, step).storeu(base.add(16 * (P - top - have)));
            }
            have *= 2;
        }
        if X == P {
            for i in 0..P {
                let p = _mm_loadu_si128(base.add(16 * i).cast());
                let halves = _mm_xor_si128(p, _mm_shuffle_epi32(p, 0x4e));
                _mm_storeu_si128(hx_out.add(16 * i).cast(), halves);
            }
        }
        // The round keys (the first is the raw key), H and its last power.
        wipe(&mut rk);
        h.zeroize();
        twisted.zeroize();
        v = 0;
        core::hint::black_box(v);
        let mut last = [power, h1];
        wipe(&mut last);
    }
}

/// AES round keys on their own (AES-ECB, and the extra block of
/// `seal_with_block`), inline: they live in their holder's allocation,
/// built inside the holder's setup frame (`aead::secret::set_up`), whose
/// scrub covers their moves; zeroized on drop.
pub(crate) struct RoundKeys<const NR: usize>(Aligned<15>);

/// Entries 16-byte aligned, for the wipe on drop.
#[repr(C, align(16))]
pub(super) struct Aligned<const N: usize>([[u8; 16]; N]);

impl<const NR: usize> RoundKeys<NR> {
    /// `None` unless this CPU has AES-NI (with SSSE3 and PCLMULQDQ: the
    /// AES-GCM engines' baseline).
    ///
    /// # Panics
    /// If `key` is not the length `NR` implies.
    pub(crate) fn new(key: &[u8], stack: &mut crate::aead::secret::SetupStack) -> Option<Self> {
        assert_eq!(key.len(), if NR == 10 { 16 } else { 32 }, "AES key length");
        if !crate::cpu::Features::get().aes_clmul {
            return None;
        }
        let mut rk = core::mem::MaybeUninit::<Aligned<15>>::uninit();
        // SAFETY: AES-NI was detected and the key length checked; `expand_round_keys` writes
        // all 15 entries, so `rk` is initialised after it.
        unsafe {
            expand_round_keys(rk.as_mut_ptr().cast(), key, stack);
            Some(Self(rk.assume_init()))
        }
    }

    pub(crate) fn keys(&self) -> &[[u8; 16]; 15] {
        &self.0 .0
    }

    /// The first `B` bytes of the AES (ECB) encryption of each input,
    /// eight blocks in flight; one block takes a path of its own.
    ///
    /// # Panics
    /// If the lengths differ, or `B > 16`.
    pub(crate) fn encrypt_prefix<const B: usize>(&self, inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
        assert!(inputs.len() == out.len() && B <= 16, "one output per input");
        // SAFETY: a `RoundKeys` exists only where `new` detected AES-NI.
        unsafe { ecb::<NR, B>(&self.0 .0, inputs, out) }
    }
}

impl<const NR: usize> Drop for RoundKeys<NR> {
    fn drop(&mut self) {
        wipe_blocks(&mut self.0 .0);
    }
}

/// Writes all 15 entries of `out` (past `NR + 1`, zeros).
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ and SSSE3 (the features enabled
/// here); `out` must be valid for writes of the array; `key` must be 16 or
/// 32 bytes (checked).
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
pub(super) unsafe fn expand_round_keys(
    out: *mut [[u8; 16]; 15],
    key: &[u8],
    stack: &mut crate::aead::secret::SetupStack,
) {
    stack.mark();
    // SAFETY: AES-NI and SSSE3 are enabled on this fn (its contract); `out` is valid for
    // writes of the whole array (contract) and each store writes one of its 15 entries;
    // `expand_key` checks the key length.
    unsafe {
        let mut rk = expand_key(key);
        for (i, k) in rk.iter().enumerate() {
            _mm_storeu_si128(out.cast::<u8>().add(16 * i).cast(), *k);
        }
        wipe(&mut rk);
    }
}

/// The first `B` bytes of AES-ECB of each input, up to eight blocks in
/// flight (a lone block is encrypted alone). The full blocks exist only in
/// registers and one 16-byte stack slot, wiped before returning.
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ and SSSE3 (the features enabled
/// here); `out.len() == inputs.len()` and `B <= 16`.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
pub(super) unsafe fn ecb<const NR: usize, const B: usize>(
    rk: &[[u8; 16]; 15],
    inputs: &[[u8; 16]],
    out: &mut [[u8; B]],
) {
    // SAFETY: AES-NI is enabled on this fn (its contract); every load reads one whole `[u8;
    // 16]` (an input or a round key), every store writes the 16-byte `block`, and the volatile
    // write targets `block` itself.
    unsafe {
        let mut block = [0u8; 16];
        if let ([input], [o]) = (inputs, &mut *out) {
            let mut x = _mm_xor_si128(_mm_loadu_si128(input.as_ptr().cast()), load128(&rk[0]));
            for k in &rk[1..NR] {
                x = _mm_aesenc_si128(x, load128(k));
            }
            _mm_storeu_si128(
                block.as_mut_ptr().cast(),
                _mm_aesenclast_si128(x, load128(&rk[NR])),
            );
            o.copy_from_slice(&block[..B]);
        } else {
            for (chunk, outs) in inputs.chunks(8).zip(out.chunks_mut(8)) {
                let mut x = [_mm_setzero_si128(); 8];
                for (v, b) in x.iter_mut().zip(chunk) {
                    *v = _mm_xor_si128(_mm_loadu_si128(b.as_ptr().cast()), load128(&rk[0]));
                }
                for k in &rk[1..NR] {
                    let k = load128(k);
                    for v in x.iter_mut() {
                        *v = _mm_aesenc_si128(*v, k);
                    }
                }
                let last = load128(&rk[NR]);
                for (v, o) in x.iter().zip(outs.iter_mut()) {
                    _mm_storeu_si128(block.as_mut_ptr().cast(), _mm_aesenclast_si128(*v, last));
                    o.copy_from_slice(&block[..B]);
                }
                wipe(&mut x);
            }
        }
        core::ptr::write_volatile(&mut block, [0; 16]);
    }
}

macro_rules! expand_step {
    ($prev:expr, $assist:expr, $shuffle:literal) => {{
        // Prefix XOR of the four words in two steps (4 and 8 bytes), not
        // three: the key schedule is one serial chain.
        let mut k = $prev;
        k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
        k = _mm_xor_si128(k, _mm_slli_si128(k, 8));
        _mm_xor_si128(k, _mm_shuffle_epi32($assist, $shuffle))
    }};
}

/// The AES key schedule with AESKEYGENASSIST.
#[inline(always)]
pub(super) unsafe fn expand_key(key: &[u8]) -> [__m128i; 15] {
    // SAFETY: the CPU has AES-NI (module contract); the assert bounds the loads: 16 bytes at 0
    // and, for a 32-byte key, 16 at 16.
    unsafe {
        assert!(key.len() == 16 || key.len() == 32, "AES key length");
        let mut rk = [_mm_setzero_si128(); 15];
        rk[0] = _mm_loadu_si128(key.as_ptr().cast());
        if key.len() == 16 {
            macro_rules! round {
                ($i:literal, $rcon:literal) => {
                    rk[$i] = expand_step!(
                        rk[$i - 1],
                        _mm_aeskeygenassist_si128(rk[$i - 1], $rcon),
                        0xff
                    );
                };
            }
            round!(1, 0x01);
            round!(2, 0x02);
            round!(3, 0x04);
            round!(4, 0x08);
            round!(5, 0x10);
            round!(6, 0x20);
            round!(7, 0x40);
            round!(8, 0x80);
            round!(9, 0x1b);
            round!(10, 0x36);
        } else {
            rk[1] = _mm_loadu_si128(key[16..].as_ptr().cast());
            macro_rules! round {
                ($i:literal, $rcon:literal) => {
                    rk[$i] = expand_step!(
                        rk[$i - 2],
                        _mm_aeskeygenassist_si128(rk[$i - 1], $rcon),
                        0xff
                    );
                };
                ($i:literal, $rcon:literal, odd) => {
                    round!($i, $rcon);
                    rk[$i + 1] =
                        expand_step!(rk[$i - 1], _mm_aeskeygenassist_si128(rk[$i], 0), 0xaa);
                };
            }
            round!(2, 0x01, odd);
            round!(4, 0x02, odd);
            round!(6, 0x04, odd);
            round!(8, 0x08, odd);
            round!(10, 0x10, odd);
            round!(12, 0x20, odd);
            round!(14, 0x40);
        }
        rk
    }
}
