//! AES-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.
//!
//! Backends, best first: `X86Vaes512` (VAES + VPCLMULQDQ on zmm, where
//! AVX-512 is present), `X86Vaes` (the same on ymm), `X86AesNi` (AES-NI +
//! PCLMULQDQ on xmm), `Base` (the base provider's AES-GCM); on aarch64
//! `Aarch64Aes` (AES + PMULL on NEON registers), then `Base`. All but
//! `Base` are one kernel (`kernel/`, no architecture in it) over their lane
//! type; each architecture's block register and key schedule are in
//! `x86_64.rs` or `aarch64.rs`.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
mod aarch64_aes;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod kernel;
#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
mod x86_aesni;
#[cfg(target_arch = "x86_64")]
mod x86_vaes;
#[cfg(target_arch = "x86_64")]
mod x86_vaes512;

use super::base::Base;
use super::secret::SetupStack;
use super::{aead_type, Algorithm, Backend, Engine, Hardening, OpenError, NONCE_LEN, TAG_LEN};
#[cfg(target_arch = "x86_64")]
use crate::cpu::Features;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) use kernel::RoundKeys;

/// The kernel's block register, for this architecture.
#[cfg(target_arch = "aarch64")]
use aarch64 as arch;
#[cfg(target_arch = "x86_64")]
use x86_64 as arch;

/// The AES-GCM engines for one key size (`KEY_LEN` 16 or 32).
pub(crate) enum AesGcm<const KEY_LEN: usize> {
    Base(Base),
    // The AES-NI engine's two builds are variants here, not an enum inside
    // one: a record passes one match from the key to the kernel.
    #[cfg(target_arch = "x86_64")]
    AesNiAvx128(x86_aesni::avx::Key<10>),
    #[cfg(target_arch = "x86_64")]
    AesNiAvx256(x86_aesni::avx::Key<14>),
    #[cfg(target_arch = "x86_64")]
    AesNiSse128(x86_aesni::sse::Key<10>),
    #[cfg(target_arch = "x86_64")]
    AesNiSse256(x86_aesni::sse::Key<14>),
    #[cfg(target_arch = "x86_64")]
    Vaes128(x86_vaes::Key<10>),
    #[cfg(target_arch = "x86_64")]
    Vaes256(x86_vaes::Key<14>),
    #[cfg(target_arch = "x86_64")]
    Vaes512_128(x86_vaes512::schoolbook::Key<10>),
    #[cfg(target_arch = "x86_64")]
    Vaes512_256(x86_vaes512::schoolbook::Key<14>),
    #[cfg(target_arch = "x86_64")]
    Vaes512K128(x86_vaes512::karatsuba::Key<10>),
    #[cfg(target_arch = "x86_64")]
    Vaes512K256(x86_vaes512::karatsuba::Key<14>),
    #[cfg(target_arch = "x86_64")]
    Vaes512H128(x86_vaes512::hybrid::Key<10>),
    #[cfg(target_arch = "x86_64")]
    Vaes512H256(x86_vaes512::hybrid::Key<14>),
    // The aarch64 engine's two builds, as the AES-NI engine's.
    #[cfg(target_arch = "aarch64")]
    Aarch64Sha3Aes128(aarch64_aes::sha3::Key<10>),
    #[cfg(target_arch = "aarch64")]
    Aarch64Sha3Aes256(aarch64_aes::sha3::Key<14>),
    #[cfg(target_arch = "aarch64")]
    Aarch64Aes128(aarch64_aes::plain::Key<10>),
    #[cfg(target_arch = "aarch64")]
    Aarch64Aes256(aarch64_aes::plain::Key<14>),
}

/// Runs `$body` with `$k` bound to whichever engine `$self` holds.
macro_rules! each_engine {
    ($self:expr, $k:ident => $body:expr) => {
        match $self {
            Self::Base($k) => $body,
            #[cfg(target_arch = "aarch64")]
            Self::Aarch64Sha3Aes128($k) => $body,
            #[cfg(target_arch = "aarch64")]
            Self::Aarch64Sha3Aes256($k) => $body,
            #[cfg(target_arch = "aarch64")]
            Self::Aarch64Aes128($k) => $body,
            #[cfg(target_arch = "aarch64")]
            Self::Aarch64Aes256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::AesNiAvx128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::AesNiAvx256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::AesNiSse128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::AesNiSse256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512_128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512_256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512K128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512K256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512H128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512H256($k) => $body,
        }
    };
}

impl<const KEY_LEN: usize> Engine for AesGcm<KEY_LEN> {
    type Key = [u8; KEY_LEN];

    #[cfg(target_arch = "x86_64")]
    const ORDER: &'static [Backend] = &[
        Backend::X86Vaes512Karatsuba,
        Backend::X86Vaes512Hybrid,
        Backend::X86Vaes512,
        Backend::X86Vaes,
        Backend::X86AesNi,
        Backend::Base,
    ];
    #[cfg(target_arch = "aarch64")]
    const ORDER: &'static [Backend] = &[Backend::Aarch64Aes, Backend::Base];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const ORDER: &'static [Backend] = &[Backend::Base];

    fn runs(backend: Backend) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = Features::get();
            match backend {
                Backend::X86Vaes512 | Backend::X86Vaes512Karatsuba | Backend::X86Vaes512Hybrid => {
                    cpu.vaes_clmul512
                }
                Backend::X86Vaes => cpu.vaes_clmul256,
                Backend::X86AesNi => cpu.aes_clmul,
                _ => backend == Backend::Base,
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            match backend {
                Backend::Aarch64Aes => arch::detected(),
                _ => backend == Backend::Base,
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            backend == Backend::Base
        }
    }

    /// The zmm engine's three GHASH schedules: Karatsuba first where the
    /// core issues `vpclmulqdq` on zmm at a quarter of `vaesenc`'s rate
    /// (Zen 5), hybrid first elsewhere (Zen 4, Intel), schoolbook (which
    /// the hybrid extends) after them (docs/decisions.md, "GHASH products
    /// (zmm)").
    fn demoted(backend: Backend) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = Features::get();
            backend == Backend::X86Vaes512Karatsuba && !(cpu.clmul512_half_rate && cpu.aes512_dual)
        }
        #[cfg(target_arch = "aarch64")]
        {
            // Listed and tested, not yet the default (docs/decisions.md,
            // "AES-GCM on aarch64").
            backend == Backend::Aarch64Aes
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            let _ = backend;
            false
        }
    }

    fn new(key: &[u8; KEY_LEN], backend: Backend, stack: &mut SetupStack) -> Option<Self> {
        // Elsewhere only `Base` runs, which marks no frame.
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let _ = stack;
        let aes128 = match KEY_LEN {
            16 => true,
            32 => false,
            _ => unreachable!("AES-GCM keys are 16 or 32 bytes"),
        };
        Some(match (backend, aes128) {
            (Backend::Base, true) => Self::Base(Base::new(Algorithm::Aes128Gcm, key)),
            (Backend::Base, false) => Self::Base(Base::new(Algorithm::Aes256Gcm, key)),
            // The AVX build where the CPU has AVX, else the SSE one.
            #[cfg(target_arch = "x86_64")]
            (Backend::X86AesNi, true) => match x86_aesni::avx::Key::new(key, stack) {
                Some(k) => Self::AesNiAvx128(k),
                None => Self::AesNiSse128(x86_aesni::sse::Key::new(key, stack)?),
            },
            #[cfg(target_arch = "x86_64")]
            (Backend::X86AesNi, false) => match x86_aesni::avx::Key::new(key, stack) {
                Some(k) => Self::AesNiAvx256(k),
                None => Self::AesNiSse256(x86_aesni::sse::Key::new(key, stack)?),
            },
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes, true) => Self::Vaes128(x86_vaes::Key::new(key, stack)?),
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes, false) => Self::Vaes256(x86_vaes::Key::new(key, stack)?),
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes512, true) => {
                Self::Vaes512_128(x86_vaes512::schoolbook::Key::new(key, stack)?)
            }
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes512, false) => {
                Self::Vaes512_256(x86_vaes512::schoolbook::Key::new(key, stack)?)
            }
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes512Karatsuba, true) => {
                Self::Vaes512K128(x86_vaes512::karatsuba::Key::new(key, stack)?)
            }
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes512Karatsuba, false) => {
                Self::Vaes512K256(x86_vaes512::karatsuba::Key::new(key, stack)?)
            }
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes512Hybrid, true) => {
                Self::Vaes512H128(x86_vaes512::hybrid::Key::new(key, stack)?)
            }
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes512Hybrid, false) => {
                Self::Vaes512H256(x86_vaes512::hybrid::Key::new(key, stack)?)
            }
            // The SHA-3 build where the CPU has SHA-3, else the plain one.
            #[cfg(target_arch = "aarch64")]
            (Backend::Aarch64Aes, true) => match aarch64_aes::sha3::Key::new(key, stack) {
                Some(k) => Self::Aarch64Sha3Aes128(k),
                None => Self::Aarch64Aes128(aarch64_aes::plain::Key::new(key, stack)?),
            },
            #[cfg(target_arch = "aarch64")]
            (Backend::Aarch64Aes, false) => match aarch64_aes::sha3::Key::new(key, stack) {
                Some(k) => Self::Aarch64Sha3Aes256(k),
                None => Self::Aarch64Aes256(aarch64_aes::plain::Key::new(key, stack)?),
            },
            #[allow(unreachable_patterns)]
            _ => return None,
        })
    }

    // Where `Base` is the only engine the pattern cannot fail.
    #[allow(irrefutable_let_patterns)]
    fn harden(&mut self, hardening: Hardening) {
        if let Self::Base(k) = self {
            k.harden(hardening);
        }
    }

    fn backend(&self) -> Backend {
        match self {
            Self::Base(_) => Backend::Base,
            #[cfg(target_arch = "x86_64")]
            Self::AesNiAvx128(_)
            | Self::AesNiAvx256(_)
            | Self::AesNiSse128(_)
            | Self::AesNiSse256(_) => Backend::X86AesNi,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes128(_) | Self::Vaes256(_) => Backend::X86Vaes,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512_128(_) | Self::Vaes512_256(_) => Backend::X86Vaes512,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512K128(_) | Self::Vaes512K256(_) => Backend::X86Vaes512Karatsuba,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes512H128(_) | Self::Vaes512H256(_) => Backend::X86Vaes512Hybrid,
            #[cfg(target_arch = "aarch64")]
            Self::Aarch64Sha3Aes128(_)
            | Self::Aarch64Sha3Aes256(_)
            | Self::Aarch64Aes128(_)
            | Self::Aarch64Aes256(_) => Backend::Aarch64Aes,
        }
    }

    // Inlined: the match runs in the caller's frame (docs/decisions.md,
    // "One dispatch frame").
    #[inline(always)]
    fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        each_engine!(self, k => k.seal(nonce, aad, src, buf))
    }

    // Inlined: the match runs in the caller's frame (docs/decisions.md,
    // "One dispatch frame").
    #[inline(always)]
    fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        each_engine!(self, k => k.open(nonce, aad, buf, tag))
    }
}

/// The round keys of a block to encrypt alongside a seal (QUIC header
/// protection on our AES engines).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[derive(Clone, Copy)]
pub(crate) enum ExtraKeys<'a> {
    Aes128(&'a RoundKeys<10>),
    Aes256(&'a RoundKeys<14>),
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
impl<const KEY_LEN: usize> AesGcm<KEY_LEN> {
    /// Seals `buf` in place and encrypts the 16 bytes at `at` of
    /// ciphertext ‖ tag under `keys` in the same call (the block rides in
    /// the record's last AES pass when those bytes are already written
    /// ciphertext, picotls's slot; otherwise it runs right after the tag).
    /// Returns the tag and the block; `None` (nothing sealed) where this
    /// key is on `Base` or `keys` are for the other key size.
    ///
    /// # Panics
    /// If `at + 16` is beyond ciphertext ‖ tag, or as `seal`.
    fn seal_fused(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        keys: ExtraKeys<'_>,
        at: usize,
    ) -> Option<([u8; TAG_LEN], [u8; 16])> {
        use ExtraKeys::{Aes128, Aes256};
        Some(match (self, keys) {
            #[cfg(target_arch = "aarch64")]
            (Self::Aarch64Sha3Aes128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "aarch64")]
            (Self::Aarch64Sha3Aes256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "aarch64")]
            (Self::Aarch64Aes128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "aarch64")]
            (Self::Aarch64Aes256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::AesNiAvx128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::AesNiAvx256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::AesNiSse128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::AesNiSse256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes512_128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes512_256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes512K128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes512K256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes512H128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            #[cfg(target_arch = "x86_64")]
            (Self::Vaes512H256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            _ => return None,
        })
    }
}

aead_type!(
    /// AES-128-GCM: 16-byte key, 12-byte nonce, 16-byte tag.
    Aes128Gcm,
    AesGcm<16>,
    16
);

aead_type!(
    /// AES-256-GCM: 32-byte key, 12-byte nonce, 16-byte tag.
    Aes256Gcm,
    AesGcm<32>,
    32
);

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests;

/// `AesGcm::seal_fused` on the public types.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! seal_fused {
    ($ty:ty) => {
        impl $ty {
            pub(crate) fn seal_fused(
                &self,
                nonce: &[u8; NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                keys: ExtraKeys<'_>,
                at: usize,
            ) -> Option<([u8; TAG_LEN], [u8; 16])> {
                self.0.seal_fused(nonce, aad, buf, keys, at)
            }
        }
    };
}
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
seal_fused!(Aes128Gcm);
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
seal_fused!(Aes256Gcm);
