//! AES-GCM on the ARMv8 cryptography extensions (AES + PMULL), one block
//! per NEON register, 8 blocks a batch: the aarch64 engine. The stitched
//! kernel is in `kernel/`; its one-block lane type and key schedule are in
//! `aarch64.rs`.
#![allow(unsafe_code)]

use core::arch::aarch64::uint8x16_t;

super::kernel::backend!(
    features = "aes,neon",
    lanes = uint8x16_t,
    powers = 8,
    hx = 8,
    detected = aes_pmull
);
