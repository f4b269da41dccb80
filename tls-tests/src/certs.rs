//! Self-signed `localhost` certificates, made once per test process.

use std::sync::OnceLock;

use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A self-signed end-entity certificate for `localhost` and its key.
pub struct TestCert {
    pub cert: CertificateDer<'static>,
    pub key_pkcs8: Vec<u8>,
    pub pem: String,
}

impl TestCert {
    fn generate(alg: &'static rcgen::SignatureAlgorithm) -> Self {
        let key = rcgen::KeyPair::generate_for(alg).expect("key generation");
        let params = rcgen::CertificateParams::new(vec!["localhost".into()]).expect("params");
        let cert = params.self_signed(&key).expect("self-signed certificate");
        Self {
            cert: cert.der().clone(),
            key_pkcs8: key.serialize_der(),
            pem: cert.pem(),
        }
    }

    pub fn key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_pkcs8.clone()))
    }

    /// A root store trusting exactly this certificate.
    pub fn roots(&self) -> rustls::RootCertStore {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.cert.clone()).expect("trust anchor");
        roots
    }
}

/// An ECDSA P-256 certificate (TLS 1.3 and the TLS 1.2 ECDHE-ECDSA suites).
pub fn ecdsa() -> &'static TestCert {
    static CERT: OnceLock<TestCert> = OnceLock::new();
    CERT.get_or_init(|| TestCert::generate(&rcgen::PKCS_ECDSA_P256_SHA256))
}

/// An RSA-2048 certificate (the TLS 1.2 ECDHE-RSA suites).
pub fn rsa() -> &'static TestCert {
    static CERT: OnceLock<TestCert> = OnceLock::new();
    CERT.get_or_init(|| TestCert::generate(&rcgen::PKCS_RSA_SHA256))
}

/// The certificate a suite needs.
pub fn for_suite(suite: rustls::SupportedCipherSuite) -> &'static TestCert {
    if format!("{:?}", suite.suite()).contains("_RSA_") {
        rsa()
    } else {
        ecdsa()
    }
}
