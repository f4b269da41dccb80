//! CPU feature detection, run once per key (never per record).
//!
//! `cpufeatures` answers the common questions. VAES and VPCLMULQDQ are asked
//! of `std` instead: `cpufeatures` 0.3.1 demands the AVX-512 register state
//! before it reports them, so it says "absent" on AVX2-only CPUs such as
//! AMD Zen 3, which run the 256-bit forms perfectly well.

/// What the AEAD backends need to know about this CPU.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Features {
    /// AES-NI and PCLMULQDQ with SSSE3 (the 128-bit AES-GCM engine).
    pub aes_clmul: bool,
    /// The same with AVX (VEX-encoded three-operand forms).
    pub aes_clmul_avx: bool,
    /// AVX and AVX2 (ymm integer ops), with BMI2 (`mulx`) for scalar Poly1305.
    pub avx2: bool,
    /// VAES and VPCLMULQDQ on ymm registers (needs `avx2` too).
    pub vaes_clmul256: bool,
    /// The same on zmm registers: AVX-512 F, BW and VL as well.
    pub vaes_clmul512: bool,
    /// AVX-512 F, BW and VL (zmm integer ops, 32 vector registers).
    pub avx512: bool,
    /// The same with AVX-512 IFMA (`vpmadd52luq`/`vpmadd52huq`: the vector
    /// Poly1305).
    pub avx512ifma: bool,
    /// SSSE3 (`pshufb`): the 4-way ChaCha20 engine.
    pub ssse3: bool,
    /// `vaes_clmul512` on a core that issues `vpclmulqdq` on zmm once per
    /// 2 cycles: AMD (SSE4a, which Intel never had), Zen 4 and Zen 5.
    /// With `aes512_dual`, decides the zmm AES-GCM engine's GHASH schedule
    /// and the lengths from which the hybrid takes its Karatsuba loop
    /// (docs/decisions.md, "GHASH products (zmm)"), and `rotate_slow` and
    /// `zmm_split`.
    pub clmul512_half_rate: bool,
    /// `clmul512_half_rate` on a core that also issues `vaesenc` on zmm
    /// twice a cycle: AMD Zen 5, recognised by AVX512-VP2INTERSECT (which
    /// Zen 4 lacks; Zen 4 issues one a cycle).
    pub aes512_dual: bool,
    /// AVX-512 on a core where `vprold` and `vpshufb` take 2 cycles while
    /// `vpaddd`, `vpxor` and `vpternlogd` take 1: AMD Zen 4
    /// (`clmul512_half_rate` without `aes512_dual`). There the AVX-512
    /// ChaCha20 engines' two-block call takes its rotations off the
    /// dependency chain; on Intel (1-cycle rotations) that costs a fifth of
    /// a short record, and Zen 5 (2 cycles for all four) has nothing to
    /// gain (docs/decisions.md, "ChaCha20 rotations off the chain").
    pub rotate_slow: bool,
    /// AVX-512 on a core that runs each zmm instruction as two 256-bit
    /// halves: AMD Zen 4 (as `rotate_slow`). There the zmm ChaCha20
    /// engines run records of up to about 1.7 KiB on ymm lanes; elsewhere
    /// only those of 449–576 bytes (docs/decisions.md, "ChaCha20-Poly1305
    /// mid-size records on zmm"). There `X86Avx512Ifma` also takes only
    /// records of up to 1984 bytes in phases (docs/decisions.md,
    /// "ChaCha20-Poly1305 phases on Zen 4").
    pub zmm_split: bool,
    /// AVX2 on a core where the vector adds, XORs, shifts, `vpshufb`,
    /// `vpshufd` and (with AVX-512) `vprold` take one cycle each: Intel (no
    /// SSE4a; AMD Zen 4's `vprold` and `vpshufb` and Zen 5's every vector
    /// step take two). There a lone ChaCha20 block (header protection)
    /// runs in vector rows rather than in general registers
    /// (docs/decisions.md, "One ChaCha20 block").
    pub vector_one_cycle: bool,
}

#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpuid_aes_clmul, "aes", "pclmulqdq", "ssse3", "sse4.1");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpuid_avx2, "avx", "avx2", "bmi2");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpuid_ssse3, "ssse3");
#[cfg(target_arch = "x86_64")]
cpufeatures::new!(cpuid_avx, "avx");

#[cfg(target_arch = "x86_64")]
impl Features {
    /// This CPU's features: detected once, then one atomic load and a copy
    /// (key setup asks for them once per backend it considers).
    #[inline]
    pub(crate) fn get() -> Self {
        static CACHE: std::sync::OnceLock<Features> = std::sync::OnceLock::new();
        *CACHE.get_or_init(Self::detect)
    }

    /// Asks `cpufeatures` and `std` (each caches its own answers).
    fn detect() -> Self {
        let aes_clmul = cpuid_aes_clmul::get();
        let avx2 = cpuid_avx2::get();
        let vaes_clmul256 = aes_clmul
            && avx2
            && std::is_x86_feature_detected!("vaes")
            && std::is_x86_feature_detected!("vpclmulqdq");
        let avx512 = avx2
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl");
        let vaes_clmul512 = vaes_clmul256 && avx512;
        let avx512ifma = avx512 && std::is_x86_feature_detected!("avx512ifma");
        let aes_clmul_avx = aes_clmul && cpuid_avx::get();
        let ssse3 = cpuid_ssse3::get();
        let clmul512_half_rate = vaes_clmul512 && std::is_x86_feature_detected!("sse4a");
        let aes512_dual = clmul512_half_rate && std::is_x86_feature_detected!("avx512vp2intersect");
        let rotate_slow = clmul512_half_rate && !aes512_dual;
        let zmm_split = rotate_slow;
        let vector_one_cycle = avx2 && !std::is_x86_feature_detected!("sse4a");
        Self {
            aes_clmul,
            aes_clmul_avx,
            avx2,
            vaes_clmul256,
            vaes_clmul512,
            avx512,
            avx512ifma,
            ssse3,
            clmul512_half_rate,
            aes512_dual,
            rotate_slow,
            zmm_split,
            vector_one_cycle,
        }
    }
}

/// What the aarch64 backends need to know about this CPU.
#[cfg(target_arch = "aarch64")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Features {
    /// Advanced SIMD (NEON): the 4-way ChaCha20 engine. Part of the
    /// aarch64 Linux ABI, but asked like every other feature, so a
    /// backend exists only where its detection says so.
    pub neon: bool,
    /// AES and PMULL (Rust's `aes` target feature enables both): the
    /// AES-GCM engine.
    pub aes_pmull: bool,
    /// `aes_pmull` and the SHA-3 extension (`EOR3`): the AES-GCM engine's
    /// build with three-way XORs.
    pub aes_pmull_sha3: bool,
}

#[cfg(target_arch = "aarch64")]
impl Features {
    /// This CPU's features (`std` caches its answers).
    pub(crate) fn get() -> Self {
        let aes_pmull = std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull");
        Self {
            neon: std::arch::is_aarch64_feature_detected!("neon"),
            aes_pmull,
            aes_pmull_sha3: aes_pmull && std::arch::is_aarch64_feature_detected!("sha3"),
        }
    }
}

/// Whether this CPU has AES hardware, which decides suite order.
pub(crate) fn has_aes_hardware() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        cpuid_aes_clmul::get()
    }
    #[cfg(target_arch = "aarch64")]
    {
        Features::get().aes_pmull
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}
