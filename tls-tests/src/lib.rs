//! Shared helpers for the rustls-fusion integration tests: certificates,
//! configs pinned to one suite, and in-memory connection pumping.

pub mod certs;
pub mod memory;
