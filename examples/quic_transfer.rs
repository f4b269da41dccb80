//! quinn on rustls-fusion over loopback: one connection, data both ways.
//!
//! ```text
//! cargo run --release --example quic_transfer -- [--suite aes128|aes256|chacha] [--mb N]
//!     [--key-updates N] [--no-gso] [--peer fusion|aws-lc-rs] [--compare]
//! ```
//!
//! The client runs rustls-fusion (installed as the process default
//! provider); the server runs rustls-fusion too, or rustls's aws-lc-rs
//! provider with `--peer aws-lc-rs`. It prints the negotiated suite, the
//! backend that sealed the records, the throughput, the process CPU time per
//! MB and the key updates done. `--compare` then runs the same transfer with
//! aws-lc-rs on both ends, for a ratio in the same run.

use std::process::ExitCode;

use rustls::crypto::aws_lc_rs;
use rustls::CipherSuite;
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, ChaCha20Poly1305};
use tls_tests::quinn_link::{run, Transfer};

const USAGE: &str = "usage: quic_transfer [--suite aes128|aes256|chacha] [--mb N] [--key-updates N] [--no-gso] [--peer fusion|aws-lc-rs] [--compare]";

fn main() -> ExitCode {
    let mut suite = CipherSuite::TLS13_AES_128_GCM_SHA256;
    let (mut mb, mut key_updates, mut gso, mut aws_peer, mut compare) =
        (100usize, 3usize, true, false, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--suite" => {
                suite = match args.next().as_deref() {
                    Some("aes128") => CipherSuite::TLS13_AES_128_GCM_SHA256,
                    Some("aes256") => CipherSuite::TLS13_AES_256_GCM_SHA384,
                    Some("chacha") => CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
                    _ => return usage(),
                }
            }
            "--mb" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => mb = n,
                _ => return usage(),
            },
            "--key-updates" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => key_updates = n,
                None => return usage(),
            },
            "--no-gso" => gso = false,
            "--peer" => match args.next().as_deref() {
                Some("fusion") => aws_peer = false,
                Some("aws-lc-rs") => aws_peer = true,
                _ => return usage(),
            },
            "--compare" => compare = true,
            _ => return usage(),
        }
    }
    rustls_fusion::default_provider()
        .install_default()
        .expect("no other provider installed yet");
    let fusion = rustls_fusion::default_provider();
    let aws = aws_lc_rs::default_provider();
    let backend = match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => Aes128Gcm::backends()[0],
        CipherSuite::TLS13_AES_256_GCM_SHA384 => Aes256Gcm::backends()[0],
        _ => ChaCha20Poly1305::backends()[0],
    };
    let mut runs = vec![(
        format!(
            "rustls-fusion ({backend}) → {}",
            if aws_peer {
                "aws-lc-rs"
            } else {
                "rustls-fusion"
            }
        ),
        fusion.clone(),
        if aws_peer { aws.clone() } else { fusion },
    )];
    if compare {
        runs.push(("aws-lc-rs → aws-lc-rs".into(), aws.clone(), aws));
    }
    println!(
        "suite {suite:?}, {mb} MB each way, GSO {}",
        if gso { "on" } else { "off" }
    );
    let mut first = None;
    for (name, client, server) in runs {
        let r = run(&Transfer {
            suite,
            client,
            server,
            bytes: mb << 20,
            key_updates,
            gso,
            corrupt: None,
        });
        let secs = r.elapsed.as_secs_f64();
        let rate = 2.0 * mb as f64 / secs;
        let cpu_per_mb = r.cpu.as_secs_f64() * 1e3 / (2 * mb) as f64;
        println!(
            "{name}: {rate:.0} MB/s ({:.2} s), process CPU {cpu_per_mb:.2} ms per MB, {} key updates, \
             {} client datagrams in {} sends",
            secs, r.key_updates, r.client_datagrams, r.client_ios
        );
        if let Some((rate0, cpu0)) = first {
            println!(
                "rustls-fusion against aws-lc-rs: {:.2}× the throughput, {:.2}× the CPU per MB",
                rate0 / rate,
                cpu0 / cpu_per_mb
            );
        }
        first.get_or_insert((rate, cpu_per_mb));
    }
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}
