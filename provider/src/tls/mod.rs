//! rustls glue: suites, per-key encrypters and decrypters.
//!
//! rustls makes one encrypter or decrypter per traffic key and calls it once
//! per record. All key setup (the AEAD key context, the nonce guard) happens
//! when it is made; a record costs one nonce check and one AEAD call.

pub(crate) mod provider;
mod record;
pub(crate) mod suites;
mod tls12;
mod tls13;

/// rustls's per-fragment plaintext limit (`MAX_FRAGMENT_LEN` is private).
const MAX_FRAGMENT_LEN: usize = 16384;
