//! rustls-level application-data throughput: an in-memory client → server
//! connection for each of the nine suites, on rustls-fusion, aws-lc-rs and
//! ring in the same run.
//!
//! Each iteration the client writes one `N`-byte buffer (`write_all`, so
//! rustls splits it into ≤ 16 KiB records and seals them), the TLS bytes are
//! moved into the server, the server opens them and the plaintext is drained.
//! Buffers are reused; the handshake happens once per benchmark, outside the
//! measurement.
//!
//! Groups are named `tls/<SUITE>`, ids `<provider>/<bytes>` with providers
//! `fusion`, `aws-lc-rs` and `ring`. Run one group with
//! `cargo bench -p rustls-fusion-benches --bench tls -- 'tls/TLS13_AES_128_GCM_SHA256'`.
//! `BENCH_QUICK=1` shortens warm-up and measurement (for smoke runs);
//! `BENCH_SIZES=64,16384` restricts the write sizes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rustls::crypto::CryptoProvider;
use rustls_fusion_benches::tls_link::{own_suite, providers, Link};

const SIZES: [usize; 4] = [64, 1024, 16 * 1024, 256 * 1024];

/// `BENCH_SIZES=64,16384` restricts the write sizes.
fn sizes() -> Vec<usize> {
    match std::env::var("BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().parse().expect("BENCH_SIZES: numbers"))
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

fn tls(c: &mut Criterion) {
    let providers = providers();
    let sizes = sizes();
    for &suite in rustls_fusion::cipher_suite::ALL_CIPHER_SUITES {
        let suite_name = format!("{:?}", suite.suite());
        let mut group = c.benchmark_group(format!("tls/{suite_name}"));
        if std::env::var_os("BENCH_QUICK").is_some() {
            group
                .warm_up_time(Duration::from_millis(200))
                .measurement_time(Duration::from_millis(500));
        } else {
            group
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_secs(2));
        }
        for (name, provider) in &providers {
            let Some(own) = own_suite(provider, suite) else {
                eprintln!("{name} has no {suite_name}: skipped");
                continue;
            };
            let provider = CryptoProvider {
                cipher_suites: vec![own],
                ..provider.clone()
            };
            for &size in &sizes {
                let data = vec![0xab; size];
                // A fresh connection per size (record sequence numbers start
                // at zero and no benchmark runs near a key's record limit),
                // made on first use so filtered-out benchmarks skip the
                // handshake. Criterion calls the closure once per sample.
                let mut link = None;
                group.throughput(Throughput::Bytes(size as u64));
                group.bench_function(BenchmarkId::new(*name, size), |b| {
                    let link = link.get_or_insert_with(|| {
                        let mut link = Link::new(&provider, own, size);
                        assert_eq!(link.round(&data), size, "{name} {suite_name}: round trip");
                        link
                    });
                    b.iter(|| black_box(link.round(black_box(&data))))
                });
            }
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // Tables and plots come from scripts/plot_bench.py; criterion's own
    // per-benchmark plots would double the run time.
    config = Criterion::default().without_plots();
    targets = tls
}
criterion_main!(benches);
