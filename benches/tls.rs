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
use std::io::{Read, Write};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rustls::crypto::CryptoProvider;
use rustls::SupportedCipherSuite;
use tls_tests::memory::Pair;

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

/// The providers under test, by bench id.
fn providers() -> [(&'static str, CryptoProvider); 3] {
    [
        ("fusion", rustls_fusion::default_provider()),
        ("aws-lc-rs", rustls::crypto::aws_lc_rs::default_provider()),
        ("ring", rustls::crypto::ring::default_provider()),
    ]
}

/// `provider`'s own implementation of the suite `like` names.
fn own_suite(
    provider: &CryptoProvider,
    like: SupportedCipherSuite,
) -> Option<SupportedCipherSuite> {
    provider
        .cipher_suites
        .iter()
        .copied()
        .find(|s| s.suite() == like.suite())
}

/// A connected pair plus the buffers one iteration reuses.
struct Link {
    pair: Pair,
    /// TLS bytes in flight from client to server.
    wire: Vec<u8>,
    /// Where the server's plaintext is drained to.
    sink: Box<[u8]>,
    /// TLS bytes in flight from server to client (key updates only).
    back: Vec<u8>,
}

impl Link {
    fn new(provider: &CryptoProvider, suite: SupportedCipherSuite, size: usize) -> Self {
        let mut pair = Pair::connect(provider, provider, suite);
        // Anything the handshake left behind (session tickets and the like).
        pair.flush();
        pair.take_received(true);
        pair.take_received(false);
        // One write of `size` becomes ⌈size / 16 KiB⌉ records, each at most
        // 16 KiB + 5 header + 256 expansion.
        let records = size.div_ceil(16 * 1024).max(1);
        Self {
            pair,
            wire: Vec::with_capacity(size + records * (5 + 256)),
            sink: vec![0; 64 * 1024].into_boxed_slice(),
            back: Vec::new(),
        }
    }

    /// Client writes `data`; the server opens it all and drains the
    /// plaintext. Returns the number of plaintext bytes the server read.
    fn round(&mut self, data: &[u8]) -> usize {
        let client = &mut self.pair.client;
        let server = &mut self.pair.server;
        client.writer().write_all(data).unwrap();
        self.wire.clear();
        while client.wants_write() {
            client.write_tls(&mut self.wire).unwrap();
        }
        let mut got = 0;
        let mut rest = &self.wire[..];
        while !rest.is_empty() {
            server.read_tls(&mut rest).unwrap();
            let mut pending = server
                .process_new_packets()
                .unwrap()
                .plaintext_bytes_to_read();
            while pending > 0 {
                let n = server.reader().read(&mut self.sink).unwrap();
                assert!(n > 0, "server saw end of stream");
                pending -= n;
                got += n;
            }
        }
        // The server only writes if the client asked it to update its keys.
        if server.wants_write() {
            self.back.clear();
            while server.wants_write() {
                server.write_tls(&mut self.back).unwrap();
            }
            let mut rest = &self.back[..];
            while !rest.is_empty() {
                client.read_tls(&mut rest).unwrap();
                client.process_new_packets().unwrap();
            }
        }
        got
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
