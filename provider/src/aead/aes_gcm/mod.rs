//! AES-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.
//!
//! Backends, best first: `X86Vaes` (VAES + VPCLMULQDQ on ymm), `X86AesNi`
//! (AES-NI + PCLMULQDQ on xmm), `Portable` (RustCrypto, constant time).

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
mod x86_aesni;
#[cfg(target_arch = "x86_64")]
mod x86_vaes;

use super::portable::Portable;
use super::{aead_type, Backend, Engine, OpenError, NONCE_LEN, TAG_LEN};
#[cfg(target_arch = "x86_64")]
use crate::cpu::Features;

/// The AES-GCM engines for one key size (`KEY_LEN` 16 or 32).
pub(crate) enum AesGcm<const KEY_LEN: usize> {
    Portable128(Portable<aes_gcm::Aes128Gcm>),
    Portable256(Portable<aes_gcm::Aes256Gcm>),
    #[cfg(target_arch = "x86_64")]
    AesNi128(x86_aesni::Key<10>),
    #[cfg(target_arch = "x86_64")]
    AesNi256(x86_aesni::Key<14>),
    #[cfg(target_arch = "x86_64")]
    Vaes128(x86_vaes::Key<10>),
    #[cfg(target_arch = "x86_64")]
    Vaes256(x86_vaes::Key<14>),
}

/// Runs `$body` with `$k` bound to whichever engine `$self` holds.
macro_rules! each_engine {
    ($self:expr, $k:ident => $body:expr) => {
        match $self {
            Self::Portable128($k) => $body,
            Self::Portable256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::AesNi128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::AesNi256($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes128($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes256($k) => $body,
        }
    };
}

impl<const KEY_LEN: usize> Engine for AesGcm<KEY_LEN> {
    type Key = [u8; KEY_LEN];

    fn backends() -> Vec<Backend> {
        let mut backends = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = Features::get();
            if cpu.vaes_clmul256 {
                backends.push(Backend::X86Vaes);
            }
            if cpu.aes_clmul {
                backends.push(Backend::X86AesNi);
            }
        }
        backends.push(Backend::Portable);
        backends
    }

    fn new(key: &[u8; KEY_LEN], backend: Backend) -> Option<Self> {
        let aes128 = match KEY_LEN {
            16 => true,
            32 => false,
            _ => unreachable!("AES-GCM keys are 16 or 32 bytes"),
        };
        Some(match (backend, aes128) {
            (Backend::Portable, true) => Self::Portable128(Portable::new(key)),
            (Backend::Portable, false) => Self::Portable256(Portable::new(key)),
            #[cfg(target_arch = "x86_64")]
            (Backend::X86AesNi, true) => Self::AesNi128(x86_aesni::Key::new(key)?),
            #[cfg(target_arch = "x86_64")]
            (Backend::X86AesNi, false) => Self::AesNi256(x86_aesni::Key::new(key)?),
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes, true) => Self::Vaes128(x86_vaes::Key::new(key)?),
            #[cfg(target_arch = "x86_64")]
            (Backend::X86Vaes, false) => Self::Vaes256(x86_vaes::Key::new(key)?),
            #[allow(unreachable_patterns)]
            _ => return None,
        })
    }

    fn backend(&self) -> Backend {
        match self {
            Self::Portable128(_) | Self::Portable256(_) => Backend::Portable,
            #[cfg(target_arch = "x86_64")]
            Self::AesNi128(_) | Self::AesNi256(_) => Backend::X86AesNi,
            #[cfg(target_arch = "x86_64")]
            Self::Vaes128(_) | Self::Vaes256(_) => Backend::X86Vaes,
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
