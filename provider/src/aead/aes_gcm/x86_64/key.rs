//! Per-key data: the AES key schedule (AESKEYGENASSIST), the GHASH key
//! powers, [`RoundKeys`] on their own (AES-ECB), and the wipes of key
//! material.

use core::arch::x86_64::*;
use core::marker::PhantomData;

use zeroize::Zeroize;

use super::ctr::encrypt_block;
use super::ghash::{gf_mul, mul_lanes};
use super::lanes::{load128, Lanes};
use super::MAX_REGS;

/// Per-key precomputation for lane type `V` and `NR` AES rounds, built once
/// in its final allocation; zeroized on drop.
///
/// `P` powers of H are kept: as many as one batch hashes (`V::BATCH`), so a
/// key costs only what its engine uses. `X` is `P` where the Karatsuba
/// halves (`lo ^ hi` of each power) are stored, or 0 where they are computed
/// from the power when loaded (one shuffle and one XOR per register), which
/// keeps a key of the ymm engine within the size of ring's.
/// `repr(C)` and 16-byte aligned: every entry is 16-byte aligned (the
/// fields are whole entries), which the wipe on drop relies on.
#[repr(C, align(16))]
pub(crate) struct KeyData<V, const NR: usize, const P: usize, const X: usize> {
    /// AES round keys (`NR + 1` used: 11 for AES-128, 15 for AES-256).
    pub(super) rk: [[u8; 16]; 15],
    /// Twisted H^P … H^1 (index `P - k` holds H^k).
    h: [[u8; 16]; P],
    /// The same powers with both halves `lo ^ hi`, for Karatsuba (if `X == P`).
    hx: [[u8; 16]; X],
    _lanes: PhantomData<V>,
}

impl<V, const NR: usize, const P: usize, const X: usize> Drop for KeyData<V, NR, P, X> {
    fn drop(&mut self) {
        wipe_blocks(&mut self.rk);
        wipe_blocks(&mut self.h);
        wipe_blocks(&mut self.hx);
    }
}

/// Zeroes `x` with one volatile 16-byte store per entry (`zeroize` writes
/// byte by byte, and a volatile write of the whole array goes through a
/// stack copy and `memcpy`: either made dropping a zmm key cost more than
/// building it). Every entry must be 16-byte aligned: `x` is a field of
/// [`KeyData`] or [`Aligned`] (checked in debug builds).
#[inline(always)]
pub(super) fn wipe_blocks<const N: usize>(x: &mut [[u8; 16]; N]) {
    debug_assert!(
        x.as_ptr().cast::<__m128i>().is_aligned(),
        "16-byte aligned entries"
    );
    for entry in x.iter_mut() {
        // SAFETY: `entry` is a valid `&mut [u8; 16]`, 16 writable bytes, 16-byte aligned
        // (this fn's requirement: the containers are `repr(C, align(16))` of whole entries).
        unsafe {
            let p = core::ptr::from_mut(entry).cast::<__m128i>();
            core::ptr::write_volatile(p, _mm_setzero_si128());
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

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
/// `seal_with_block`); zeroized on drop.
pub(crate) struct RoundKeys<const NR: usize>(Box<Aligned<15>>);

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
        // Uninitialised (`malloc`, not `calloc`): `expand_round_keys` writes it all.
        let mut rk = Box::<Aligned<15>>::new_uninit();
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

/// Zeroes vector temporaries with volatile writes, so the wipe is not
/// optimised away.
/// `ks[i]`, read back from memory (not a register copy kept alive since it
/// was written), then all of `ks` wiped.
#[inline(always)]
pub(super) unsafe fn take_and_wipe<const N: usize>(ks: &mut [__m128i; N], i: usize) -> __m128i {
    // SAFETY: `wipe` only writes whole elements of `ks` (volatile stores of a zero vector); `i`
    // indexes `ks` with a bounds check.
    unsafe {
        let x = core::hint::black_box(&mut *ks)[i];
        wipe(ks);
        x
    }
}

#[inline(always)]
pub(super) unsafe fn wipe<const N: usize>(x: &mut [__m128i; N]) {
    // SAFETY: each volatile write targets one element of `x`, a valid `&mut`.
    unsafe {
        for v in x.iter_mut() {
            core::ptr::write_volatile(v, _mm_setzero_si128());
        }
    }
}

impl<V: Lanes, const NR: usize, const P: usize, const X: usize> KeyData<V, NR, P, X> {
    /// Uninitialised, boxed (`malloc`, not the slower `calloc` a zeroed
    /// box costs): `expand` then fills it in place.
    pub(crate) fn uninit() -> Box<core::mem::MaybeUninit<Self>> {
        const {
            assert!(NR == 10 || NR == 14);
            assert!(
                P >= V::BATCH,
                "a batch hashes V::BATCH blocks with one reduction"
            );
            assert!(X == P || X == 0);
            assert!(
                V::REGS <= MAX_REGS,
                "a batch's registers fit the state array"
            );
        }
        Box::new_uninit()
    }

    /// H^k (and its Karatsuba halves) for the `W::BLOCKS` lanes of a `W`:
    /// lane `i` holds H^(k - i).
    ///
    /// # Safety
    /// The CPU has `W`'s features.
    ///
    /// # Panics
    /// Unless `W::BLOCKS <= k <= P` (constant after inlining: no cost).
    #[inline(always)]
    pub(super) unsafe fn power<W: Lanes>(&self, k: usize) -> (W, W) {
        // SAFETY: `W::loadu` reads `W::BLOCKS * 16` bytes from entry `P - k` on: with `k >=
        // W::BLOCKS` (asserted) that is within `h` (and `hx` when `X == P`), and the pointers
        // derive from the whole arrays; the CPU has `W`'s features (this fn's contract).
        unsafe {
            assert!(k >= W::BLOCKS && k <= P, "a power of H this key holds");
            let i = P - k;
            // Pointers from the whole arrays: a `W` spans `W::BLOCKS` entries.
            let h = W::loadu(self.h.as_ptr().cast::<u8>().add(16 * i));
            let hx = if X == P {
                W::loadu(self.hx.as_ptr().cast::<u8>().add(16 * i))
            } else {
                h.xor(h.swap_halves())
            };
            (h, hx)
        }
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
