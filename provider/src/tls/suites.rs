//! The nine cipher suites.
//!
//! Our record layer with the base provider's hash, HKDF, PRF and signature
//! schemes: rustls keeps those types private but its suite statics are
//! public, so their fields are read at compile time.

#[cfg(feature = "aws-lc-rs")]
use rustls::crypto::aws_lc_rs as base;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use rustls::crypto::ring as base;

use rustls::crypto::{CipherSuiteCommon, KeyExchangeAlgorithm};
use rustls::{CipherSuite, SupportedCipherSuite, Tls12CipherSuite, Tls13CipherSuite};

use super::record::AeadChoice;
use crate::aead::{Algorithm, Hardening};
use crate::quic::QuicAlgorithm;

const fn base13(suite: SupportedCipherSuite) -> &'static Tls13CipherSuite {
    match suite {
        SupportedCipherSuite::Tls13(s) => s,
        SupportedCipherSuite::Tls12(_) => panic!("not a TLS 1.3 suite"),
    }
}

const fn base12(suite: SupportedCipherSuite) -> &'static Tls12CipherSuite {
    match suite {
        SupportedCipherSuite::Tls12(s) => s,
        SupportedCipherSuite::Tls13(_) => panic!("not a TLS 1.2 suite"),
    }
}

static BASE13_SHA256: &Tls13CipherSuite = base13(base::cipher_suite::TLS13_AES_128_GCM_SHA256);
static BASE13_SHA384: &Tls13CipherSuite = base13(base::cipher_suite::TLS13_AES_256_GCM_SHA384);
static BASE12_ECDSA_SHA256: &Tls12CipherSuite =
    base12(base::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256);
static BASE12_ECDSA_SHA384: &Tls12CipherSuite =
    base12(base::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384);
static BASE12_RSA_SHA256: &Tls12CipherSuite =
    base12(base::cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256);
static BASE12_RSA_SHA384: &Tls12CipherSuite =
    base12(base::cipher_suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384);

/// Records per key before rustls must rekey (RFC 8446 §5.5).
const fn confidentiality_limit(kind: Algorithm) -> u64 {
    match kind {
        Algorithm::Aes128Gcm | Algorithm::Aes256Gcm => 1 << 24,
        Algorithm::ChaCha20Poly1305 => u64::MAX,
    }
}

/// One suite's recipe: its id, which base suite lends the hash/KDF, and
/// which AEAD it runs. A forced-backend provider builds the same list with
/// another backend.
#[derive(Clone, Copy)]
pub(crate) struct Recipe {
    id: CipherSuite,
    base: Base,
    pub(crate) kind: Algorithm,
}

#[derive(Clone, Copy)]
enum Base {
    Tls13(&'static Tls13CipherSuite),
    Tls12(&'static Tls12CipherSuite),
}

impl Recipe {
    const fn tls13(id: CipherSuite, base: &'static Tls13CipherSuite, kind: Algorithm) -> Self {
        Self {
            id,
            base: Base::Tls13(base),
            kind,
        }
    }

    const fn tls12(id: CipherSuite, base: &'static Tls12CipherSuite, kind: Algorithm) -> Self {
        Self {
            id,
            base: Base::Tls12(base),
            kind,
        }
    }

    const fn common(&self, hash: &'static dyn rustls::crypto::hash::Hash) -> CipherSuiteCommon {
        CipherSuiteCommon {
            suite: self.id,
            hash_provider: hash,
            confidentiality_limit: confidentiality_limit(self.kind),
        }
    }

    /// The TLS 1.3 suite for this recipe with `aead`, and QUIC protection
    /// with `quic` (the same cipher and backend).
    const fn build13(
        &self,
        aead: &'static AeadChoice,
        quic: &'static QuicAlgorithm,
    ) -> Tls13CipherSuite {
        let Base::Tls13(base) = self.base else {
            panic!("not a TLS 1.3 recipe")
        };
        Tls13CipherSuite {
            common: self.common(base.common.hash_provider),
            hkdf_provider: base.hkdf_provider,
            aead_alg: aead,
            quic: Some(quic),
        }
    }

    /// The TLS 1.2 suite for this recipe with `aead`.
    const fn build12(&self, aead: &'static AeadChoice) -> Tls12CipherSuite {
        let Base::Tls12(base) = self.base else {
            panic!("not a TLS 1.2 recipe")
        };
        Tls12CipherSuite {
            common: self.common(base.common.hash_provider),
            prf_provider: base.prf_provider,
            kx: KeyExchangeAlgorithm::ECDHE,
            sign: base.sign,
            aead_alg: aead,
        }
    }

    /// Builds this suite with `aead`, leaking it (for forced-backend providers,
    /// which cache what they build).
    pub(crate) fn leak(&self, aead: AeadChoice) -> SupportedCipherSuite {
        let quic: &'static QuicAlgorithm = Box::leak(Box::new(QuicAlgorithm {
            cipher: aead.kind,
            backend: aead.backend,
            hardening: aead.hardening,
        }));
        let aead: &'static AeadChoice = Box::leak(Box::new(aead));
        match self.base {
            Base::Tls13(_) => {
                SupportedCipherSuite::Tls13(Box::leak(Box::new(self.build13(aead, quic))))
            }
            Base::Tls12(_) => SupportedCipherSuite::Tls12(Box::leak(Box::new(self.build12(aead)))),
        }
    }
}

/// The TLS 1.3 suites' QUIC algorithms (best backend).
static QUIC: [QuicAlgorithm; 3] = [
    QuicAlgorithm {
        cipher: Algorithm::Aes128Gcm,
        backend: None,
        hardening: Hardening::NONE,
    },
    QuicAlgorithm {
        cipher: Algorithm::Aes256Gcm,
        backend: None,
        hardening: Hardening::NONE,
    },
    QuicAlgorithm {
        cipher: Algorithm::ChaCha20Poly1305,
        backend: None,
        hardening: Hardening::NONE,
    },
];

const fn quic_of(kind: Algorithm) -> &'static QuicAlgorithm {
    match kind {
        Algorithm::Aes128Gcm => &QUIC[0],
        Algorithm::Aes256Gcm => &QUIC[1],
        Algorithm::ChaCha20Poly1305 => &QUIC[2],
    }
}

const AES128: AeadChoice = AeadChoice {
    kind: Algorithm::Aes128Gcm,
    backend: None,
    hardening: Hardening::NONE,
};
const AES256: AeadChoice = AeadChoice {
    kind: Algorithm::Aes256Gcm,
    backend: None,
    hardening: Hardening::NONE,
};
const CHACHA: AeadChoice = AeadChoice {
    kind: Algorithm::ChaCha20Poly1305,
    backend: None,
    hardening: Hardening::NONE,
};

macro_rules! suites {
    ($($(#[$doc:meta])* $name:ident = $ctor:ident($base:ident, $aead:ident, $kind:ident);)*) => {
        /// Every suite's recipe, in [`ALL_CIPHER_SUITES`] order.
        pub(crate) const RECIPES: &[Recipe] = &[$(Recipe::$ctor(CipherSuite::$name, $base, Algorithm::$kind)),*];

        $(
            $(#[$doc])*
            pub static $name: SupportedCipherSuite = suites!(@wrap $ctor, $name, $base, $aead, $kind);
        )*

        /// All nine suites, in rustls's order (TLS 1.3 first; AES-256-GCM,
        /// AES-128-GCM, then ChaCha20-Poly1305). `default_provider()` moves
        /// ChaCha20-Poly1305 first on CPUs without AES hardware.
        pub static ALL_CIPHER_SUITES: &[SupportedCipherSuite] = &[$($name),*];
    };
    (@wrap tls13, $name:ident, $base:ident, $aead:ident, $kind:ident) => {
        SupportedCipherSuite::Tls13(&Recipe::tls13(CipherSuite::$name, $base, Algorithm::$kind).build13(&$aead, quic_of(Algorithm::$kind)))
    };
    (@wrap tls12, $name:ident, $base:ident, $aead:ident, $kind:ident) => {
        SupportedCipherSuite::Tls12(&Recipe::tls12(CipherSuite::$name, $base, Algorithm::$kind).build12(&$aead))
    };
}

suites! {
    /// TLS 1.3 with AES-256-GCM and SHA-384.
    TLS13_AES_256_GCM_SHA384 = tls13(BASE13_SHA384, AES256, Aes256Gcm);
    /// TLS 1.3 with AES-128-GCM and SHA-256.
    TLS13_AES_128_GCM_SHA256 = tls13(BASE13_SHA256, AES128, Aes128Gcm);
    /// TLS 1.3 with ChaCha20-Poly1305 and SHA-256.
    TLS13_CHACHA20_POLY1305_SHA256 = tls13(BASE13_SHA256, CHACHA, ChaCha20Poly1305);
    /// TLS 1.2 ECDHE-ECDSA with AES-256-GCM and SHA-384.
    TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 = tls12(BASE12_ECDSA_SHA384, AES256, Aes256Gcm);
    /// TLS 1.2 ECDHE-ECDSA with AES-128-GCM and SHA-256.
    TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 = tls12(BASE12_ECDSA_SHA256, AES128, Aes128Gcm);
    /// TLS 1.2 ECDHE-ECDSA with ChaCha20-Poly1305 and SHA-256.
    TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 = tls12(BASE12_ECDSA_SHA256, CHACHA, ChaCha20Poly1305);
    /// TLS 1.2 ECDHE-RSA with AES-256-GCM and SHA-384.
    TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 = tls12(BASE12_RSA_SHA384, AES256, Aes256Gcm);
    /// TLS 1.2 ECDHE-RSA with AES-128-GCM and SHA-256.
    TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 = tls12(BASE12_RSA_SHA256, AES128, Aes128Gcm);
    /// TLS 1.2 ECDHE-RSA with ChaCha20-Poly1305 and SHA-256.
    TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 = tls12(BASE12_RSA_SHA256, CHACHA, ChaCha20Poly1305);
}
