//! AES-GCM on AES-NI + PCLMULQDQ (xmm, one block per register): for
//! x86-64 CPUs without VAES. The stitched kernel is in `kernel/`.
//!
//! Two builds of it: with AVX (VEX-encoded three-operand instructions,
//! fewer register copies; every such CPU since Sandy Bridge and Bulldozer)
//! and without (SSE only: Westmere, Silvermont-class Atoms). Key setup
//! (`AesGcm::new`) picks one; each is its own `AesGcm` variant.
#![allow(unsafe_code)]

pub(super) mod avx {
    use core::arch::x86_64::__m128i;

    super::super::kernel::backend!(
        features = "aes,pclmulqdq,ssse3,sse4.1,avx",
        lanes = __m128i,
        powers = 8,
        hx = 8,
        detected = aes_clmul_avx
    );
}

pub(super) mod sse {
    use core::arch::x86_64::__m128i;

    super::super::kernel::backend!(
        features = "aes,pclmulqdq,ssse3,sse4.1",
        lanes = __m128i,
        powers = 8,
        hx = 8,
        detected = aes_clmul
    );
}
