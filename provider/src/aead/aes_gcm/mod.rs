//! AES-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.
//!
//! Backends, best first: `X86Vaes512` (VAES + VPCLMULQDQ on zmm, where
//! AVX-512 is present), `X86Vaes` (the same on ymm), `X86AesNi` (AES-NI +
//! PCLMULQDQ on xmm), `Base` (the base provider's AES-GCM).

#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
pub(crate) use kernel::RoundKeys;

/// The kernel's block register, for this architecture.
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
}

/// Runs `$body` with `$k` bound to whichever engine `$self` holds.
macro_rules! each_engine {
    ($self:expr, $k:ident => $body:expr) => {
        match $self {
            Self::Base($k) => $body,
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
        }
    };
}

impl<const KEY_LEN: usize> Engine for AesGcm<KEY_LEN> {
    type Key = [u8; KEY_LEN];

    #[cfg(target_arch = "x86_64")]
    const ORDER: &'static [Backend] = &[
        Backend::X86Vaes512Karatsuba,
        Backend::X86Vaes512,
        Backend::X86Vaes,
        Backend::X86AesNi,
        Backend::Base,
    ];
    #[cfg(not(target_arch = "x86_64"))]
    const ORDER: &'static [Backend] = &[Backend::Base];

    fn runs(backend: Backend) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = Features::get();
            match backend {
                Backend::X86Vaes512 | Backend::X86Vaes512Karatsuba => cpu.vaes_clmul512,
                Backend::X86Vaes => cpu.vaes_clmul256,
                Backend::X86AesNi => cpu.aes_clmul,
                _ => backend == Backend::Base,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            backend == Backend::Base
        }
    }

    /// The zmm engine's two GHASH schedules: Karatsuba first, where the
    /// core issues `vpclmulqdq` on zmm at half `vaesenc`'s rate, schoolbook
    /// first elsewhere (docs/decisions.md, "GHASH products (zmm)").
    fn demoted(backend: Backend) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            backend == Backend::X86Vaes512Karatsuba && !Features::get().clmul512_half_rate
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = backend;
            false
        }
    }

    fn new(key: &[u8; KEY_LEN], backend: Backend, stack: &mut SetupStack) -> Option<Self> {
        // Off x86-64 only `Base` runs, which marks no frame.
        #[cfg(not(target_arch = "x86_64"))]
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
            #[allow(unreachable_patterns)]
            _ => return None,
        })
    }

    // Off x86-64 `Base` is the only engine: the pattern cannot fail there.
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
        }
    }

    fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        each_engine!(self, k => k.seal(nonce, aad, src, buf))
    }

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
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) enum ExtraKeys<'a> {
    Aes128(&'a RoundKeys<10>),
    Aes256(&'a RoundKeys<14>),
}

#[cfg(target_arch = "x86_64")]
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
            (Self::AesNiAvx128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::AesNiAvx256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::AesNiSse128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::AesNiSse256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::Vaes128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::Vaes256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::Vaes512_128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::Vaes512_256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::Vaes512K128(k), Aes128(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
            (Self::Vaes512K256(k), Aes256(rk)) => k.seal_with_block(nonce, aad, buf, rk, at),
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

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    //! The 32-bit block counter wraps mod 2³² (GCM's inc32) inside the
    //! engines. With 96-bit nonces that needs a 64 GiB message, so these
    //! tests start from arbitrary pre-counter blocks and compare with a
    //! reference GCM built from RustCrypto's AES block cipher and GHASH.

    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    use ghash::universal_hash::UniversalHash;

    use super::{x86_aesni, x86_vaes, x86_vaes512};
    use crate::cpu::Features;

    fn reference(key: &[u8], j0: [u8; 16], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
        let encrypt = |block: &mut [u8; 16]| match key.len() {
            16 => aes::Aes128::new_from_slice(key)
                .unwrap()
                .encrypt_block(block.into()),
            _ => aes::Aes256::new_from_slice(key)
                .unwrap()
                .encrypt_block(block.into()),
        };
        let mut h = [0u8; 16];
        encrypt(&mut h);
        let mut ct = pt.to_vec();
        for (i, chunk) in ct.chunks_mut(16).enumerate() {
            let mut ctr = j0;
            let c = u32::from_be_bytes(j0[12..].try_into().unwrap()).wrapping_add(1 + i as u32);
            ctr[12..].copy_from_slice(&c.to_be_bytes());
            encrypt(&mut ctr);
            chunk.iter_mut().zip(ctr).for_each(|(b, k)| *b ^= k);
        }
        let mut ghash = ghash::GHash::new(&h.into());
        ghash.update_padded(aad);
        ghash.update_padded(&ct);
        let mut lengths = [0u8; 16];
        lengths[..8].copy_from_slice(&(aad.len() as u64 * 8).to_be_bytes());
        lengths[8..].copy_from_slice(&(ct.len() as u64 * 8).to_be_bytes());
        ghash.update_padded(&lengths);
        let mut tag: [u8; 16] = ghash.finalize().into();
        let mut ek0 = j0;
        encrypt(&mut ek0);
        tag.iter_mut().zip(ek0).for_each(|(t, k)| *t ^= k);
        (ct, tag)
    }

    #[test]
    fn block_counter_wraps_mod_2_32() {
        let cpu = Features::get();
        let aad = b"header";
        for key in [&[0x11u8; 16][..], &[0x22u8; 32][..]] {
            for start in [
                0xffff_fff0u32,
                0xffff_fffe,
                0xffff_ffff,
                0xffff_ff80,
                0x7fff_ffff,
                // The zmm assembly loop's batches from the second on (a
                // seal's first runs generic) start at counter `start + 33`:
                // low byte 224 (the last without a carry out of it) and 225.
                0x0000_00bf,
                0x0000_00c0,
            ] {
                let mut j0 = [0x5au8; 16];
                j0[12..].copy_from_slice(&start.to_be_bytes());
                for len in [0, 1, 16, 17, 100, 127, 128, 129, 300, 512, 1000, 4096 + 3] {
                    let pt: Vec<u8> = (0..len).map(|i| i as u8).collect();
                    let want = reference(key, j0, aad, &pt);
                    // One build's seal from `j0`: its module's key for this key size.
                    macro_rules! sealed {
                        ($($m:ident)::+) => {{
                            let mut buf = pt.clone();
                            let mut stack = crate::aead::secret::SetupStack::new();
                            let tag = match key.len() {
                                16 => $($m)::+::Key::<10>::new(key, &mut stack)
                                    .unwrap()
                                    .seal_with_j0(&j0, aad, &mut buf),
                                _ => $($m)::+::Key::<14>::new(key, &mut stack)
                                    .unwrap()
                                    .seal_with_j0(&j0, aad, &mut buf),
                            };
                            (buf, tag)
                        }};
                    }
                    let mut got = Vec::new();
                    if cpu.aes_clmul_avx {
                        got.push(("aes-ni", sealed!(x86_aesni::avx)));
                    }
                    if cpu.aes_clmul {
                        // The SSE-only build of the AES-NI engine, which
                        // detection picks only on CPUs without AVX.
                        got.push(("aes-ni sse", sealed!(x86_aesni::sse)));
                    }
                    if cpu.vaes_clmul256 {
                        got.push(("vaes", sealed!(x86_vaes)));
                    }
                    if cpu.vaes_clmul512 {
                        got.push(("vaes512", sealed!(x86_vaes512::schoolbook)));
                        got.push(("vaes512-karatsuba", sealed!(x86_vaes512::karatsuba)));
                    }
                    for (name, (ct, tag)) in got {
                        assert_eq!(
                            (ct, tag),
                            want,
                            "{name}, key {}, start {start:#x}, len {len}",
                            key.len()
                        );
                    }
                }
            }
        }
    }

    /// The SSE-only build of the AES-NI engine (not reachable through
    /// `Backend` on a CPU with AVX) seals and opens like aws-lc-rs.
    #[test]
    fn aesni_sse_build_matches_aws_lc_rs() {
        use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM};
        if !Features::get().aes_clmul {
            return;
        }
        let mut seed = 7u64;
        let mut byte = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        };
        for len in (0..=300).chain([511, 512, 513, 1350, 4096, 16384, 16401]) {
            for key_len in [16, 32] {
                let key: Vec<u8> = (0..key_len).map(|_| byte()).collect();
                let nonce: [u8; 12] = core::array::from_fn(|_| byte());
                let aad: Vec<u8> = (0..len % 70).map(|_| byte()).collect();
                let pt: Vec<u8> = (0..len).map(|_| byte()).collect();
                let alg = if key_len == 16 {
                    &AES_128_GCM
                } else {
                    &AES_256_GCM
                };
                let reference = LessSafeKey::new(UnboundKey::new(alg, &key).unwrap());
                let mut want = pt.clone();
                let want_tag = reference
                    .seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::from(&aad),
                        &mut want,
                    )
                    .unwrap();
                let mut buf = pt.clone();
                let (tag, opened) = if key_len == 16 {
                    let k = x86_aesni::sse::Key::<10>::new(
                        &key,
                        &mut crate::aead::secret::SetupStack::new(),
                    )
                    .unwrap();
                    let tag = k.seal(&nonce, &aad, &[], &mut buf);
                    let mut ct = buf.clone();
                    (tag, k.open(&nonce, &aad, &mut ct, &tag).map(|()| ct))
                } else {
                    let k = x86_aesni::sse::Key::<14>::new(
                        &key,
                        &mut crate::aead::secret::SetupStack::new(),
                    )
                    .unwrap();
                    let tag = k.seal(&nonce, &aad, &[], &mut buf);
                    let mut ct = buf.clone();
                    (tag, k.open(&nonce, &aad, &mut ct, &tag).map(|()| ct))
                };
                assert_eq!(
                    (&buf, &tag[..]),
                    (&want, want_tag.as_ref()),
                    "len {len}, key {key_len}"
                );
                assert_eq!(
                    opened.as_deref(),
                    Ok(&pt[..]),
                    "open, len {len}, key {key_len}"
                );
            }
        }
    }
}

/// `AesGcm::seal_fused` on the public types.
#[cfg(target_arch = "x86_64")]
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
#[cfg(target_arch = "x86_64")]
seal_fused!(Aes128Gcm);
#[cfg(target_arch = "x86_64")]
seal_fused!(Aes256Gcm);
