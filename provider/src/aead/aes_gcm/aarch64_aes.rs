//! AES-GCM on the ARMv8 cryptography extensions (AES + PMULL), one block
//! per NEON register, 8 blocks a batch: the aarch64 engine. The stitched
//! kernel is in `kernel/`; its one-block lane type and key schedule are in
//! `aarch64.rs`.
//!
//! Two builds of it: with the SHA-3 extension, where LLVM turns the GHASH
//! sums' chained XORs into three-way `EOR3` (Neoverse V1/V2/N2, Apple M2
//! and later), and without (Neoverse N1, Cortex-A72/A76, Apple M1). Key
//! setup (`AesGcm::new`) picks one; each is its own `AesGcm` variant.
#![allow(unsafe_code)]

pub(super) mod sha3 {
    use core::arch::aarch64::uint8x16_t;

    super::super::kernel::backend!(
        features = "aes,neon,sha3",
        lanes = uint8x16_t,
        powers = 8,
        hx = 8,
        detected = aes_pmull_sha3
    );
}

pub(super) mod plain {
    use core::arch::aarch64::uint8x16_t;

    super::super::kernel::backend!(
        features = "aes,neon",
        lanes = uint8x16_t,
        powers = 8,
        hx = 8,
        detected = aes_pmull
    );
}
