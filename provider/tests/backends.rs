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
        // AMD (SSE4a) issues `vpclmulqdq` on zmm once per 2 cycles: Zen 5
        // (with AVX512-VP2INTERSECT, `vaesenc` zmm twice a cycle) runs the
        // Karatsuba schedule first, Zen 4 and Intel the hybrid one.
        let zen5 = has("sse4a") && has("avx512_vp2intersect");
        let want = match (avx512, zen5) {
            (true, true) => Backend::X86Vaes512Karatsuba,
            (true, false) => Backend::X86Vaes512Hybrid,
            (false, _) => Backend::X86Vaes,
        };
        assert_eq!(Aes128Gcm::new(&[0; 16]).backend(), want);
        assert_eq!(Aes256Gcm::new(&[0; 32]).backend(), want);
        assert!(Aes128Gcm::backends().contains(&Backend::X86Vaes));
    }
    if has("aes") && has("pclmulqdq") {
        assert!(Aes128Gcm::backends().contains(&Backend::X86AesNi));
    }
}

/// The backends detection lists, worked out independently from the CPU's
/// own flags as the kernel reports them in `/proc/cpuinfo` (which lists a
/// feature only when the OS also saves its register state). A CI machine
/// that silently loses an engine production uses (a detection bug, or a
/// hypervisor hiding a feature) fails here, and its output names what ran.
#[cfg(target_arch = "x86_64")]
#[test]
fn backend_lists_match_the_cpus_own_flags() {
    let flags = cpuinfo_flags();
    if flags.is_empty() {
        println!("no /proc/cpuinfo flags here: nothing to compare");
        return;
    }
    let has = |names: &[&str]| names.iter().all(|f| flags.iter().any(|x| x == f));
    let aesni = has(&["aes", "pclmulqdq", "ssse3", "sse4_1"]);
    let avx2 = has(&["avx", "avx2", "bmi2"]);
    let vaes = aesni && avx2 && has(&["vaes", "vpclmulqdq"]);
    let avx512 = avx2 && has(&["avx512f", "avx512bw", "avx512vl"]);
    let mut want_aes = Vec::new();
    if vaes && avx512 {
        // The zmm engine's three schedules, the CPU's preferred one first.
        if has(&["sse4a", "avx512_vp2intersect"]) {
            want_aes.extend([
                Backend::X86Vaes512Karatsuba,
                Backend::X86Vaes512Hybrid,
                Backend::X86Vaes512,
            ]);
        } else {
            want_aes.extend([
                Backend::X86Vaes512Hybrid,
                Backend::X86Vaes512Karatsuba,
                Backend::X86Vaes512,
            ]);
        }
    }
    if vaes {
        want_aes.push(Backend::X86Vaes);
    }
    if aesni {
        want_aes.push(Backend::X86AesNi);
    }
    want_aes.push(Backend::Base);
    let mut want_chacha = Vec::new();
    if avx512 && has(&["avx512ifma"]) {
        want_chacha.push(Backend::X86Avx512Ifma);
    }
    if avx512 {
        want_chacha.push(Backend::X86Avx512);
    }
    if avx2 {
        want_chacha.push(Backend::X86Avx2);
    }
    if has(&["ssse3"]) {
        want_chacha.push(Backend::X86Ssse3);
    }
    want_chacha.push(Backend::Base);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        .unwrap_or_default();
    println!("CPU: {model}");
    println!("AES-GCM backends: {:?}", Aes128Gcm::backends());
    println!(
        "ChaCha20-Poly1305 backends: {:?}",
        ChaCha20Poly1305::backends()
    );
    assert_eq!(
        Aes128Gcm::backends(),
        want_aes,
        "AES-GCM, from /proc/cpuinfo"
    );
    assert_eq!(Aes256Gcm::backends(), want_aes, "AES-256-GCM");
    assert_eq!(
        ChaCha20Poly1305::backends(),
        want_chacha,
        "ChaCha20-Poly1305, from /proc/cpuinfo"
    );
    // Detection picks the first (best) of each list.
    assert_eq!(Aes128Gcm::new(&[0; 16]).backend(), want_aes[0]);
    assert_eq!(ChaCha20Poly1305::new(&[0; 32]).backend(), want_chacha[0]);
}

#[test]
fn every_listed_backend_can_be_forced_and_others_cannot() {
    for backend in Backend::ALL {
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
    // `Base` is listed everywhere (last but for engines not yet the
    // default, which follow it).
    assert!(Aes128Gcm::backends().contains(&Backend::Base));
}

/// On aarch64 the NEON ChaCha20-Poly1305 engine is listed on every CPU
/// (NEON is part of the aarch64 Linux ABI) and the AES-GCM engine where
/// the CPU has AES and PMULL, each after `Base`, which stays the default
/// until the engine is shown at least as fast.
#[cfg(target_arch = "aarch64")]
#[test]
fn aarch64_engines_listed_and_base_default() {
    let aes = std::arch::is_aarch64_feature_detected!("aes")
        && std::arch::is_aarch64_feature_detected!("pmull");
    let want: &[Backend] = if aes {
        &[Backend::Base, Backend::Aarch64Aes]
    } else {
        &[Backend::Base]
    };
    assert_eq!(Aes128Gcm::backends(), want);
    assert_eq!(Aes256Gcm::backends(), want);
    assert_eq!(
        ChaCha20Poly1305::backends(),
        [Backend::Base, Backend::Aarch64Neon]
    );
    assert_eq!(Aes128Gcm::new(&[0; 16]).backend(), Backend::Base);
    assert_eq!(ChaCha20Poly1305::new(&[0; 32]).backend(), Backend::Base);
    assert_eq!(
        ChaCha20Poly1305::with_backend(&[0; 32], Backend::Aarch64Neon).map(|k| k.backend()),
        Some(Backend::Aarch64Neon)
    );
    assert_eq!(
        Aes256Gcm::with_backend(&[0; 32], Backend::Aarch64Aes).map(|k| k.backend()),
        aes.then_some(Backend::Aarch64Aes)
    );
}

/// Elsewhere no engine of ours runs: record protection is the base
/// provider's own AEAD, and nothing else is listed.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[test]
fn base_provider_aead_everywhere_else() {
    assert_eq!(Aes128Gcm::backends(), [Backend::Base]);
    assert_eq!(Aes256Gcm::backends(), [Backend::Base]);
    assert_eq!(ChaCha20Poly1305::backends(), [Backend::Base]);
    assert_eq!(Aes128Gcm::new(&[0; 16]).backend(), Backend::Base);
    assert_eq!(ChaCha20Poly1305::new(&[0; 32]).backend(), Backend::Base);
}
