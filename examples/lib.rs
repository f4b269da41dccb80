//! Examples live in `https_server.rs` and `https_client.rs`.
