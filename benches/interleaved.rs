//! AEAD ratios with interleaved timing: every implementation runs a short
//! burst in turn, 25 rounds, and the best burst of each counts. On a noisy
//! VM this gives far steadier ratios than criterion's
//! one-implementation-at-a-time runs (use both; never assert on either).
//!
//! ```text
//! taskset -c 1 cargo bench -p rustls-fusion-benches --bench interleaved -- [sizes] [algs] [backends]
//! CPU_CLASS=avx2 taskset -c 1 cargo bench -p rustls-fusion-benches --bench interleaved
//! ```
//! - `sizes`: comma-separated record sizes (default 16,64,256,1350,8192,16384);
//! - `algs`: any of `aes128,aes256,chacha` (default all three);
//! - `backends`: a filter on our backend names (default: all this CPU runs).
//!
//! The references are aws-lc-rs, BoringSSL (its `EVP_AEAD`, through
//! boring-sys) and ring. `CPU_CLASS=avx512|avx2|aesni` (see `lib.rs`) times
//! only our engine for that class, against aws-lc-rs and BoringSSL limited
//! to the class (`OPENSSL_ia32cap`) and against ring where ring's code for
//! the class runs here. Each row prints ns per record for seal and open
//! (5-byte AAD, in place; opens toggle the buffer between ciphertext and
//! plaintext, `records::Toggle`, with no copy between them) and our ratio to the best reference, the median
//! over the rounds of the ratio within each round: above 1.00 is faster.
//!
//! `TLS=1` instead times rustls-level writes of the given sizes (default
//! 64,1024,16384,262144; client seals, server opens, see `tls_link.rs`) for
//! the TLS 1.3 suites and the TLS 1.2 ECDHE-RSA AES-128-GCM and
//! ChaCha20-Poly1305 ones on rustls-fusion, aws-lc-rs and ring (with
//! `CPU_CLASS`, as for records; BoringSSL has no rustls provider). `BASE=1`
//! pins ours to `Base` for both AEADs.
//!
//! `SEAL_COPY=1` copies the plaintext into the buffer before each seal, as
//! a TLS write has it, instead of sealing the last seal's output in place
//! (every implementation alike); `BUF_ALIGN=<0..63>` fixes the buffer's
//! address mod 64.
//!
//! Built with `--no-default-features --features ring-base`, the provider
//! sits on ring: `Base` runs ring's AEAD and its extra column reads it
//! against ring (against aws-lc-rs by default).

use std::hint::black_box;

use rustls::crypto::CryptoProvider;
use rustls_fusion::aead::{Backend, Hardening};
use rustls_fusion_benches::records::{self, best, median_ratio, time_records, Alg, Imp};
use rustls_fusion_benches::reference::Reference;
use rustls_fusion_benches::tls_link::{own_suite, providers, Link};
use rustls_fusion_benches::{class_from_env, Class, BASE_PROVIDER};

/// Rounds of bursts per size and operation.
const ROUNDS: usize = 25;

fn main() {
    let class = class_from_env();
    if std::env::var_os("TLS").is_some() {
        return tls(class);
    }
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let sizes: Vec<usize> = args
        .next()
        .map_or(vec![16, 64, 256, 1350, 8192, 16384], |s| {
            s.split(',')
                .map(|x| x.parse().expect("sizes: numbers"))
                .collect()
        });
    let algs: Vec<Alg> = args
        .next()
        .map_or(vec![Alg::Aes128, Alg::Aes256, Alg::ChaCha], |s| {
            s.split(',')
                .map(|a| match a {
                    "aes128" => Alg::Aes128,
                    "aes256" => Alg::Aes256,
                    "chacha" => Alg::ChaCha,
                    _ => panic!("algs: aes128, aes256, chacha"),
                })
                .collect()
        });
    let filter = args.next().unwrap_or_default();
    match class {
        Some(c) => println!(
            "CPU class {}: {}\nOPENSSL_ia32cap={}",
            c.name,
            c.cpus,
            std::env::var("OPENSSL_ia32cap").unwrap_or_default()
        ),
        None => println!("no CPU_CLASS: every backend this CPU runs"),
    }
    println!(
        "ns per record (5-byte AAD): the best of {ROUNDS} rounds of interleaved bursts of about \
         BURST_US (500) µs each; ratio: the median over rounds of the best reference's time over ours"
    );
    for alg in algs {
        run_alg(alg, &sizes, class, &filter);
    }
}

fn run_alg(alg: Alg, sizes: &[usize], class: Option<&Class>, filter: &str) {
    let key = alg.key();
    let chacha = alg == Alg::ChaCha;
    let ours: Vec<Backend> = match class {
        Some(c) => vec![if chacha { c.chacha } else { c.aes_backend() }],
        None => alg.backends(),
    }
    .into_iter()
    .filter(|b| b.name().contains(filter))
    .collect();
    // On ring, `Base` is read against ring whatever the class.
    let with_ring = BASE_PROVIDER == "ring"
        || class.is_none_or(|c| if chacha { c.ring_chacha } else { c.ring_aes });
    // BoringSSL is limited to every class by OPENSSL_ia32cap (lib.rs).
    let mut imps: Vec<(String, Imp)> = vec![
        (
            "aws-lc-rs".into(),
            Imp::Reference(Reference::aws_lc(chacha, &key)),
        ),
        (
            "boringssl".into(),
            Imp::Reference(Reference::boringssl(chacha, &key)),
        ),
    ];
    if with_ring {
        imps.push(("ring".into(), Imp::Reference(Reference::ring(chacha, &key))));
    }
    let refs: Vec<usize> = (0..imps.len()).collect();
    for b in ours {
        imps.push((b.name().into(), Imp::ours(alg, &key, b)));
        if b == Backend::Base && std::env::var_os("BASE_SCRUB").is_some() {
            // `Base` with its opt-in stack scrub, for its cost.
            let scrub = Hardening::NONE.scrub_base_stack(true);
            imps.push(("base+scrub".into(), Imp::hardened(alg, &key, b, scrub)));
        }
    }
    let mut header = format!("\n| {} | op |", alg.name());
    let mut rule = "|---|---|".to_string();
    for (name, _) in &imps {
        header += &format!(" {name} |");
        rule += "---|";
    }
    for (name, _) in &imps[refs.len()..] {
        header += &format!(" {name} ratio |");
        rule += "---|";
    }
    // `Base` is also read against the base provider alone: the "never
    // slower than what it replaces" target.
    let base: Vec<usize> = (refs.len()..imps.len())
        .filter(|&i| imps[i].0.starts_with("base"))
        .collect();
    let base_ref = refs
        .iter()
        .position(|&i| imps[i].0 == BASE_PROVIDER)
        .expect("the base provider is a reference");
    for &i in &base {
        header += &format!(" {} / {BASE_PROVIDER} |", imps[i].0);
        rule += "---|";
    }
    println!("{header}\n{rule}");
    let burst_us: f64 = std::env::var("BURST_US")
        .ok()
        .map_or(500.0, |s| s.parse().expect("BURST_US: a number"));
    for &n in sizes {
        let iters = records::burst_iters(&imps, n, burst_us);
        // times[op][imp][round]; the order of implementations rotates every
        // round, so none always follows the same neighbour.
        let times = time_records(&imps, n, ROUNDS, iters, || ());
        for (op, op_name) in [(0, "seal"), (1, "open")] {
            let mut line = format!("| {n} | {op_name} |");
            for t in &times[op] {
                line += &format!(" {:.1} |", best(t));
            }
            for ours in refs.len()..imps.len() {
                // Per round: the best reference over ours, both timed within
                // the same round; the median of those ratios.
                line += &format!(" {:.2}× |", median_ratio(&times[op], &refs, ours));
            }
            for &i in &base {
                line += &format!(" {:.2}× |", median_ratio(&times[op], &[base_ref], i));
            }
            println!("{line}");
        }
    }
}

/// rustls-level writes (client seals, server opens), interleaved across the
/// providers: every TLS 1.3 suite and the TLS 1.2 ECDHE-RSA ones. With a
/// CPU class, our provider is pinned to the class's engines, aws-lc-rs is
/// limited to the class and ring takes part where its code for the class
/// runs here.
fn tls(class: Option<&Class>) {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map_or(vec![64, 1024, 16384, 262144], |s| {
            s.split(',')
                .map(|x| x.parse().expect("sizes: numbers"))
                .collect()
        });
    let mut providers = providers();
    if let Some(class) = class {
        providers[0].1 = rustls_fusion::provider_with_backends(class.aes_backend(), class.chacha)
            .expect("this CPU runs the class's engines");
    }
    if std::env::var_os("BASE").is_some() {
        providers[0].1 = rustls_fusion::provider_with_backends(Backend::Base, Backend::Base)
            .expect("Base runs everywhere");
    }
    println!(
        "ns per client write + server read: the best of {ROUNDS} rounds of interleaved bursts; \
         ratio: the median over rounds of the best reference's time over fusion's"
    );
    use rustls_fusion::cipher_suite as cs;
    for suite in [
        cs::TLS13_AES_128_GCM_SHA256,
        cs::TLS13_AES_256_GCM_SHA384,
        cs::TLS13_CHACHA20_POLY1305_SHA256,
        cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ] {
        let chacha = format!("{:?}", suite.suite()).contains("CHACHA");
        let with_ring = class.is_none_or(|c| if chacha { c.ring_chacha } else { c.ring_aes });
        println!(
            "\n| {:?} | fusion | aws-lc-rs | {}ratio |",
            suite.suite(),
            if with_ring { "ring | " } else { "" }
        );
        println!("|---|---|---|{}---|", if with_ring { "---|" } else { "" });
        for &size in &sizes {
            let data = vec![0xab; size];
            let mut links: Vec<(&str, Link)> = providers
                .iter()
                .filter(|(name, _)| with_ring || *name != "ring")
                .map(|(name, provider)| {
                    let own = own_suite(provider, suite).expect("every provider has the suite");
                    let provider = CryptoProvider {
                        cipher_suites: vec![own],
                        ..provider.clone()
                    };
                    let mut link = Link::new(&provider, own, size);
                    assert_eq!(link.round(&data), size, "{name}: round trip");
                    (*name, link)
                })
                .collect();
            let iters = (4_000_000 / (size + 500)).max(20);
            let times = records::interleave(
                links.len(),
                ROUNDS,
                iters,
                |i| {
                    black_box(links[i].1.round(black_box(&data)));
                },
                || (),
            );
            let refs: Vec<usize> = (1..links.len()).collect();
            let ratio = median_ratio(&times, &refs, 0);
            let mut line = format!("| {size} |");
            for t in &times {
                line += &format!(" {:.0} |", best(t));
            }
            println!("{line} {ratio:.2}× |");
        }
    }
}
