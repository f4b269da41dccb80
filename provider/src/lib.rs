//! rustls-fusion: a [rustls] `CryptoProvider` whose record layer runs on its
//! own AES-GCM and ChaCha20-Poly1305 engines and checks every nonce it seals.
//!
//! ```no_run
//! rustls_fusion::default_provider()
//!     .install_default()
//!     .expect("another CryptoProvider was installed first");
//! ```
//!
//! After that, every `rustls::ClientConfig::builder()` /
//! `ServerConfig::builder()` in the process (tokio-rustls and hyper-rustls
//! included) protects its records with this crate's engines.
//!
//! Only record protection is ours. Key exchange, certificate verification,
//! key loading, randomness and the hash/HKDF/PRF behind the key schedule come
//! from rustls's aws-lc-rs provider (default feature `aws-lc-rs`) or, with
//! `default-features = false, features = ["ring"]`, from ring's.
//!
//! Layout:
//! - [`aead`]: the standalone AEAD engines (one folder per primitive, one
//!   file per CPU backend) behind three safe types. The record layer uses
//!   exactly this API.
//! - [`cipher_suite`]: the nine TLS 1.3 / TLS 1.2 suites as statics.
//! - [`nonce_guard`]: the NIST SP 800-38D nonce-construction checks that run
//!   on every sealed record.
//! - [`quic`]: QUIC packet and header protection, through rustls's
//!   `rustls::quic` (the TLS 1.3 suites carry it) or standalone, one call
//!   per packet or per batch.
//! - `tls`: the rustls glue (encrypters, decrypters, suites).
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

#[cfg(not(any(feature = "aws-lc-rs", feature = "ring")))]
compile_error!("rustls-fusion needs the `aws-lc-rs` (default) or the `ring` feature");

pub mod aead;
mod cpu;
pub mod nonce_guard;
pub mod quic;
mod tls;

pub use tls::provider::{default_provider, provider_with_backends, ProviderBuilder};

/// The nine cipher suites, named as in `rustls::crypto::aws_lc_rs::cipher_suite`.
pub mod cipher_suite {
    pub use crate::tls::suites::{
        ALL_CIPHER_SUITES, TLS13_AES_128_GCM_SHA256, TLS13_AES_256_GCM_SHA384,
        TLS13_CHACHA20_POLY1305_SHA256, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    };
}
