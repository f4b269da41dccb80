//! Backend selection: detection picks the best engine this CPU runs, and
//! every listed backend can be forced.

use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};

#[cfg(target_arch = "x86_64")]
fn cpuinfo_flags() -> Vec<String> {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn vaes_cpus_get_the_vaes_engine() {
    let flags = cpuinfo_flags();
    let has = |f: &str| flags.iter().any(|x| x == f);
    println!("AES-GCM backends: {:?}", Aes128Gcm::backends());
    println!(
        "ChaCha20-Poly1305 backends: {:?}",
        ChaCha20Poly1305::backends()
    );
    // `cpufeatures` 0.3.1 misses VAES/VPCLMULQDQ without AVX-512 state
    // (AMD Zen 3): detection must still pick a VAES engine there.
    if has("vaes") && has("vpclmulqdq") && has("avx2") {
        let avx512 = has("avx512f") && has("avx512bw") && has("avx512vl");
        let want = if avx512 {
            Backend::X86Vaes512
        } else {
            Backend::X86Vaes
        };
        assert_eq!(Aes128Gcm::new(&[0; 16]).backend(), want);
        assert_eq!(Aes256Gcm::new(&[0; 32]).backend(), want);
        assert!(Aes128Gcm::backends().contains(&Backend::X86Vaes));
    }
    if has("aes") && has("pclmulqdq") {
        assert!(Aes128Gcm::backends().contains(&Backend::X86AesNi));
    }
}

#[test]
fn every_listed_backend_can_be_forced_and_others_cannot() {
    for backend in [
        Backend::Base,
        Backend::X86AesNi,
        Backend::X86Vaes,
        Backend::X86Vaes512,
        Backend::X86Avx2,
        Backend::X86Avx512,
        Backend::X86Ssse3,
    ] {
        let listed = Aes128Gcm::backends().contains(&backend);
        assert_eq!(
            Aes128Gcm::with_backend(&[1; 16], backend).is_some(),
            listed,
            "{backend}"
        );
        assert_eq!(
            Aes256Gcm::with_backend(&[1; 32], backend).is_some(),
            listed,
            "{backend}"
        );
        if let Some(k) = Aes128Gcm::with_backend(&[1; 16], backend) {
            assert_eq!(k.backend(), backend);
        }
    }
    assert!(ChaCha20Poly1305::with_backend(&[1; 32], Backend::X86Vaes).is_none());
    assert_eq!(Aes128Gcm::backends().last(), Some(&Backend::Base));
}

/// Off x86-64 no engine of ours runs: record protection is the base
/// provider's own AEAD, and nothing else is listed.
#[cfg(not(target_arch = "x86_64"))]
#[test]
fn base_provider_aead_everywhere_else() {
    assert_eq!(Aes128Gcm::backends(), [Backend::Base]);
    assert_eq!(Aes256Gcm::backends(), [Backend::Base]);
    assert_eq!(ChaCha20Poly1305::backends(), [Backend::Base]);
    assert_eq!(Aes128Gcm::new(&[0; 16]).backend(), Backend::Base);
    assert_eq!(ChaCha20Poly1305::new(&[0; 32]).backend(), Backend::Base);
}
