//! Shared bench helpers. The benches are `aead.rs` (criterion),
//! `interleaved.rs` (interleaved bursts: ratios on a noisy VM), `tls.rs`
//! (criterion, rustls level), `quic.rs`, `memory.rs` (bytes per key) and
//! `instructions.rs` (callgrind counts), `address_sweep.rs` and
//! `layout_sweep.rs` (where the buffer, or the stack, lies); the `report`
//! binary (`report.rs`)
//! is the short summary users run before installing. The references they
//! time are in [`reference`], the interleaved timing in [`records`], the
//! in-memory rustls connection in [`tls_link`].
//!
//! # CPU classes
//!
//! `CPU_CLASS=<name>` makes a bench compare the engines one CPU class runs
//! with what aws-lc-rs and BoringSSL run on that class: before either reads
//! the CPU's features, the bench sets the `OPENSSL_ia32cap` environment
//! variable (which aws-lc and BoringSSL both parse, the same way) so they do
//! not see the features the class lacks (unless `OPENSSL_ia32cap` is already
//! set). ring cannot be limited this way; it is compared only where its code
//! for that class also runs on this machine.
//!
//! BoringSSL reads the variable lazily (`OPENSSL_cpuid_setup`, run once at
//! its first use of CPU features), aws-lc in a static constructor; the
//! re-run in [`class_from_env`] sets it before either. Under the masks below
//! BoringSSL picks, for AES-GCM, its VAES + VPCLMULQDQ AVX-512 code
//! (`avx512`, unmasked; on Intel Ice Lake and Tiger Lake it picks the AVX2
//! one even there, to avoid zmm registers), its VAES AVX2 code (`avx2`) and
//! its AES-NI + AVX code (`aesni`): the code it runs on each class. Its
//! ChaCha20-Poly1305 uses AVX2 at most, so it is the same on all three
//! classes, which all have AVX2. BoringSSL therefore takes part in every
//! class (no `ring_aes`-style flag is needed for it).

use rustls_fusion::aead::Backend;

pub mod quic_keys;
pub mod records;
pub mod reference;
pub mod tls_link;

/// The provider's base, whose AEAD and QUIC keys `Base` runs, by the name
/// its reference goes by: aws-lc-rs by default, ring with the benches built
/// `--no-default-features --features ring-base` (with both features the
/// provider takes aws-lc-rs).
pub const BASE_PROVIDER: &str = if cfg!(feature = "aws-lc-rs") {
    "aws-lc-rs"
} else {
    "ring"
};

/// An x86-64 CPU class: what it lacks, what our detection picks there.
#[derive(Debug)]
pub struct Class {
    pub name: &'static str,
    /// Which CPUs are in the class.
    pub cpus: &'static str,
    /// aws-lc's and BoringSSL's capability mask (`OPENSSL_ia32cap`) hiding
    /// what the class lacks (`None`: hide nothing).
    pub ia32cap: Option<&'static str>,
    /// Our AES-GCM and ChaCha20-Poly1305 engines on this class.
    pub aes: Backend,
    pub chacha: Backend,
    /// Whether ring's AES-GCM / ChaCha20 code on this machine is the code it
    /// runs on the class (ring picks its VAES-AVX2 AES-GCM and AVX2 ChaCha20
    /// on any CPU that has them).
    pub ring_aes: bool,
    pub ring_chacha: bool,
}

impl Class {
    /// Our AES-GCM engine on this class as this CPU runs it: `aes`, or for
    /// the zmm engine whichever of its three GHASH schedules this CPU prefers
    /// (`X86Vaes512Karatsuba` on Zen 5, `X86Vaes512Hybrid` on Zen 4 and
    /// Intel, listed first there).
    pub fn aes_backend(&self) -> Backend {
        let zmm = [
            Backend::X86Vaes512,
            Backend::X86Vaes512Karatsuba,
            Backend::X86Vaes512Hybrid,
        ];
        if !zmm.contains(&self.aes) {
            return self.aes;
        }
        rustls_fusion::aead::Aes128Gcm::backends()
            .into_iter()
            .find(|b| zmm.contains(b))
            .unwrap_or(self.aes)
    }
}

/// The classes, newest first. Masks: the second word is CPUID leaf 7's EBX
/// (low 32 bits) and ECX (high 32 bits) as aws-lc and BoringSSL read them, with these bits
/// cleared: `0x00005842DC230000` is AVX512F, DQ, IFMA, PF, ER, CD, BW, VL
/// (EBX bits 16, 17, 21, 26, 27, 28, 30, 31) and VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ (ECX
/// bits 1, 6, 11, 12, 14); `0x00005E42DC230000` also clears VAES and
/// VPCLMULQDQ (ECX bits 9, 10).
pub static CLASSES: [Class; 3] = [
    Class {
        name: "avx512",
        cpus: "AVX-512 with VAES/VPCLMULQDQ: Intel Ice Lake server and later, AMD Zen 4 and later",
        ia32cap: None,
        aes: Backend::X86Vaes512,
        chacha: Backend::X86Avx512Ifma,
        ring_aes: true,
        ring_chacha: true,
    },
    Class {
        name: "avx2",
        cpus: "AVX2 with VAES/VPCLMULQDQ, no AVX-512: AMD Zen 3, Intel Alder Lake and later client",
        ia32cap: Some("~0x0:~0x00005842DC230000"),
        aes: Backend::X86Vaes,
        chacha: Backend::X86Avx2,
        ring_aes: true,
        ring_chacha: true,
    },
    Class {
        name: "aesni",
        cpus: "AVX2 and AES-NI, no VAES: Intel Haswell to Cascade Lake, AMD Zen 1/2",
        ia32cap: Some("~0x0:~0x00005E42DC230000"),
        aes: Backend::X86AesNi,
        chacha: Backend::X86Avx2,
        ring_aes: false,
        ring_chacha: true,
    },
];

/// The class named by `CPU_CLASS`, with aws-lc and BoringSSL limited to it.
/// Call first thing in `main`.
///
/// aws-lc reads `OPENSSL_ia32cap` once, in a static constructor that runs
/// before `main`, so setting it here would be too late (BoringSSL reads it
/// later, at its first use, but once too): when the class needs a mask and
/// the variable is not set, this runs the same program again with it set
/// and exits with that run's status, so both read it from the start.
///
/// # Panics
/// On an unknown class name, or if the program cannot be run again.
pub fn class_from_env() -> Option<&'static Class> {
    let name = std::env::var("CPU_CLASS").ok()?;
    let class = CLASSES.iter().find(|c| c.name == name).unwrap_or_else(|| {
        let names: Vec<_> = CLASSES.iter().map(|c| c.name).collect();
        panic!("CPU_CLASS={name}: known classes are {names:?}")
    });
    if let (Some(mask), None) = (class.ia32cap, std::env::var_os("OPENSSL_ia32cap")) {
        let status = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args(std::env::args_os().skip(1))
            .env("OPENSSL_ia32cap", mask)
            .status()
            .expect("run again with OPENSSL_ia32cap set");
        std::process::exit(status.code().unwrap_or(1));
    }
    Some(class)
}
