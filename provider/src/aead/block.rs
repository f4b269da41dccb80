//! Keyed block functions of 16-byte inputs, several inputs per call:
//! AES-128 and AES-256 (one ECB block), and ChaCha20 (one block whose
//! counter ‖ nonce is the input, RFC 8439 §2.3). QUIC header protection
//! (RFC 9001 §5.4.3, §5.4.4) takes the first five bytes of such a block per
//! packet; a batch of packets computes its blocks in one pass.
//!
//! Backends follow the AEADs': on x86-64 the AES functions run on AES-NI
//! (up to eight blocks in flight); the ChaCha20 function runs on the width
//! of the ChaCha20-Poly1305 engine (4, 8 or 16 blocks per pass on x86-64,
//! 8 on aarch64's NEON register pairs); `Base` is the
//! base provider's own header-protection primitive, which yields exactly
//! those five bytes, so five bytes is what every backend returns.

#[cfg(feature = "aws-lc-rs")]
use aws_lc_rs::aead::quic as base_quic;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use ring::aead::quic as base_quic;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use super::aes_gcm::{ExtraKeys, RoundKeys};
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use super::chacha20_poly1305::Blocks;
use core::mem::MaybeUninit;

use super::secret::SetupStack;
use super::{Algorithm, Backend, Hardening, TAG_LEN};

/// A block-function key on one backend. Our engines' keys are inline (no
/// allocation of their own): a `BlockKey` is made only in its holder's
/// box, by [`BlockKey::boxed`].
pub(crate) enum BlockKey {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    Aes128(RoundKeys<10>),
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    Aes256(RoundKeys<14>),
    /// ChaCha20 on the width of one of our engines.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    ChaCha20(Blocks),
    /// Boxed: the libraries keep their key schedules inline. The flag:
    /// scrub the stack after each mask ([`Hardening::scrub_base_stack`]).
    Base(Box<base_quic::HeaderProtectionKey>, bool),
}

impl BlockKey {
    /// The key for `alg`'s block function on the engine family of
    /// `backend` (the backend of the AEAD it goes with), in a box of its
    /// own: our AES-NI code for the x86 AES-GCM backends, the ChaCha20
    /// engine's width for the x86 ChaCha20 backends, the base provider's
    /// for `Base` and wherever ours cannot run. The box is allocated first
    /// and the key written into it in one setup frame
    /// ([`super::secret::set_up`]): no key word is live across the
    /// allocation. Our keys are keyed where they lie in the box, and on
    /// x86-64 (optimised) no frame holds them, so nothing is scrubbed;
    /// where a frame does (aarch64, `Base` with its hardening) the scrub
    /// after setup covers it.
    ///
    /// # Panics
    /// If `key` is not `alg.key_len()` bytes.
    #[inline(always)]
    pub(crate) fn boxed(
        alg: Algorithm,
        key: &[u8],
        backend: Backend,
        hardening: Hardening,
    ) -> Box<Self> {
        assert_eq!(key.len(), alg.key_len(), "block key length");
        super::secret::set_up(backend, hardening, |stack| {
            let slot = Box::<Self>::new_uninit();
            Self::ours(slot, alg, key, backend, stack)
                .unwrap_or_else(|slot| Box::write(slot, Self::base(alg, key, hardening)))
        })
    }

    /// Our block function for `backend`'s engine family, written into
    /// `slot`, if it runs here (else `slot` back). Inlined into the setup
    /// frame, and each variant written on its own (a write of the joined
    /// value copied the whole enum through a temporary); [`Self::base`],
    /// whose key is a large temporary that would deepen the scrub, is not.
    #[inline(always)]
    fn ours(
        slot: Box<MaybeUninit<Self>>,
        alg: Algorithm,
        key: &[u8],
        backend: Backend,
        stack: &mut SetupStack,
    ) -> Result<Box<Self>, Box<MaybeUninit<Self>>> {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        let aes = matches!(
            backend,
            Backend::X86AesNi
                | Backend::X86Vaes
                | Backend::X86Vaes512
                | Backend::X86Vaes512Karatsuba
                | Backend::X86Vaes512Hybrid
                | Backend::Aarch64Aes
        );
        match alg {
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Algorithm::Aes128Gcm | Algorithm::Aes256Gcm if aes => Self::aes(slot, alg, key, stack),
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Algorithm::ChaCha20Poly1305 => {
                let key = key.try_into().expect("32-byte key");
                // On aarch64 LLVM may build the words in this frame before the
                // box write (`tests/stack_residue/`, ring base): scrubbed there.
                #[cfg(target_arch = "aarch64")]
                stack.mark();
                match Blocks::new(key, backend) {
                    Some(k) => Ok(Box::write(slot, Self::ChaCha20(k))),
                    None => Err(slot),
                }
            }
            // No block function of ours for this algorithm or backend here
            // (on other targets, none at all).
            _ => {
                let _ = (key, backend, stack);
                Err(slot)
            }
        }
    }

    /// Our AES round keys in `slot`: written zeroed, then keyed where they
    /// lie (`RoundKeys::set`), so no copy of them passes through this
    /// frame; on x86-64 the schedule stays in registers and the setup's
    /// scrub has nothing to do. A frame of its own (the schedule's
    /// temporaries would otherwise deepen every setup frame, ChaCha20's
    /// too).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline(never)]
    fn aes(
        slot: Box<MaybeUninit<Self>>,
        alg: Algorithm,
        key: &[u8],
        stack: &mut SetupStack,
    ) -> Result<Box<Self>, Box<MaybeUninit<Self>>> {
        let zeroed = if alg == Algorithm::Aes128Gcm {
            RoundKeys::zeroed().map(Self::Aes128)
        } else {
            RoundKeys::zeroed().map(Self::Aes256)
        };
        let Some(zeroed) = zeroed else {
            return Err(slot);
        };
        let mut made = Box::write(slot, zeroed);
        match &mut *made {
            Self::Aes128(k) => k.set(key, stack),
            Self::Aes256(k) => k.set(key, stack),
            _ => unreachable!("an AES key was written above"),
        }
        Ok(made)
    }

    /// The base provider's block function.
    #[inline(never)]
    #[cold]
    fn base(alg: Algorithm, key: &[u8], hardening: Hardening) -> Self {
        let alg = match alg {
            Algorithm::Aes128Gcm => &base_quic::AES_128,
            Algorithm::Aes256Gcm => &base_quic::AES_256,
            Algorithm::ChaCha20Poly1305 => &base_quic::CHACHA20,
        };
        Self::Base(
            Box::new(base_quic::HeaderProtectionKey::new(alg, key).expect("key length checked")),
            hardening.scrubs_base_stack(),
        )
    }

    /// The first five bytes of the block function of each input.
    ///
    /// # Panics
    /// If the lengths differ.
    pub(crate) fn apply(&self, inputs: &[[u8; 16]], out: &mut [[u8; 5]]) {
        assert_eq!(inputs.len(), out.len(), "one output per input");
        match self {
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Self::Aes128(k) => k.encrypt_prefix(inputs, out),
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Self::Aes256(k) => k.encrypt_prefix(inputs, out),
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Self::ChaCha20(k) => k.apply(inputs, out),
            Self::Base(k, scrub) => {
                for (i, o) in inputs.iter().zip(out) {
                    *o = k.new_mask(i).expect("16-byte sample");
                }
                // The library's block function leaves its key and block on
                // the stack (`tests/stack_residue/`), as it does without us.
                if *scrub {
                    super::secret::scrub_stack::<{ super::secret::BASE_BLOCK }>();
                }
            }
        }
    }

    /// The first five bytes of the block of one input: the mask of one
    /// QUIC packet, returned by value. On our AES engines it never leaves
    /// registers; our ChaCha20 keys' slice output is wiped here, so a
    /// caller that keeps the mask in registers leaves none of it in memory;
    /// `Base` returns the library's own by value.
    #[inline(always)]
    pub(crate) fn mask(&self, input: &[u8; 16]) -> [u8; 5] {
        match self {
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Self::Aes128(k) => k.mask(input),
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Self::Aes256(k) => k.mask(input),
            // The base provider's mask by value, as its own QUIC key gives
            // it: no array of ours to fill and wipe (the mask is live across
            // the opt-in scrub, in registers or this frame, as the caller's
            // is after it).
            Self::Base(k, scrub) => {
                let mask = k.new_mask(input).expect("16-byte sample");
                if *scrub {
                    super::secret::scrub_stack::<{ super::secret::BASE_BLOCK }>();
                }
                mask
            }
            #[allow(unreachable_patterns)] // `Base` is the only key off x86-64 and aarch64
            _ => {
                let mut out = [[0u8; 5]];
                self.apply(core::slice::from_ref(input), &mut out);
                let mask = out[0];
                zeroize::Zeroize::zeroize(&mut out);
                mask
            }
        }
    }

    /// AES round keys, for a seal that runs this block alongside.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    pub(crate) fn extra_keys(&self) -> Option<ExtraKeys<'_>> {
        match self {
            Self::Aes128(k) => Some(ExtraKeys::Aes128(k)),
            Self::Aes256(k) => Some(ExtraKeys::Aes256(k)),
            _ => None,
        }
    }
}

/// The 16 bytes at `at` of `ciphertext ‖ tag`: public, as they go on the
/// wire (declassified for the valgrind check, since the Base backend's
/// ChaCha20 branches on the block counter a sample supplies).
pub(crate) fn sample_of(ciphertext: &[u8], tag: &[u8; TAG_LEN], at: usize) -> [u8; 16] {
    let mut sample = [0u8; 16];
    if let Some(s) = ciphertext.get(at..at + 16) {
        sample.copy_from_slice(s);
    } else {
        for (i, s) in sample.iter_mut().enumerate() {
            let j = at + i;
            *s = if j < ciphertext.len() {
                ciphertext[j]
            } else {
                tag[j - ciphertext.len()]
            };
        }
    }
    #[cfg(feature = "audit")]
    crate::aead::audit::declassify(&mut sample);
    sample
}
