//! AES-GCM on AES-NI + PCLMULQDQ (xmm, one block per register): for
//! x86-64 CPUs without VAES. The stitched kernel is in `x86_64.rs`.
#![allow(unsafe_code)]

use core::arch::x86_64::__m128i;

super::x86_64::x86_backend!(
    features = "aes,pclmulqdq,ssse3,sse4.1",
    lanes = __m128i,
    powers = 8,
    hx = 8,
    detected = aes_clmul
);
