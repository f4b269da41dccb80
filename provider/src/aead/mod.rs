//! Standalone AEADs: AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305.
//!
//! Each type picks its engine ([`Backend`]) once, when the key is made, and
//! keeps everything it precomputes (round keys, GHASH powers, the ChaCha
//! key) for every later call. One call seals or opens a whole message,
//! associated data included, in place and without allocating.
//!
//! The rustls record layer in this crate is built on the same engines
//! (and, on `Base`, on the base provider's own calls).
//!
//! ```
//! use rustls_fusion::aead::Aes128Gcm;
//!
//! let key = Aes128Gcm::new(&[7; 16]);
//! let nonce = [1; 12];
//! let mut buf = *b"attack at dawn";
//! let tag = key.seal_in_place(&nonce, b"header", &mut buf);
//! key.open_in_place(&nonce, b"header", &mut buf, &tag).unwrap();
//! assert_eq!(&buf, b"attack at dawn");
//! ```

mod aes_gcm;
mod algorithm;
#[cfg(feature = "audit")]
#[doc(hidden)]
pub mod audit;
mod base;
mod block;
mod chacha20_poly1305;
#[cfg(all(test, target_arch = "x86_64"))]
mod engine_check;
mod secret;
mod stack_pointer;

use core::fmt;

pub use self::aes_gcm::{Aes128Gcm, Aes256Gcm};
pub use self::algorithm::Algorithm;
pub(crate) use self::algorithm::AnyKey;
pub(crate) use self::base::Base;
pub(crate) use self::block::{sample_of, BlockKey};
pub use self::chacha20_poly1305::ChaCha20Poly1305;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) use self::secret::ct_eq;

/// Length of a nonce: every AEAD here takes 96-bit nonces.
pub const NONCE_LEN: usize = 12;
/// Length of an authentication tag.
pub const TAG_LEN: usize = 16;

/// An AEAD engine. Which ones a CPU can run is reported by each type's
/// `backends()`; `new()` takes the first (best) of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The base provider's own AEAD: aws-lc-rs's (default feature) or
    /// ring's (feature `ring`), the code the replaced provider runs. Listed
    /// everywhere, last; chosen where none of our engines runs (every
    /// target but x86-64, and x86-64 CPUs without their features).
    Base,
    /// AES-GCM on AES-NI + PCLMULQDQ, 128-bit registers (x86-64).
    X86AesNi,
    /// AES-GCM on VAES + VPCLMULQDQ, 256-bit AVX2 registers (x86-64).
    X86Vaes,
    /// AES-GCM on VAES + VPCLMULQDQ, 512-bit AVX-512 registers (x86-64),
    /// GHASH products schoolbook (four carry-less multiplies a block).
    /// Listed after the two schedules below, one of which is preferred
    /// everywhere (`X86Vaes512Hybrid` runs this code for its shorter
    /// records).
    X86Vaes512,
    /// `X86Vaes512` with GHASH products by Karatsuba (three carry-less
    /// multiplies a block): preferred where `vpclmulqdq` on zmm issues at
    /// a quarter of `vaesenc`'s rate (AMD Zen 5). Listed wherever
    /// `X86Vaes512` is.
    X86Vaes512Karatsuba,
    /// `X86Vaes512` for shorter records, `X86Vaes512Karatsuba`'s loop from
    /// lengths that depend on the CPU (Zen 4: AES-128 seals from 3 KiB and
    /// opens from 4 KiB, AES-256 from 2 KiB; Intel: seals from 3 KiB,
    /// AES-256 from 1.5 KiB, opens from 1 KiB): preferred where
    /// `vpclmulqdq` on zmm issues at half `vaesenc`'s rate (AMD Zen 4) or
    /// at its rate (Intel). Listed wherever `X86Vaes512` is.
    X86Vaes512Hybrid,
    /// ChaCha20-Poly1305 on AVX2, stitched with scalar Poly1305 (x86-64).
    X86Avx2,
    /// ChaCha20-Poly1305 on AVX-512 (zmm, 16 blocks), stitched likewise.
    X86Avx512,
    /// `X86Avx512` with AVX-512 IFMA: Poly1305 runs that no wide ChaCha20
    /// pass overlaps (after a record's last keystream, or before a short
    /// tail's call), and the whole hash of records of 961 bytes to 4 KiB
    /// (whose passes then hash nothing), on eight zmm lanes.
    X86Avx512Ifma,
    /// ChaCha20-Poly1305 on SSSE3 (xmm, 4 blocks), for CPUs without AVX2.
    X86Ssse3,
    /// ChaCha20-Poly1305 on NEON (4 blocks a pass), stitched with scalar
    /// Poly1305 (aarch64).
    Aarch64Neon,
    /// AES-GCM on the ARMv8 cryptography extensions (AES + PMULL), one
    /// block per NEON register, 8 a batch (aarch64).
    Aarch64Aes,
}

impl Backend {
    /// Every backend, on any CPU (each type's `backends()` lists the ones
    /// that run here).
    pub const ALL: [Backend; 12] = [
        Backend::Base,
        Backend::X86AesNi,
        Backend::X86Vaes,
        Backend::X86Vaes512,
        Backend::X86Vaes512Karatsuba,
        Backend::X86Vaes512Hybrid,
        Backend::X86Avx2,
        Backend::X86Avx512,
        Backend::X86Avx512Ifma,
        Backend::X86Ssse3,
        Backend::Aarch64Neon,
        Backend::Aarch64Aes,
    ];

    /// A short, stable name (used in bench ids and test names).
    pub fn name(self) -> &'static str {
        match self {
            Self::Base => "base",
            Self::X86AesNi => "x86-aesni",
            Self::X86Vaes => "x86-vaes",
            Self::X86Vaes512 => "x86-vaes512",
            Self::X86Vaes512Karatsuba => "x86-vaes512-karatsuba",
            Self::X86Vaes512Hybrid => "x86-vaes512-hybrid",
            Self::X86Avx2 => "x86-avx2",
            Self::X86Avx512 => "x86-avx512",
            Self::X86Avx512Ifma => "x86-avx512-ifma",
            Self::X86Ssse3 => "x86-ssse3",
            Self::Aarch64Neon => "aarch64-neon",
            Self::Aarch64Aes => "aarch64-aes",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Hardening a key can opt into beyond what every key has.
///
/// Our engines always leave no key material on the stack (they scrub what
/// they spill; `tests/stack_residue/`). [`Backend::Base`] runs the base
/// provider's own code, which leaves what it leaves without rustls-fusion
/// too (aws-lc's AES-GCM: E(K, J0) and plaintext in frames down to 2.7 KiB
/// below the call); scrubbing that after every record adds 15–23 ns, a
/// fifth to a third of a 16-byte AES-GCM record's time, so it is off unless
/// asked for here (`docs/security.md`, "Base").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hardening {
    scrub_base_stack: bool,
}

impl Hardening {
    /// Nothing beyond the defaults.
    pub const NONE: Self = Self {
        scrub_base_stack: false,
    };

    /// On [`Backend::Base`], overwrite the stack the base provider's code
    /// used after every seal, open and header-protection mask (2.8 KiB for
    /// AES-GCM, 1.3 KiB for ChaCha20-Poly1305, 1 KiB for a mask) and after
    /// building the key (6 KiB). No effect on our own engines, which always
    /// scrub what they need.
    pub const fn scrub_base_stack(self, on: bool) -> Self {
        Self {
            scrub_base_stack: on,
        }
    }

    /// Whether [`Self::scrub_base_stack`] is on.
    pub const fn scrubs_base_stack(self) -> bool {
        self.scrub_base_stack
    }
}

/// Which way a kernel runs: a seal hashes the ciphertext it writes, an
/// open the ciphertext it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only our engines use it
pub(crate) enum Direction {
    Seal,
    Open,
}

/// Opening failed: the tag did not match the ciphertext and associated data.
///
/// The buffer has been zeroed; no unauthenticated plaintext is released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenError;

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AEAD authentication failed")
    }
}

impl std::error::Error for OpenError {}

/// What every engine (one per primitive and backend) provides.
///
/// `seal` reads the plaintext as `src` followed by `buf[src.len()..]` and
/// writes the ciphertext over all of `buf`. That one shape covers in-place
/// sealing (`src` empty), out-of-place sealing (`src` the whole plaintext)
/// and the TLS 1.3 record (`src` the payload, `buf`'s last byte the content
/// type), so the record layer reads rustls's plaintext only once.
pub(crate) trait Engine: Sized + Send + Sync {
    /// Key length in bytes.
    type Key;

    /// This primitive's backends on any CPU of this target, best first
    /// (`Base` last).
    const ORDER: &'static [Backend];

    /// Whether this CPU runs `backend` for this primitive.
    fn runs(backend: Backend) -> bool;

    /// Whether `backend`, which runs here, is slower on this CPU than the
    /// next one in `ORDER` that runs (schedules of one engine, where the
    /// fastest depends on the microarchitecture): it is then listed and
    /// chosen after that one.
    fn demoted(backend: Backend) -> bool {
        let _ = backend;
        false
    }

    /// Backends this CPU can run for this primitive, best first.
    fn backends() -> Vec<Backend> {
        let mut list: Vec<Backend> = Self::ORDER
            .iter()
            .copied()
            .filter(|&b| Self::runs(b))
            .collect();
        // A demoted backend moves one place down (stable for the others).
        for i in (0..list.len().saturating_sub(1)).rev() {
            if Self::demoted(list[i]) {
                list.swap(i, i + 1);
            }
        }
        list
    }

    /// The first of [`Self::backends`], without allocating (once per key):
    /// the first in `ORDER` that runs and is not demoted (`Base`, last, is
    /// never demoted, so a demoted backend always has one to move below).
    fn best() -> Backend {
        Self::ORDER
            .iter()
            .copied()
            .find(|&b| Self::runs(b) && !Self::demoted(b))
            .unwrap_or(Backend::Base)
    }

    /// Builds the key context on `backend`, or `None` if it cannot run here.
    /// A setup frame of ours that holds key material marks itself in
    /// `stack` ([`secret::SetupStack::mark`]; on aarch64 only); `Base`
    /// marks none.
    fn new(key: &Self::Key, backend: Backend, stack: &mut secret::SetupStack) -> Option<Self>;

    /// Applies opt-in `hardening` (only `Base` has any).
    fn harden(&mut self, hardening: Hardening);

    fn backend(&self) -> Backend;

    /// # Panics
    /// If `src.len() > buf.len()`, or the message is longer than the
    /// primitive allows (about 64 GiB for GCM, 256 GiB for ChaCha20).
    fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN];

    /// Opens `buf` in place. On failure `buf` is all zeros.
    fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError>;
}

/// Defines a public AEAD type over an [`Engine`].
macro_rules! aead_type {
    ($(#[$doc:meta])* $name:ident, $engine:ty, $key_len:literal) => {
        $(#[$doc])*
        pub struct $name($engine);

        impl $name {
            /// Key length in bytes.
            pub const KEY_LEN: usize = $key_len;

            /// Makes a key on the best backend this CPU runs.
            #[inline(always)]
            pub fn new(key: &[u8; $key_len]) -> Self {
                let best = <$engine as $crate::aead::Engine>::best();
                Self::with_hardening(key, best, $crate::aead::Hardening::NONE)
                    .expect("the best backend runs here")
            }

            /// Makes a key on `backend`, or `None` if this CPU cannot run it.
            // Always inlined, as `new` is: the key is built and the stack
            // scrubbed in `with_hardening`, with no frame of ours above it.
            #[inline(always)]
            pub fn with_backend(key: &[u8; $key_len], backend: Backend) -> Option<Self> {
                Self::with_hardening(key, backend, $crate::aead::Hardening::NONE)
            }

            /// Makes a key on `backend` with opt-in `hardening`, or `None`
            /// if this CPU cannot run `backend`.
            #[inline(always)]
            pub fn with_hardening(
                key: &[u8; $key_len],
                backend: Backend,
                hardening: $crate::aead::Hardening,
            ) -> Option<Self> {
                $crate::aead::secret::set_up(backend, hardening, |stack| {
                    Self::build(key, backend, hardening, stack)
                })
            }

            /// The key on `backend` with `hardening`, no scrub: the caller
            /// scrubs as deep as `stack` says ([`secret::set_up`]'s frame,
            /// never inlined, holds its temporaries).
            ///
            /// [`secret::set_up`]: $crate::aead::secret::set_up
            pub(crate) fn build(
                key: &[u8; $key_len],
                backend: Backend,
                hardening: $crate::aead::Hardening,
                stack: &mut $crate::aead::secret::SetupStack,
            ) -> Option<Self> {
                let mut engine = <$engine as $crate::aead::Engine>::new(key, backend, stack)?;
                $crate::aead::Engine::harden(&mut engine, hardening);
                Some(Self(engine))
            }

            /// The first of [`Self::backends`] (what `new` picks).
            pub(crate) fn best() -> Backend {
                <$engine as $crate::aead::Engine>::best()
            }

            /// The backends this CPU runs, best first (`Base` last, unless a
            /// backend not yet shown faster is demoted below it).
            pub fn backends() -> Vec<Backend> {
                <$engine as $crate::aead::Engine>::backends()
            }

            /// The backend this key runs on.
            pub fn backend(&self) -> Backend {
                $crate::aead::Engine::backend(&self.0)
            }

            /// Encrypts `in_out` in place and returns the tag.
            ///
            /// # Panics
            /// If `in_out` is longer than the algorithm allows (tens of GiB).
            pub fn seal_in_place(
                &self,
                nonce: &[u8; NONCE_LEN],
                aad: &[u8],
                in_out: &mut [u8],
            ) -> [u8; TAG_LEN] {
                $crate::aead::Engine::seal(&self.0, nonce, aad, &[], in_out)
            }

            /// Encrypts `plaintext` into `ciphertext` (same length) and returns
            /// the tag, reading and writing each byte once.
            ///
            /// # Panics
            /// If the lengths differ, or as [`Self::seal_in_place`].
            pub fn seal_out_of_place(
                &self,
                nonce: &[u8; NONCE_LEN],
                aad: &[u8],
                plaintext: &[u8],
                ciphertext: &mut [u8],
            ) -> [u8; TAG_LEN] {
                assert_eq!(plaintext.len(), ciphertext.len(), "plaintext and ciphertext lengths differ");
                $crate::aead::Engine::seal(&self.0, nonce, aad, plaintext, ciphertext)
            }

            /// Seals `prefix` followed by `buf[prefix.len()..]` into `buf`.
            pub(crate) fn seal_split(
                &self,
                nonce: &[u8; NONCE_LEN],
                aad: &[u8],
                prefix: &[u8],
                buf: &mut [u8],
            ) -> [u8; TAG_LEN] {
                $crate::aead::Engine::seal(&self.0, nonce, aad, prefix, buf)
            }

            /// The record layer's split seal, for the fuzz targets.
            #[cfg(feature = "fuzzing")]
            #[doc(hidden)]
            pub fn fuzz_seal_split(
                &self,
                nonce: &[u8; NONCE_LEN],
                aad: &[u8],
                prefix: &[u8],
                buf: &mut [u8],
            ) -> [u8; TAG_LEN] {
                self.seal_split(nonce, aad, prefix, buf)
            }

            /// Checks `tag` and decrypts `in_out` in place. On failure
            /// `in_out` is zeroed and nothing of the plaintext is released.
            pub fn open_in_place(
                &self,
                nonce: &[u8; NONCE_LEN],
                aad: &[u8],
                in_out: &mut [u8],
                tag: &[u8; TAG_LEN],
            ) -> Result<(), OpenError> {
                $crate::aead::Engine::open(&self.0, nonce, aad, in_out, tag)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name)).field("backend", &self.backend()).finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use aead_type;

#[cfg(test)]
mod tests {
    use super::{Aes128Gcm, Aes256Gcm, ChaCha20Poly1305};

    /// The record layer's split seal (plaintext = `prefix` followed by the
    /// rest of `buf`) equals a contiguous seal for every prefix boundary
    /// that matters: block and batch edges on every backend.
    #[test]
    fn split_seal_matches_contiguous() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut byte = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        };
        let lens = [
            0, 1, 63, 64, 65, 191, 192, 193, 447, 448, 449, 959, 960, 961, 1350, 1983, 1984, 1985,
            3000, 5000,
        ];
        macro_rules! check {
            ($ty:ty, $key:expr) => {
                for backend in <$ty>::backends() {
                    let key = <$ty>::with_backend(&$key, backend).unwrap();
                    for len in lens {
                        let pt: Vec<u8> = (0..len).map(|_| byte()).collect();
                        let mut want = pt.clone();
                        let want_tag = key.seal_in_place(&[9; 12], b"aad", &mut want);
                        let mut cuts: Vec<usize> =
                            lens.iter().copied().filter(|&c| c <= len).collect();
                        cuts.extend([len / 3, len.saturating_sub(1)]);
                        for cut in cuts {
                            let mut buf = vec![0xee; len];
                            buf[cut..].copy_from_slice(&pt[cut..]);
                            let tag = key.seal_split(&[9; 12], b"aad", &pt[..cut], &mut buf);
                            assert_eq!(
                                (buf == want, tag),
                                (true, want_tag),
                                "{backend} {len} cut {cut}"
                            );
                        }
                    }
                }
            };
        }
        check!(Aes128Gcm, [7u8; 16]);
        check!(Aes256Gcm, [7u8; 32]);
        check!(ChaCha20Poly1305, [7u8; 32]);
    }
}
