//! Key setup: the GHASH key powers over the architecture's AES key
//! schedule (`arch::expand_key_into` on x86-64, `arch::expand_key`
//! elsewhere), and [`RoundKeys`] on their own (AES-ECB,
//! QUIC header protection).

use super::super::arch::{self, Block};

use super::ghash::{gf_mul, mul_lanes};
use super::key::{wipe, wipe_blocks, KeyData};
use super::lanes::Lanes;

/// Expands `key` (16 or 32 bytes, as `NR` says) into `data` in place and
/// precomputes the GHASH powers, writing every field of `data` (round keys
/// past `NR` as zeros). On x86-64 the round keys, H and its powers go from
/// registers straight into `data` and no frame holds them, so an optimised
/// build marks none and no scrub follows (the stack-residue test checks
/// it; a build with debug assertions marks this frame all the same); on
/// aarch64 the schedule's words and the products pass through the stack,
/// are wiped, and this frame (the setup's deepest) is marked in `stack`
/// for the scrub after it.
///
/// The powers are a doubling: H¹ … H^B serially (B = `V::BLOCKS`), then
/// each step multiplies every register of powers so far by the highest of
/// them, so the chain is 3 + log₂(P / B) products deep (6 for the zmm
/// engine's 32 powers, not 31).
///
/// # Safety
/// The CPU must have the block features and `V`'s features, the
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
    stack.mark_schedule();
    // SAFETY: the CPU has the block features and `V`'s features, enabled by the caller
    // (this fn's contract). `rk`, `h` and `hx` point to the fields of `data` (the one
    // reference, to `rk`, is made after all 15 of its entries are written); every store writes one whole 16-byte entry of one (index
    // below its length: 15, `P`, `X`), every `V` load and store spans `V::BLOCKS` entries of
    // `h` starting at most at `P - V::BLOCKS`, and every load reads an entry written before
    // it. `arch::expand_key_into` and `arch::expand_key` check the key length.
    unsafe {
        let out = data.as_mut_ptr();
        let rk_out = core::ptr::addr_of_mut!((*out).rk).cast::<u8>();
        let base = core::ptr::addr_of_mut!((*out).h).cast::<u8>();
        let hx_out = core::ptr::addr_of_mut!((*out).hx).cast::<u8>();
        #[cfg(target_arch = "x86_64")]
        arch::expand_key_into(key, rk_out.cast());
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut rk = arch::expand_key(key);
            for (i, k) in rk.iter().enumerate() {
                k.storeu(rk_out.add(16 * i));
            }
            wipe(&mut rk);
        }
        // E(K, 0), the round keys read from where they were stored.
        let e0 = encrypt_stored::<NR>(&*rk_out.cast::<[[u8; 16]; 15]>(), arch::zero());
        // H = E(K, 0), byte-reflected, then twisted (multiplied by x⁻¹: a
        // 1-bit left shift in this representation, reduced by the
        // polynomial) as a product in vector registers, `gf_mul(H, T)` with
        // `T` the twist of the twist of 1 (`TWIST_BY`). Done in general
        // registers, the twist left half of H in a register that a caller
        // saved on its stack, above the scrub (aarch64).
        let h1 = gf_mul(e0.bswap(), arch::from_u128(TWIST_BY));
        // Entry `P - k` holds H^k. H² and H⁴ are two products deep.
        let entry = |k: usize| base.add(16 * (P - k));
        h1.storeu(entry(1));
        let mut power = h1;
        if V::BLOCKS >= 2 {
            power = gf_mul(h1, h1);
            power.storeu(entry(2));
        }
        if V::BLOCKS == 4 {
            gf_mul(power, h1).storeu(entry(3));
            power = gf_mul(power, power);
            power.storeu(entry(4));
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
                let p = Block::loadu(base.add(16 * i));
                let halves = p.xor(p.swap_halves());
                halves.storeu(hx_out.add(16 * i));
            }
        }
        // H and its last power, where the products pass through the stack.
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut last = [power, h1];
            wipe(&mut last);
        }
    }
}

/// `gf_mul(a, b)` is `a·b·u⁻¹` where `u` is the twist of 1 (`0xc2…01`);
/// the twist of `u`, `u²`, makes it `a·u`: the twist of `a`.
const TWIST_BY: u128 = 0x4600_0000_0000_0000_0000_0000_0000_0003;

/// AES round keys on their own (AES-ECB, and the extra block of
/// `seal_with_block`), inline: they are made zeroed in their holder's
/// allocation and keyed there ([`RoundKeys::set`]); zeroized on drop.
pub(crate) struct RoundKeys<const NR: usize>(Aligned<15>);

/// Entries 16-byte aligned, for the wipe on drop.
#[repr(C, align(16))]
pub(super) struct Aligned<const N: usize>([[u8; 16]; N]);

impl<const NR: usize> RoundKeys<NR> {
    /// All-zero round keys, to be keyed in place by [`Self::set`]; `None`
    /// unless this CPU has the AES-GCM engines' baseline
    /// ([`arch::detected`]).
    pub(crate) fn zeroed() -> Option<Self> {
        if arch::detected() {
            Some(Self(Aligned([[0; 16]; 15])))
        } else {
            None
        }
    }

    /// Expands `key` into these round keys where they lie. On x86-64 the
    /// schedule goes from registers straight here and, optimised, leaves
    /// nothing on the stack, so a key set in its allocation needs no scrub
    /// after its setup (a build with debug assertions marks the frame);
    /// on aarch64 the schedule's words pass through the stack, and
    /// the frame is marked for the setup's scrub.
    ///
    /// # Panics
    /// If `key` is not the length `NR` implies.
    pub(crate) fn set(&mut self, key: &[u8], stack: &mut crate::aead::secret::SetupStack) {
        assert_eq!(key.len(), if NR == 10 { 16 } else { 32 }, "AES key length");
        // SAFETY: a `RoundKeys` exists only where `zeroed` detected the block features; the
        // key length is checked and `self.0 .0` is the whole 15-entry array.
        unsafe { expand_round_keys(&mut self.0 .0, key, stack) }
    }

    pub(crate) fn keys(&self) -> &[[u8; 16]; 15] {
        &self.0 .0
    }

    /// The first five bytes of the AES encryption of one block, returned in
    /// a register (no stack slot holds the block): one QUIC
    /// header-protection mask, the path every packet takes.
    #[inline(always)]
    pub(crate) fn mask(&self, input: &[u8; 16]) -> [u8; 5] {
        // SAFETY: a `RoundKeys` exists only where `zeroed` detected the block features.
        unsafe { mask_one::<NR>(&self.0 .0, input) }
    }

    /// The first five bytes of the AES (ECB) encryption of each input
    /// (QUIC header-protection masks), eight blocks in flight; one block
    /// takes [`RoundKeys::mask`]'s path.
    ///
    /// # Panics
    /// If the lengths differ.
    pub(crate) fn encrypt_prefix(&self, inputs: &[[u8; 16]], out: &mut [[u8; 5]]) {
        assert!(inputs.len() == out.len(), "one output per input");
        if let ([input], [o]) = (inputs, &mut *out) {
            *o = self.mask(input);
            return;
        }
        // SAFETY: a `RoundKeys` exists only where `zeroed` detected the block features.
        unsafe { ecb::<NR>(&self.0 .0, inputs, out) }
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
/// The CPU must have the block features (the features enabled
/// here); `out` must be valid for writes of the array; `key` must be 16 or
/// 32 bytes (checked).
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "aes,pclmulqdq,ssse3"))]
#[cfg_attr(target_arch = "aarch64", target_feature(enable = "aes,neon"))]
pub(super) unsafe fn expand_round_keys(
    out: *mut [[u8; 16]; 15],
    key: &[u8],
    stack: &mut crate::aead::secret::SetupStack,
) {
    stack.mark_schedule();
    // SAFETY: the block features are enabled on this fn (its contract); `out` is valid for
    // writes of the whole array (contract) and each store writes one of its 15 entries;
    // `arch::expand_key_into` and `arch::expand_key` check the key length.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        arch::expand_key_into(key, out.cast());
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut rk = arch::expand_key(key);
            for (i, k) in rk.iter().enumerate() {
                k.storeu(out.cast::<u8>().add(16 * i));
            }
            wipe(&mut rk);
        }
    }
}

/// AES of one block with round keys read from memory at each round (held
/// in registers, they would be copies to wipe): E(K, 0) at setup and the
/// header-protection mask.
///
/// # Safety
/// The CPU must have the block features (the caller enables them).
#[inline(always)]
unsafe fn encrypt_stored<const NR: usize>(rk: &[[u8; 16]; 15], x: Block) -> Block {
    // SAFETY: register-only block operations on whole 16-byte round keys; the CPU has the
    // block features (this fn's contract).
    unsafe {
        let mut x = x.xor(arch::load(&rk[0]));
        each_round!(Block::UNROLL_ROUNDS, NR, |r| {
            x = x.aesenc(arch::load(&rk[r]));
        });
        x.aesenclast(arch::load(&rk[NR]))
    }
}

/// The first five bytes of AES-ECB of `input`: the block stays in a
/// register and the five bytes leave in the return register.
///
/// # Safety
/// The CPU must have the block features (the features enabled here).
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "aes,pclmulqdq,ssse3"))]
#[cfg_attr(target_arch = "aarch64", target_feature(enable = "aes,neon"))]
unsafe fn mask_one<const NR: usize>(rk: &[[u8; 16]; 15], input: &[u8; 16]) -> [u8; 5] {
    // SAFETY: the block features are enabled on this fn (its contract); the load reads the
    // whole `[u8; 16]` input.
    let x = unsafe { encrypt_stored::<NR>(rk, Block::loadu(input.as_ptr())) };
    let [a, b, c, d, e, ..] = (arch::to_u128(x) as u64).to_le_bytes();
    [a, b, c, d, e]
}

/// The first five bytes of AES-ECB of each input, up to eight blocks in
/// flight. The full blocks exist only in registers and one 16-byte stack
/// slot, wiped before returning.
///
/// # Safety
/// The CPU must have the block features (the features enabled
/// here); `out.len() == inputs.len()`.
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "aes,pclmulqdq,ssse3"))]
#[cfg_attr(target_arch = "aarch64", target_feature(enable = "aes,neon"))]
pub(super) unsafe fn ecb<const NR: usize>(
    rk: &[[u8; 16]; 15],
    inputs: &[[u8; 16]],
    out: &mut [[u8; 5]],
) {
    // SAFETY: the block features are enabled on this fn (its contract); every load reads one whole `[u8;
    // 16]` (an input or a round key), every store writes the 16-byte `block`, and the volatile
    // write targets `block` itself.
    unsafe {
        let mut block = [0u8; 16];
        for (chunk, outs) in inputs.chunks(8).zip(out.chunks_mut(8)) {
            let mut x = [arch::zero(); 8];
            for (v, b) in x.iter_mut().zip(chunk) {
                *v = Block::loadu(b.as_ptr()).xor(arch::load(&rk[0]));
            }
            each_round!(Block::UNROLL_ROUNDS, NR, |r| {
                let k = arch::load(&rk[r]);
                for v in x.iter_mut() {
                    *v = v.aesenc(k);
                }
            });
            let last = arch::load(&rk[NR]);
            for (v, o) in x.iter().zip(outs.iter_mut()) {
                (v.aesenclast(last)).storeu(block.as_mut_ptr());
                o.copy_from_slice(&block[..5]);
            }
            wipe(&mut x);
        }
        core::ptr::write_volatile(&mut block, [0; 16]);
    }
}
