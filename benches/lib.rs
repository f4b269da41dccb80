//! Benches live in `aead.rs` and `tls.rs`.
