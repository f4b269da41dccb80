//! Assembling the `CryptoProvider`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

#[cfg(feature = "aws-lc-rs")]
use rustls::crypto::aws_lc_rs as base;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use rustls::crypto::ring as base;
use rustls::crypto::CryptoProvider;
use rustls::SupportedCipherSuite;

use super::record::AeadChoice;
use super::suites::{ALL_CIPHER_SUITES, RECIPES};
use crate::aead::{Aes128Gcm, Algorithm, Backend, ChaCha20Poly1305, Hardening};
use crate::cpu;

/// Our nine suites with the base provider's key exchange groups, signature
/// verification, key provider and random source.
///
/// AES-GCM suites come first where the CPU has AES hardware, ChaCha20-Poly1305
/// first where it does not (decided once, here). Install it with
/// `default_provider().install_default()`; otherwise rustls silently
/// installs its own built-in provider on first use.
pub fn default_provider() -> CryptoProvider {
    with_suites(ALL_CIPHER_SUITES)
}

/// Like [`default_provider`], but every AES-GCM key runs on `aes_gcm` and
/// every ChaCha20-Poly1305 key on `chacha20_poly1305`, instead of the best
/// backend this CPU runs. `None` if this CPU cannot run one of them.
///
/// For tests, and for deployments that must pin an engine. Each distinct
/// pair builds its suites once per process. [`ProviderBuilder`] also sets
/// opt-in hardening.
pub fn provider_with_backends(
    aes_gcm: Backend,
    chacha20_poly1305: Backend,
) -> Option<CryptoProvider> {
    ProviderBuilder::new()
        .aes_gcm(aes_gcm)
        .chacha20_poly1305(chacha20_poly1305)
        .build()
}

/// A provider with pinned backends and opt-in [`Hardening`]; unset
/// choices are [`default_provider`]'s.
///
/// ```
/// use rustls_fusion::aead::Hardening;
///
/// let provider = rustls_fusion::ProviderBuilder::new()
///     .hardening(Hardening::NONE.scrub_base_stack(true))
///     .build()
///     .unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ProviderBuilder {
    aes_gcm: Option<Backend>,
    chacha20_poly1305: Option<Backend>,
    hardening: Hardening,
}

impl ProviderBuilder {
    /// The best backends this CPU runs, no extra hardening.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every AES-GCM key runs on `backend`.
    pub fn aes_gcm(self, backend: Backend) -> Self {
        Self {
            aes_gcm: Some(backend),
            ..self
        }
    }

    /// Every ChaCha20-Poly1305 key runs on `backend`.
    pub fn chacha20_poly1305(self, backend: Backend) -> Self {
        Self {
            chacha20_poly1305: Some(backend),
            ..self
        }
    }

    /// Every key (TLS records and QUIC packets) gets `hardening`.
    pub fn hardening(self, hardening: Hardening) -> Self {
        Self { hardening, ..self }
    }

    /// The provider, or `None` if this CPU cannot run a pinned backend.
    /// Each distinct builder builds its suites once per process.
    pub fn build(self) -> Option<CryptoProvider> {
        let runs =
            |b: Option<Backend>, backends: Vec<Backend>| b.is_none_or(|b| backends.contains(&b));
        if !runs(self.aes_gcm, Aes128Gcm::backends())
            || !runs(self.chacha20_poly1305, ChaCha20Poly1305::backends())
        {
            return None;
        }
        if self.aes_gcm.is_none()
            && self.chacha20_poly1305.is_none()
            && self.hardening == Hardening::NONE
        {
            return Some(default_provider());
        }
        type Key = (Option<Backend>, Option<Backend>, Hardening);
        static BUILT: Mutex<Option<HashMap<Key, &'static [SupportedCipherSuite]>>> =
            Mutex::new(None);
        let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
        let suites = *built
            .get_or_insert_with(HashMap::new)
            .entry((self.aes_gcm, self.chacha20_poly1305, self.hardening))
            .or_insert_with(|| {
                let suites: Vec<_> = RECIPES
                    .iter()
                    .map(|recipe| {
                        let backend = match recipe.kind {
                            Algorithm::Aes128Gcm | Algorithm::Aes256Gcm => self.aes_gcm,
                            Algorithm::ChaCha20Poly1305 => self.chacha20_poly1305,
                        };
                        recipe.leak(AeadChoice {
                            kind: recipe.kind,
                            backend,
                            hardening: self.hardening,
                        })
                    })
                    .collect();
                suites.leak()
            });
        Some(with_suites(suites))
    }
}

fn with_suites(suites: &[SupportedCipherSuite]) -> CryptoProvider {
    let mut cipher_suites = suites.to_vec();
    if !cpu::has_aes_hardware() {
        // Stable sort: keeps TLS 1.3 before TLS 1.2 and the rest in order.
        cipher_suites.sort_by_key(|s| !is_chacha(s));
        cipher_suites.sort_by_key(|s| s.tls13().is_none());
    }
    CryptoProvider {
        cipher_suites,
        ..base::default_provider()
    }
}

fn is_chacha(suite: &SupportedCipherSuite) -> bool {
    use rustls::CipherSuite::*;
    matches!(
        suite.suite(),
        TLS13_CHACHA20_POLY1305_SHA256
            | TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
            | TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
    )
}
