//! Shared helpers for the rustls-fusion integration tests.
