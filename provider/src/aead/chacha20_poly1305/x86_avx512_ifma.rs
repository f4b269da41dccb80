//! ChaCha20-Poly1305 with AVX-512 and AVX-512 IFMA: the `X86Avx512`
//! engine (zmm lanes, 16 blocks per vertical pass, scalar Poly1305
//! stitched into the passes of records over 4 KiB) whose serial Poly1305
//! runs (the ones no wide pass overlaps: after a record's last keystream,
//! or before a horizontal tail call) take the eight-lane IFMA Poly1305
//! (`poly1305_ifma.rs`) from 512 bytes on, and whose records of 961 bytes
//! to 4 KiB (on Zen 4 to 1984 bytes, `PHASED_MAX_ZMM_SPLIT`) hash nothing
//! in their passes and all in one IFMA run (`crypt_phased`). Mid-size records take ymm lanes instead, as
//! `X86Avx512`'s do (`x86_64::zmm_takes_ymm`: on Zen 4 seals of 449–1664
//! bytes and opens of 449–832 and 960–1792, elsewhere records of 449–576). Stitched into a zmm pass the vector Poly1305 is no
//! faster than the scalar one: the ChaCha20 rounds already fill the vector
//! pipes (docs/decisions.md, "ChaCha20-Poly1305 at 16 KiB on zmm").
#![allow(unsafe_code)]

use core::arch::x86_64::__m512i;

super::kernel::backend!(
    features = "avx512f,avx512vl,avx2,bmi2,avx512ifma",
    lanes = __m512i,
    detected = avx512ifma,
    ifma = true,
    scrub_small = 0,
    scrub_blocks = crate::aead::secret::CHACHA20_BLOCKS_ZMM,
    mid_lanes = core::arch::x86_64::__m256i,
    mid = super::x86_64::zmm_takes_ymm
);
