//! ChaCha20-Poly1305 (RFC 8439).
//!
//! Backends, best first: `X86Avx512` (16-way AVX-512 ChaCha20 stitched with
//! scalar Poly1305), `X86Avx2` (the same 8-way on AVX2), `X86Ssse3` (4-way
//! on SSSE3, for x86-64 CPUs without AVX2), `Base` (the base provider's
//! ChaCha20-Poly1305).

#[cfg(target_arch = "x86_64")]
mod poly1305;
#[cfg(target_arch = "x86_64")]
mod x86_avx2;
#[cfg(target_arch = "x86_64")]
mod x86_avx512;
#[cfg(target_arch = "x86_64")]
mod x86_blocks;
#[cfg(target_arch = "x86_64")]
mod x86_ssse3;

use super::base::{self, Base};
use super::{aead_type, Backend, Engine, OpenError, NONCE_LEN, TAG_LEN};
#[cfg(target_arch = "x86_64")]
use crate::cpu::Features;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_blocks::{Blocks, Width};

/// The ChaCha20-Poly1305 engines.
pub(crate) enum Engines {
    Base(Base),
    #[cfg(target_arch = "x86_64")]
    Avx2(x86_avx2::Key<{ x86_avx2::AVX2 }>),
    #[cfg(target_arch = "x86_64")]
    Avx512(x86_avx2::Key<{ x86_avx2::AVX512 }>),
    #[cfg(target_arch = "x86_64")]
    Ssse3(x86_avx2::Key<{ x86_avx2::SSSE3 }>),
}

impl Engine for Engines {
    type Key = [u8; 32];

    fn backends() -> Vec<Backend> {
        let mut backends = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = Features::get();
            if cpu.avx2 && cpu.avx512 {
                backends.push(Backend::X86Avx512);
            }
            if cpu.avx2 {
                backends.push(Backend::X86Avx2);
            }
            if cpu.ssse3 {
                backends.push(Backend::X86Ssse3);
            }
        }
        backends.push(Backend::Base);
        backends
    }

    fn new(key: &[u8; 32], backend: Backend) -> Option<Self> {
        match backend {
            Backend::Base => Some(Self::Base(Base::new(base::Alg::ChaCha20Poly1305, key))),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx2 => x86_avx2::Key::new(key).map(Self::Avx2),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512 => x86_avx2::Key::new(key).map(Self::Avx512),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Ssse3 => x86_avx2::Key::new(key).map(Self::Ssse3),
            _ => None,
        }
    }

    fn backend(&self) -> Backend {
        match self {
            Self::Base(_) => Backend::Base,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(_) => Backend::X86Avx2,
            #[cfg(target_arch = "x86_64")]
            Self::Avx512(_) => Backend::X86Avx512,
            #[cfg(target_arch = "x86_64")]
            Self::Ssse3(_) => Backend::X86Ssse3,
        }
    }

    fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        match self {
            Self::Base(k) => k.seal(nonce, aad, src, buf),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(k) => k.seal(nonce, aad, src, buf),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512(k) => k.seal(nonce, aad, src, buf),
            #[cfg(target_arch = "x86_64")]
            Self::Ssse3(k) => k.seal(nonce, aad, src, buf),
        }
    }

    fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        match self {
            Self::Base(k) => k.open(nonce, aad, buf, tag),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(k) => k.open(nonce, aad, buf, tag),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512(k) => k.open(nonce, aad, buf, tag),
            #[cfg(target_arch = "x86_64")]
            Self::Ssse3(k) => k.open(nonce, aad, buf, tag),
        }
    }
}

aead_type!(
    /// ChaCha20-Poly1305: 32-byte key, 12-byte nonce, 16-byte tag.
    ChaCha20Poly1305,
    Engines,
    32
);
