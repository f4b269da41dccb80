//! Constant time, measured (dudect's method): on every backend this CPU
//! runs, AVX-512 and VAES engines included (which valgrind cannot run, so
//! `consttime.rs` cannot cover them), each operation is timed on two
//! classes of secret input, picked at random call by call, and Welch's t
//! compares the two time distributions (the slowest 10 % of the pooled
//! samples cropped). |t| above 10, again with ten times the samples, says
//! the classes run differently; the test fails where they differ by
//! `MIN_DIFF_NS` or more.
//!
//! - seal: plaintext all zeros against random plaintexts; a fixed key
//!   against random keys;
//! - open of a valid record: one fixed record against random ones;
//! - open of a forged record: the wrong tag byte first against last;
//! - QUIC header protection removal: one fixed packet against random
//!   packets (sample, first byte and packet number bits).
//!
//! Every input is made before the timer starts and only a pointer is
//! chosen per call: made inside the timed region, a one-byte store before
//! the engine's 16-byte load stalls store forwarding differently by
//! position and shows up as a difference of the method, not the engine.
//! A positive control, a byte-by-byte tag comparison that stops at the
//! first difference, must be flagged, or the test fails: the method sees
//! a difference of a few cycles at these sample counts.
//!
//! Run by `scripts/test.sh` in a release build with a short budget:
//! `cargo test --release -p rustls-fusion --features audit --test timing
//! -- --ignored --nocapture`. `TIMING_SAMPLES=<n>` sets the samples per
//! class and case (default 20,000), `TIMING_BACKENDS=<name>,…` picks
//! backends by name; `docs/security.md` has long runs.

use std::hint::black_box;
use std::sync::atomic::{fence, Ordering};
use std::time::Instant;

mod common;

use common::{Alg, Key, Rng, ALGS};
use rustls_fusion::aead::Backend;
use rustls_fusion::quic::{Cipher, Opener};

/// |t| at or above this says the classes differ.
const THRESHOLD: f64 = 10.0;

/// The test fails on a difference of the class means of at least this
/// many nanoseconds (about 10 cycles at 4 GHz; a mispredicted branch on a
/// secret costs 15–20, the control's early exit about 16). Smaller
/// differences with |t| above the threshold are printed, not failed: the
/// 2 KiB opens of the ChaCha20 AVX2/AVX-512 engines read 0.4–1.7 ns
/// slower for a repeated fixed record than for random ones, though
/// memcheck finds no branch or address depending on the ciphertext or
/// plaintext of `X86Avx2`'s open (docs/security.md).
const MIN_DIFF_NS: f64 = 2.5;

/// Welch's t between the two classes, after cropping the slowest 10 % of
/// the pooled samples (interrupts, migrations).
fn welch_t(a: &[u64], b: &[u64]) -> Measured {
    let mut pooled: Vec<u64> = a.iter().chain(b).copied().collect();
    pooled.sort_unstable();
    let cut = pooled[pooled.len() * 9 / 10];
    let stats = |x: &[u64]| {
        let kept: Vec<f64> = x.iter().filter(|&&v| v <= cut).map(|&v| v as f64).collect();
        let n = kept.len() as f64;
        let mean = kept.iter().sum::<f64>() / n;
        let var = kept.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (n, mean, var)
    };
    let (na, ma, va) = stats(a);
    let (nb, mb, vb) = stats(b);
    Measured {
        t: ((ma - mb) / (va / na + vb / nb).sqrt()).abs(),
        diff_ns: ma - mb,
    }
}

/// |t| between the classes, and the difference of their means (ns).
#[derive(Clone, Copy)]
struct Measured {
    t: f64,
    diff_ns: f64,
}

/// Times `run(state, class, i)` `samples` times per class, the class of
/// each call drawn at random (`i` counts calls of that class), and returns
/// |t| and the difference of the means. `prepare(state, class, i)` runs
/// before each call, outside the timed region.
fn measure<S>(
    samples: usize,
    rng: &mut Rng,
    state: &mut S,
    mut prepare: impl FnMut(&mut S, usize, usize),
    mut run: impl FnMut(&mut S, usize, usize),
) -> Measured {
    let mut times = [Vec::with_capacity(samples), Vec::with_capacity(samples)];
    // Warm-up: caches, branch predictors, the clock.
    for i in 0..1000 {
        prepare(state, i & 1, i);
        run(state, i & 1, i);
    }
    while times[0].len() < samples || times[1].len() < samples {
        let class = rng.below(2);
        if times[class].len() == samples {
            continue;
        }
        let i = times[class].len();
        prepare(state, class, i);
        // The preparation's stores drain before the timer starts.
        fence(Ordering::SeqCst);
        let start = Instant::now();
        run(state, class, i);
        let elapsed = start.elapsed();
        times[class].push(elapsed.as_nanos() as u64);
    }
    welch_t(&times[0], &times[1])
}

/// A case whose |t| reaches the threshold is measured again with ten times
/// the samples (up to a million; long runs repeat their own count), and
/// only that |t| counts: a real difference grows with the samples (|t| by
/// √10), while a burst of a shared VM's noise that happens to favour one
/// class is averaged away. `case(n)` measures `n` samples per class.
/// Returns the last measurement.
fn confirmed(samples: usize, mut case: impl FnMut(usize) -> Measured) -> Measured {
    let m = case(samples);
    if m.t < THRESHOLD {
        m
    } else {
        case((samples * 10).min(1_000_000).max(samples))
    }
}

/// Input pools per class: `POOL` entries each, chosen by call count.
const POOL: usize = 64;

/// Both classes' inputs in one buffer, interleaved (class A's entry `i`,
/// then class B's), each entry at a 64-byte boundary, so that the copy into
/// the working buffer before a call runs alike for both classes: with a
/// pool per class the pools' alignments differed from process to process
/// and showed as |t| up to 63 (a difference of about 1 ns, either sign) on
/// the 2 KiB opens.
struct Pool {
    buf: Vec<u8>,
    base: usize,
    stride: usize,
    len: usize,
}

impl Pool {
    /// `make(class, i)` gives entry `i` of `class` (`len` bytes).
    fn new(len: usize, mut make: impl FnMut(usize, usize) -> Vec<u8>) -> Self {
        let stride = len.div_ceil(64) * 64 + 64;
        let mut buf = vec![0u8; 2 * POOL * stride + 64];
        let base = buf.as_ptr().align_offset(64);
        for i in 0..POOL {
            for c in 0..2 {
                let at = base + (2 * i + c) * stride;
                buf[at..at + len].copy_from_slice(&make(c, i));
            }
        }
        Self {
            buf,
            base,
            stride,
            len,
        }
    }

    fn get(&self, class: usize, i: usize) -> &[u8] {
        let at = self.base + (2 * (i % POOL) + class) * self.stride;
        &self.buf[at..at + self.len]
    }
}

/// The AEAD cases of one algorithm and backend at one length: |t| each.
fn aead_cases(alg: Alg, backend: Backend, len: usize, samples: usize) -> Vec<(String, Measured)> {
    let key_len = alg.key_len();
    let mut rng = Rng::new((len as u64) << 8 ^ alg as u64);
    let nonce = [7u8; 12];
    let fixed_key = rng.bytes(key_len);
    let key = alg.key(&fixed_key, backend);
    let mut out = Vec::new();

    // Seal: zeros against random plaintexts (one key).
    let plain = Pool::new(len, |c, _| {
        if c == 0 {
            vec![0u8; len]
        } else {
            rng.bytes(len)
        }
    });
    let mut work = vec![0u8; len];
    let t = confirmed(samples, |n| {
        measure(
            n,
            &mut rng,
            &mut work,
            |w: &mut Vec<u8>, c, i| w.copy_from_slice(plain.get(c, i)),
            |w: &mut Vec<u8>, _, _| {
                black_box(key.seal_in_place(&nonce, b"hdr", black_box(w)));
            },
        )
    });
    out.push((format!("seal {len} B, plaintext"), t));

    // Seal: a fixed key against random keys. The key is rebuilt before
    // every call (outside the timed region) in the slot the last one left,
    // so both classes run at the same addresses: with one set of key
    // objects per class, the sets' addresses (cache sets, 4 KiB aliasing
    // with the buffer) differed and showed as |t| up to 19 on keys of equal
    // bytes.
    let key_bytes: [Vec<Vec<u8>>; 2] = [
        vec![fixed_key.clone(); POOL],
        (0..POOL).map(|_| rng.bytes(key_len)).collect(),
    ];
    let mut state = (vec![0u8; len], None::<Key>);
    let t = confirmed(samples, |n| {
        measure(
            n,
            &mut rng,
            &mut state,
            |(w, k), c, i| {
                *k = None;
                *k = Some(alg.key(&key_bytes[c][i % POOL], backend));
                w.copy_from_slice(plain.get(1, 0));
            },
            |(w, k), _, _| {
                let key = k.as_ref().expect("built in prepare");
                black_box(key.seal_in_place(&nonce, b"hdr", black_box(w)));
            },
        )
    });
    out.push((format!("seal {len} B, key"), t));

    // Open, accepted: one fixed record against random ones.
    let mut tags = [[[0u8; 16]; POOL]; 2];
    let fixed_plain = rng.bytes(len);
    let sealed = Pool::new(len, |c, i| {
        let mut b = if c == 0 {
            fixed_plain.clone()
        } else {
            plain.get(c, i).to_vec()
        };
        tags[c][i] = key.seal_in_place(&nonce, b"hdr", &mut b);
        b
    });
    let t = confirmed(samples, |n| {
        measure(
            n,
            &mut rng,
            &mut work,
            |w: &mut Vec<u8>, c, i| w.copy_from_slice(sealed.get(c, i)),
            |w: &mut Vec<u8>, c, i| {
                assert!(key
                    .open_in_place(&nonce, b"hdr", black_box(w), &tags[c][i % POOL])
                    .is_ok());
            },
        )
    });
    out.push((format!("open {len} B, accepted"), t));

    // Open, rejected: the wrong tag byte first against last.
    let (ct, tag) = (sealed.get(1, 0), &tags[1][0]);
    let forged = [0, 15].map(|pos| {
        let mut t = *tag;
        t[pos] ^= 1;
        t
    });
    let t = confirmed(samples, |n| {
        measure(
            n,
            &mut rng,
            &mut work,
            |w: &mut Vec<u8>, _, _| w.copy_from_slice(ct),
            |w: &mut Vec<u8>, c, _| {
                assert!(key
                    .open_in_place(&nonce, b"hdr", black_box(w), &forged[c])
                    .is_err());
            },
        )
    });
    out.push((format!("open {len} B, rejected (tag byte 0 / 15)"), t));
    out
}

/// QUIC header protection removal: one packet against random packets.
fn header_case(alg: Alg, backend: Backend, samples: usize) -> Measured {
    let mut rng = Rng::new(0x51ce_d00d);
    let key_len = alg.key_len();
    let cipher = match alg {
        Alg::Aes128Gcm => Cipher::Aes128Gcm,
        Alg::Aes256Gcm => Cipher::Aes256Gcm,
        Alg::ChaCha20Poly1305 => Cipher::ChaCha20Poly1305,
    };
    let iv = [9u8; 12];
    let Ok(opener) = Opener::with_backend(
        cipher,
        &rng.bytes(key_len),
        &iv,
        &rng.bytes(key_len),
        backend,
    ) else {
        return Measured {
            t: 0.0,
            diff_ns: 0.0,
        };
    };
    let len = 64;
    // Short-header packets (the form bit is public and fixed): random
    // protected bits, packet number and sample.
    let packet = |rng: &mut Rng| {
        let mut p = rng.bytes(len);
        p[0] = (p[0] & 0x3f) | 0x40;
        p
    };
    let fixed = packet(&mut rng);
    let packets = Pool::new(len, |c, _| {
        if c == 0 {
            fixed.clone()
        } else {
            packet(&mut rng)
        }
    });
    let mut work = vec![0u8; len];
    confirmed(samples, |n| {
        measure(
            n,
            &mut rng,
            &mut work,
            |w: &mut Vec<u8>, c, i| w.copy_from_slice(packets.get(c, i)),
            |w: &mut Vec<u8>, _, _| {
                let _ = black_box(opener.unprotect_header(black_box(w), 9));
            },
        )
    })
}

/// The positive control: a tag comparison that stops at the first
/// differing byte, with the difference at byte 0 against byte 15.
fn control(samples: usize) -> Measured {
    #[inline(never)]
    fn leaky_eq(a: &[u8; 16], b: &[u8; 16]) -> bool {
        // Byte by byte (`black_box` keeps the compiler from making it one
        // 16-byte comparison, which would not leak).
        for i in 0..16 {
            if black_box(a[i]) != black_box(b[i]) {
                return false;
            }
        }
        true
    }
    let mut rng = Rng::new(0x00c0_ffee);
    let tag: [u8; 16] = rng.bytes(16).try_into().unwrap();
    let forged = [0, 15].map(|pos| {
        let mut t = tag;
        t[pos] ^= 1;
        t
    });
    measure(
        samples,
        &mut rng,
        &mut (),
        |_, _, _| {},
        |_, c, _| {
            black_box(leaky_eq(black_box(&tag), black_box(&forged[c])));
        },
    )
}

/// Prints one row and notes it if flagged.
fn report(flagged: &mut Vec<String>, alg: &str, backend: Backend, case: &str, m: Measured) {
    println!(
        "| {alg} | {backend} | {case} | {:.1} | {:+.3} |",
        m.t, m.diff_ns
    );
    if m.t >= THRESHOLD && m.diff_ns.abs() >= MIN_DIFF_NS {
        flagged.push(format!(
            "{alg} on {backend}: {case}: |t| = {:.1}, {:+.2} ns",
            m.t, m.diff_ns
        ));
    }
}

#[test]
#[ignore = "timing: run in a release build by scripts/test.sh"]
fn secret_inputs_do_not_change_the_time() {
    let samples: usize = std::env::var("TIMING_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let c = control(samples);
    println!(
        "control (early-exit tag comparison): |t| = {:.1}, difference {:.2} ns",
        c.t, c.diff_ns
    );
    assert!(
        c.t >= THRESHOLD && c.diff_ns.abs() >= MIN_DIFF_NS,
        "the positive control was not flagged (|t| = {:.1}): the method cannot see a difference here",
        c.t
    );
    let mut flagged = Vec::new();
    println!("| algorithm | backend | case | abs(t) | difference (ns) |\n|---|---|---|---|---|");
    // `TIMING_BACKENDS=a,b`: only the backends with those names.
    let only = std::env::var("TIMING_BACKENDS").ok();
    let wanted = |b: Backend| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|n| n == b.name()))
    };
    for alg in ALGS {
        let name = match alg {
            Alg::Aes128Gcm => "AES-128-GCM",
            Alg::Aes256Gcm => "AES-256-GCM",
            Alg::ChaCha20Poly1305 => "ChaCha20-Poly1305",
        };
        for backend in alg.backends().into_iter().filter(|&b| wanted(b)) {
            // 64 B: the short paths; 2 KiB: the batch loops.
            for len in [64, 2048] {
                for (case, m) in aead_cases(alg, backend, len, samples) {
                    report(&mut flagged, name, backend, &case, m);
                }
            }
            let m = header_case(alg, backend, samples);
            report(&mut flagged, name, backend, "QUIC header protection", m);
        }
    }
    assert!(
        flagged.is_empty(),
        "secret-dependent timing:\n{}",
        flagged.join("\n")
    );
}
