//! Shared helpers for the rustls-fusion integration tests: certificates,
//! configs pinned to one suite, in-memory connection pumping, and quinn
//! over loopback.

pub mod certs;
pub mod memory;
#[cfg(feature = "quinn")]
pub mod quinn_link;
