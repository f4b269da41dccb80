//! Assembling the `CryptoProvider`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

#[cfg(feature = "aws-lc-rs")]
use rustls::crypto::aws_lc_rs as base;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use rustls::crypto::ring as base;
use rustls::crypto::CryptoProvider;
use rustls::SupportedCipherSuite;

use super::record::{AeadChoice, AeadKind};
use super::suites::{ALL_CIPHER_SUITES, RECIPES};
use crate::aead::{Aes128Gcm, Backend, ChaCha20Poly1305};
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
/// pair builds its suites once per process.
pub fn provider_with_backends(
    aes_gcm: Backend,
    chacha20_poly1305: Backend,
) -> Option<CryptoProvider> {
    if !Aes128Gcm::backends().contains(&aes_gcm)
        || !ChaCha20Poly1305::backends().contains(&chacha20_poly1305)
    {
        return None;
    }
    type Built = HashMap<(Backend, Backend), &'static [SupportedCipherSuite]>;
    static BUILT: Mutex<Option<Built>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    let suites = *built
        .get_or_insert_with(HashMap::new)
        .entry((aes_gcm, chacha20_poly1305))
        .or_insert_with(|| {
            let suites: Vec<_> = RECIPES
                .iter()
                .map(|recipe| {
                    let backend = match recipe.kind {
                        AeadKind::Aes128Gcm | AeadKind::Aes256Gcm => aes_gcm,
                        AeadKind::ChaCha20Poly1305 => chacha20_poly1305,
                    };
                    recipe.leak(AeadChoice {
                        kind: recipe.kind,
                        backend: Some(backend),
                    })
                })
                .collect();
            suites.leak()
        });
    Some(with_suites(suites))
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
