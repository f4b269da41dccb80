//! Instruction counts per record under callgrind (`scripts/instructions.sh`),
//! which are stable where timings on a shared VM are not. Seals, then
//! opens, `RECORDS` records of each size on one backend; the script runs
//! it twice (with 0 and with `RECORDS` records) and reports the difference
//! per record, so key setup and start-up cancel out.
//!
//! ```text
//! cargo bench -p rustls-fusion-benches --bench instructions --no-run
//! valgrind --tool=callgrind <binary> ALG BACKEND SIZE RECORDS
//! ```
//! `ALG` is `aes128`, `aes256` or `chacha`; `BACKEND` a name from
//! `Backend::name()`, or `aws-lc-rs`, `ring` or `boringssl` for those
//! libraries' own AEAD (the references, counted the same way). `ALG`
//! `tls:<suite>` (e.g. `tls:TLS13_AES_128_GCM_SHA256`) counts rustls-level
//! writes instead, `BACKEND` then `fusion`, `fusion-base`, `aws-lc-rs` or
//! `ring`; `quic:<suite>` counts QUIC packets (seal and open through
//! rustls's `quic::PacketKey`, SIZE payload bytes), the same providers.
//! Valgrind's CPU runs X86AesNi,
//! X86Avx2, X86Ssse3 and Base only. On aarch64 `scripts/aarch64-counts.sh` counts the same
//! way under qemu, with an instruction-counting plugin in place of callgrind.

use std::hint::black_box;

use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};
use rustls_fusion_benches::records;
use rustls_fusion_benches::reference::Reference;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`: nothing to do then.
    if args.len() != 4 {
        eprintln!("usage: instructions ALG BACKEND SIZE RECORDS");
        return;
    }
    let size: usize = args[2].parse().expect("SIZE");
    let records: usize = args[3].parse().expect("RECORDS");
    let backend = || {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == args[1])
            .expect("a backend name")
    };
    let aad = [0x17, 3, 3, 0x40, 0x11];
    let mut store = vec![0x5au8; size + 64];
    let mut buf = records::aligned(&mut store, size);
    // With `BURSTS=n`, also times `n` bursts of `RECORDS` records and
    // prints the best, in ns per record (seal + open): for A/B runs of two
    // builds on CPUs valgrind cannot run.
    let bursts: usize = std::env::var("BURSTS").map_or(0, |b| b.parse().expect("BURSTS"));
    // With `CALLS=1`, instead prints the fastest single seal and the
    // fastest single open of the `RECORDS` calls each, in TSC ticks: on a
    // shared VM, interference only ever adds time, so the minimum of many
    // single calls is the steadiest A/B figure for one build against another.
    let calls = std::env::var("CALLS").is_ok_and(|c| c == "1");
    macro_rules! run {
        ($key:expr) => {{
            let key = $key.expect("this backend runs here");
            if calls {
                let (seal, open) = fastest_calls(
                    records,
                    |i, buf| {
                        let nonce = [i as u8; 12];
                        key.seal_in_place(&nonce, &aad, black_box(buf))
                    },
                    |i, buf, tag| {
                        let nonce = [i as u8; 12];
                        key.open_in_place(&nonce, &aad, black_box(buf), tag)
                            .expect("opens");
                    },
                    &mut buf,
                );
                println!("{seal} {open}");
                return;
            }
            let mut best = f64::INFINITY;
            for burst in 0..=bursts {
                let start = std::time::Instant::now();
                for i in 0..records {
                    let nonce = [i as u8; 12];
                    let tag = key.seal_in_place(&nonce, &aad, black_box(&mut buf));
                    key.open_in_place(&nonce, &aad, black_box(&mut buf), &tag)
                        .expect("opens");
                }
                if burst > 0 {
                    best = best.min(start.elapsed().as_nanos() as f64 / records as f64);
                }
            }
            if bursts > 0 {
                println!("{best:.1}");
            }
        }};
    }
    if let Some(suite) = args[0].strip_prefix("tls:") {
        return tls(suite, &args[1], size, records);
    }
    if let Some(suite) = args[0].strip_prefix("quic:") {
        return quic(suite, &args[1], size, records);
    }
    let chacha = args[0] == "chacha";
    let key_len = if args[0] == "aes128" { 16 } else { 32 };
    let reference = match args[1].as_str() {
        "aws-lc-rs" => Some(Reference::aws_lc(chacha, &vec![1; key_len])),
        "ring" => Some(Reference::ring(chacha, &vec![1; key_len])),
        "boringssl" => Some(Reference::boringssl(chacha, &vec![1; key_len])),
        _ => None,
    };
    if reference.is_some() {
        run!(reference);
        return;
    }
    match args[0].as_str() {
        "aes128" => run!(Aes128Gcm::with_backend(&[1; 16], backend())),
        "aes256" => run!(Aes256Gcm::with_backend(&[1; 32], backend())),
        "chacha" => run!(ChaCha20Poly1305::with_backend(&[1; 32], backend())),
        other => panic!("unknown algorithm {other}"),
    }
}

/// `RECORDS` rustls-level writes of `SIZE` bytes (a client write and the
/// server's read, `tls_link.rs`) on the suite named `suite` (as rustls
/// prints it, e.g. `TLS13_AES_128_GCM_SHA256`), by `provider`: `fusion`,
/// `fusion-base` (ours on `Base`), `aws-lc-rs` or `ring`. The handshake
/// cancels out of the script's difference like key setup does.
fn tls(suite: &str, provider: &str, size: usize, records: usize) {
    use rustls::crypto::CryptoProvider;
    use rustls_fusion_benches::tls_link::{own_suite, Link};
    let provider = provider_named(provider);
    let like = suite_named(suite);
    let own = own_suite(&provider, like).expect("the provider has the suite");
    let provider = CryptoProvider {
        cipher_suites: vec![own],
        ..provider
    };
    let mut link = Link::new(&provider, own, size);
    let data = vec![0xab; size];
    for _ in 0..records {
        black_box(link.round(black_box(&data)));
    }
}

/// The provider `name`s: `fusion`, `fusion-base` (ours on `Base`),
/// `aws-lc-rs` or `ring`.
fn provider_named(name: &str) -> rustls::crypto::CryptoProvider {
    if name == "fusion-base" {
        return rustls_fusion::provider_with_backends(Backend::Base, Backend::Base)
            .expect("Base runs everywhere");
    }
    rustls_fusion_benches::tls_link::providers()
        .into_iter()
        .find(|(n, _)| *n == name)
        .expect("fusion, fusion-base, aws-lc-rs or ring")
        .1
}

/// Our suite that rustls prints as `name` (e.g. `TLS13_AES_128_GCM_SHA256`).
fn suite_named(name: &str) -> rustls::SupportedCipherSuite {
    rustls_fusion::default_provider()
        .cipher_suites
        .into_iter()
        .find(|s| format!("{:?}", s.suite()) == name)
        .expect("a suite name rustls prints")
}

/// `RECORDS` QUIC packets of `SIZE` payload bytes (11-byte short header),
/// each sealed then opened through rustls's `quic::PacketKey` of the TLS 1.3
/// suite named `suite`, by `provider` (as [`provider_named`]), keyed as
/// `quic.rs` keys it. As quinn calls it, without header protection.
fn quic(suite: &str, provider: &str, size: usize, records: usize) {
    let id = suite_named(suite).suite();
    let key = rustls_fusion_benches::quic_keys::keys(&provider_named(provider), id).packet;
    let header = [0x41u8; 11];
    let mut payload = vec![0x5au8; size];
    for pn in 0..records as u64 {
        let tag = key
            .encrypt_in_place(pn, &header, black_box(&mut payload))
            .expect("seal");
        let mut packet = std::mem::take(&mut payload);
        packet.extend_from_slice(tag.as_ref());
        let len = key
            .decrypt_in_place(pn, &header, black_box(&mut packet))
            .expect("open")
            .len();
        packet.truncate(len);
        payload = packet;
    }
}

/// The fastest single seal and open of `records` each (TSC ticks, fenced).
fn fastest_calls(
    records: usize,
    mut seal: impl FnMut(usize, &mut [u8]) -> [u8; 16],
    mut open: impl FnMut(usize, &mut [u8], &[u8; 16]),
    buf: &mut [u8],
) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    fn ticks() -> u64 {
        use core::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc have no memory operands; every x86-64 CPU has them.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    // Elsewhere nanoseconds since the first call.
    #[cfg(not(target_arch = "x86_64"))]
    fn ticks() -> u64 {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
    let (mut best_seal, mut best_open) = (u64::MAX, u64::MAX);
    for i in 0..records {
        let t0 = ticks();
        let tag = seal(i, buf);
        let t1 = ticks();
        open(i, buf, &tag);
        let t2 = ticks();
        best_seal = best_seal.min(t1 - t0);
        best_open = best_open.min(t2 - t1);
    }
    (best_seal, best_open)
}
