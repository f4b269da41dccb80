//! The nine suites, their certificates, and rustls-fusion pinned to
//! given backends on the rustls side.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Aead {
    AesGcm,
    ChaCha,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CertKind {
    EcdsaP256,
    Rsa2048,
}

pub(crate) struct Suite {
    pub(crate) name: &'static str,
    /// IANA id.
    pub(crate) id: u16,
    pub(crate) tls13: bool,
    pub(crate) aead: Aead,
    pub(crate) cert: CertKind,
    /// BoringSSL's name, for `set_strict_cipher_list` (TLS 1.2 only: BoringSSL
    /// cannot restrict TLS 1.3 suites, so those are forced on our side).
    pub(crate) bssl_name: &'static str,
}

impl Suite {
    /// TLS 1.2 AES-GCM: the record carries an 8-byte explicit nonce.
    pub(crate) fn explicit_nonce(&self) -> bool {
        !self.tls13 && self.aead == Aead::AesGcm
    }
    pub(crate) fn version(&self) -> u16 {
        if self.tls13 {
            0x0304
        } else {
            0x0303
        }
    }
}

pub(crate) const fn suite(
    name: &'static str,
    id: u16,
    tls13: bool,
    aead: Aead,
    cert: CertKind,
    bssl_name: &'static str,
) -> Suite {
    Suite {
        name,
        id,
        tls13,
        aead,
        cert,
        bssl_name,
    }
}

use Aead::{AesGcm, ChaCha};
use CertKind::{EcdsaP256, Rsa2048};

pub(crate) static TLS13_AES_128_GCM_SHA256: Suite = suite(
    "TLS13_AES_128_GCM_SHA256",
    0x1301,
    true,
    AesGcm,
    EcdsaP256,
    "",
);
pub(crate) static TLS13_AES_256_GCM_SHA384: Suite = suite(
    "TLS13_AES_256_GCM_SHA384",
    0x1302,
    true,
    AesGcm,
    EcdsaP256,
    "",
);
pub(crate) static TLS13_CHACHA20_POLY1305_SHA256: Suite = suite(
    "TLS13_CHACHA20_POLY1305_SHA256",
    0x1303,
    true,
    ChaCha,
    EcdsaP256,
    "",
);
pub(crate) static TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: Suite = suite(
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    0xc02b,
    false,
    AesGcm,
    EcdsaP256,
    "ECDHE-ECDSA-AES128-GCM-SHA256",
);
pub(crate) static TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: Suite = suite(
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    0xc02c,
    false,
    AesGcm,
    EcdsaP256,
    "ECDHE-ECDSA-AES256-GCM-SHA384",
);
pub(crate) static TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: Suite = suite(
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    0xcca9,
    false,
    ChaCha,
    EcdsaP256,
    "ECDHE-ECDSA-CHACHA20-POLY1305",
);
pub(crate) static TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: Suite = suite(
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    0xc02f,
    false,
    AesGcm,
    Rsa2048,
    "ECDHE-RSA-AES128-GCM-SHA256",
);
pub(crate) static TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: Suite = suite(
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    0xc030,
    false,
    AesGcm,
    Rsa2048,
    "ECDHE-RSA-AES256-GCM-SHA384",
);
pub(crate) static TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: Suite = suite(
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    0xcca8,
    false,
    ChaCha,
    Rsa2048,
    "ECDHE-RSA-CHACHA20-POLY1305",
);

pub(crate) struct TestCert {
    pub(crate) der: Vec<u8>,
    pub(crate) key_pkcs8: Vec<u8>,
}

/// A self-signed `localhost` certificate, generated once per test process.
pub(crate) fn cert(kind: CertKind) -> &'static TestCert {
    pub(crate) fn generate(alg: &'static rcgen::SignatureAlgorithm) -> TestCert {
        let key = rcgen::KeyPair::generate_for(alg).expect("key generation");
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .expect("certificate params")
            .self_signed(&key)
            .expect("self-signed certificate");
        TestCert {
            der: cert.der().to_vec(),
            key_pkcs8: key.serialize_der(),
        }
    }
    static ECDSA: OnceLock<TestCert> = OnceLock::new();
    static RSA: OnceLock<TestCert> = OnceLock::new();
    match kind {
        CertKind::EcdsaP256 => ECDSA.get_or_init(|| generate(&rcgen::PKCS_ECDSA_P256_SHA256)),
        CertKind::Rsa2048 => RSA.get_or_init(|| generate(&rcgen::PKCS_RSA_SHA256)),
    }
}

/// (AES-GCM backend, ChaCha20-Poly1305 backend) pairs for one suite: every
/// backend of the suite's AEAD, the other AEAD on its best backend.
pub(crate) fn backend_pairs(suite: &Suite) -> Vec<(Backend, Backend)> {
    let aes = Aes128Gcm::backends();
    let chacha = ChaCha20Poly1305::backends();
    assert!(!aes.is_empty() && !chacha.is_empty(), "no backend at all");
    match suite.aead {
        Aead::AesGcm => aes.iter().map(|&a| (a, chacha[0])).collect(),
        Aead::ChaCha => chacha.iter().map(|&c| (aes[0], c)).collect(),
    }
}

pub(crate) fn backend_of(suite: &Suite, backends: (Backend, Backend)) -> Backend {
    match suite.aead {
        Aead::AesGcm => backends.0,
        Aead::ChaCha => backends.1,
    }
}

/// rustls-fusion pinned to `backends`, offering exactly `suite`.
pub(crate) fn fusion_provider(suite: &Suite, backends: (Backend, Backend)) -> Arc<CryptoProvider> {
    let base = rustls_fusion::provider_with_backends(backends.0, backends.1)
        .expect("backend listed by backends() must run");
    let one: Vec<SupportedCipherSuite> = base
        .cipher_suites
        .iter()
        .copied()
        .filter(|s| u16::from(s.suite()) == suite.id)
        .collect();
    assert_eq!(one.len(), 1, "{} not in rustls-fusion", suite.name);
    assert_eq!(format!("{:?}", one[0].suite()), suite.name);
    Arc::new(CryptoProvider {
        cipher_suites: one,
        ..base
    })
}

pub(crate) fn versions(suite: &Suite) -> &'static [&'static rustls::SupportedProtocolVersion] {
    static TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
    static TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
    if suite.tls13 {
        &TLS13
    } else {
        &TLS12
    }
}

pub(crate) fn fusion_client_config(
    suite: &Suite,
    provider: Arc<CryptoProvider>,
) -> Arc<ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(cert(suite.cert).der.clone()))
        .expect("trust anchor");
    Arc::new(
        ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions(suite))
            .expect("protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

pub(crate) fn fusion_server_config(
    suite: &Suite,
    provider: Arc<CryptoProvider>,
) -> Arc<ServerConfig> {
    let c = cert(suite.cert);
    Arc::new(
        ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions(suite))
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(c.der.clone())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(c.key_pkcs8.clone())),
            )
            .expect("server certificate"),
    )
}
