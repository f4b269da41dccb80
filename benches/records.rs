//! Interleaved timing of AEAD records and of rustls links, shared by
//! `interleaved.rs` and the `report` binary: every implementation runs a
//! short burst in turn, round after round (the order rotating every round),
//! so each round's times are comparable; ratios are the median over rounds
//! of the ratio within each round.

use std::hint::black_box;
use std::time::Instant;

use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305, Hardening};

use crate::reference::Reference;

pub const NONCE: [u8; 12] = [7; 12];
/// A TLS 1.3 record header, as the AAD.
pub const AAD: [u8; 5] = [0x17, 3, 3, 0x40, 0x11];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Alg {
    Aes128,
    Aes256,
    ChaCha,
}

impl Alg {
    pub const ALL: [Alg; 3] = [Alg::Aes128, Alg::Aes256, Alg::ChaCha];

    pub fn name(self) -> &'static str {
        match self {
            Self::Aes128 => "aes128",
            Self::Aes256 => "aes256",
            Self::ChaCha => "chacha",
        }
    }

    /// A fixed key of the algorithm's length.
    pub fn key(self) -> Vec<u8> {
        vec![0x42; if self == Self::Aes128 { 16 } else { 32 }]
    }

    /// The backends this CPU runs for the algorithm, best first.
    pub fn backends(self) -> Vec<Backend> {
        match self {
            Self::Aes128 => Aes128Gcm::backends(),
            Self::Aes256 => Aes256Gcm::backends(),
            Self::ChaCha => ChaCha20Poly1305::backends(),
        }
    }
}

/// `n` bytes of `store` (at least `n + 63` long) for the timed buffer: at
/// malloc's address mod 64 (by the process's history) unless
/// `BUF_ALIGN=<0..63>` fixes it (long zmm seals depend on it).
///
/// # Panics
/// If `BUF_ALIGN` is not a number, or `store` is too short.
pub fn aligned(store: &mut [u8], n: usize) -> &mut [u8] {
    let off = std::env::var("BUF_ALIGN").map_or(0, |a| {
        let a = a.parse::<usize>().expect("BUF_ALIGN: 0 to 63") % 64;
        (a + 64 - store.as_ptr() as usize % 64) % 64
    });
    &mut store[off..off + n]
}

/// The arguments `ALG SIZE BACKEND [seal|open]` (seal if absent) of the
/// sweep benches (`address_sweep`, `layout_sweep`), the rest after them;
/// `--` flags dropped.
///
/// # Panics
/// With `usage` if one is missing or unknown.
pub fn sweep_args(usage: &str) -> (Alg, usize, Backend, bool, Vec<String>) {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let alg = Alg::ALL
        .into_iter()
        .find(|a| Some(a.name()) == args.first().map(String::as_str))
        .expect(usage);
    let len: usize = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let backend = Backend::ALL
        .iter()
        .copied()
        .find(|b| Some(b.name()) == args.get(2).map(String::as_str))
        .expect(usage);
    let open = match args.get(3).map(String::as_str) {
        None | Some("seal") => false,
        Some("open") => true,
        Some(_) => panic!("{usage}"),
    };
    (alg, len, backend, open, args.into_iter().skip(4).collect())
}

/// One implementation under test. An enum, not a trait object: every
/// implementation pays the same predictable match per call. (ring's key is
/// inline and large; boxing it would add an indirection only ring pays.)
#[allow(clippy::large_enum_variant)]
pub enum Imp {
    Aes128(Aes128Gcm),
    Aes256(Aes256Gcm),
    ChaCha(ChaCha20Poly1305),
    Reference(Reference),
}

impl Imp {
    /// Ours on `backend`.
    ///
    /// # Panics
    /// If this CPU does not run `backend`.
    pub fn ours(alg: Alg, key: &[u8], backend: Backend) -> Self {
        Self::hardened(alg, key, backend, Hardening::NONE)
    }

    /// Ours on `backend` with opt-in `hardening`.
    ///
    /// # Panics
    /// If this CPU does not run `backend`.
    pub fn hardened(alg: Alg, key: &[u8], backend: Backend, hardening: Hardening) -> Self {
        match alg {
            Alg::Aes128 => Self::Aes128(
                Aes128Gcm::with_hardening(key.try_into().unwrap(), backend, hardening).unwrap(),
            ),
            Alg::Aes256 => Self::Aes256(
                Aes256Gcm::with_hardening(key.try_into().unwrap(), backend, hardening).unwrap(),
            ),
            Alg::ChaCha => Self::ChaCha(
                ChaCha20Poly1305::with_hardening(key.try_into().unwrap(), backend, hardening)
                    .unwrap(),
            ),
        }
    }

    #[inline(always)]
    pub fn seal(&self, buf: &mut [u8]) -> [u8; 16] {
        let aad = black_box(&AAD);
        match self {
            Self::Aes128(k) => k.seal_in_place(&NONCE, aad, buf),
            Self::Aes256(k) => k.seal_in_place(&NONCE, aad, buf),
            Self::ChaCha(k) => k.seal_in_place(&NONCE, aad, buf),
            Self::Reference(k) => k.seal_in_place(&NONCE, aad, buf),
        }
    }

    #[inline(always)]
    pub fn open(&self, buf: &mut [u8], tag: &[u8; 16]) -> bool {
        let aad = black_box(&AAD);
        match self {
            Self::Aes128(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
            Self::Aes256(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
            Self::ChaCha(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
            Self::Reference(k) => k.open_in_place(&NONCE, aad, buf, tag).is_ok(),
        }
    }
}

/// Iterations per burst: enough for about `burst_us` microseconds of the
/// slowest implementation. Long bursts keep CPU frequency transitions
/// (AVX-512 licence changes when 512-bit and narrower code take turns) from
/// deciding a burst's time.
pub fn burst_iters(imps: &[(String, Imp)], n: usize, burst_us: f64) -> usize {
    let mut buf = vec![0u8; n];
    let mut slowest = 0f64;
    for (_, imp) in imps {
        let t = Instant::now();
        for _ in 0..20 {
            black_box(imp.seal(&mut buf));
        }
        slowest = slowest.max(t.elapsed().as_nanos() as f64 / 20.0);
    }
    ((burst_us * 1000.0 / slowest) as usize).max(5)
}

/// Opens timed without a copy between them. Under one nonce a seal and an
/// open are both a XOR with the same keystream, so each flips the buffer
/// between the plaintext and the ciphertext: an open of the ciphertext
/// (under its tag) leaves the plaintext, and an open of the plaintext,
/// under the tag that sealing the ciphertext gives, leaves the ciphertext.
/// A `Toggle` tracks which the buffer holds and opens it with that tag (a
/// copy restoring 16 KiB of ciphertext before each open was a tenth of the
/// open's time).
#[derive(Clone, Copy)]
pub struct Toggle {
    /// The ciphertext's tag, then the plaintext's as a ciphertext.
    tags: [[u8; 16]; 2],
    holds_sealed: bool,
}

impl Toggle {
    /// For a buffer holding `ciphertext`, which `imp` sealed under `tag`.
    ///
    /// # Panics
    /// If sealing the ciphertext does not give the plaintext back (a
    /// stream cipher always does).
    pub fn new(imp: &Imp, ciphertext: &[u8], tag: [u8; 16]) -> Self {
        let mut back = ciphertext.to_vec();
        let tag_back = imp.seal(&mut back);
        let mut pt = back.clone();
        assert!(
            imp.open(&mut pt, &tag_back) && pt == ciphertext,
            "the plaintext opens as a ciphertext"
        );
        Self {
            tags: [tag, tag_back],
            holds_sealed: true,
        }
    }

    /// Opens the buffer, whichever it holds; false if the tag does not match.
    #[inline(always)]
    pub fn open(&mut self, imp: &Imp, buf: &mut [u8]) -> bool {
        let ok = imp.open(buf, &self.tags[usize::from(!self.holds_sealed)]);
        self.holds_sealed = !self.holds_sealed;
        ok
    }

    /// After a seal of the buffer, which flips it.
    #[inline(always)]
    pub fn sealed(&mut self) {
        self.holds_sealed = !self.holds_sealed;
    }

    /// Whether the buffer holds the ciphertext (else the plaintext).
    pub fn holds_sealed(&self) -> bool {
        self.holds_sealed
    }
}

/// Times `n`-byte records (5-byte AAD, in place): checks that every
/// implementation seals like the first and opens, then runs `rounds` rounds;
/// in each, every implementation seals a burst of `iters` records in turn,
/// then every implementation opens a burst. Returns ns per record,
/// `[seal, open][imp][round]`. `tick` is called after every round.
/// Nothing but the seal or open is timed: opens go through a [`Toggle`].
///
/// # Panics
/// If an implementation seals differently from the first, fails to open,
/// or leaves the buffer other than the toggling predicts.
pub fn time_records(
    imps: &[(String, Imp)],
    n: usize,
    rounds: usize,
    iters: usize,
    mut tick: impl FnMut(),
) -> [Vec<Vec<f64>>; 2] {
    let pt: Vec<u8> = (0..n).map(|i| i as u8).collect();
    let mut sealed = pt.clone();
    let tag = imps[0].1.seal(&mut sealed);
    let mut toggle = Toggle::new(&imps[0].1, &sealed, tag);
    for (name, imp) in imps {
        let mut buf = pt.clone();
        assert_eq!(imp.seal(&mut buf), tag, "{name} seals like {}", imps[0].0);
        assert!(imp.open(&mut buf, &tag) && buf == pt, "{name} opens");
    }
    let mut times = [
        vec![Vec::with_capacity(rounds); imps.len()],
        vec![Vec::with_capacity(rounds); imps.len()],
    ];
    let mut store = vec![0u8; n + 64];
    let buf = aligned(&mut store, n);
    buf.copy_from_slice(&sealed);
    if std::env::var_os("BUF_ALIGN_SHOW").is_some() {
        eprintln!(
            "{n} B: buffer at {:#x} (mod 64: {})",
            buf.as_ptr() as usize,
            buf.as_ptr() as usize % 64
        );
    }
    let copy_in = std::env::var_os("SEAL_COPY").is_some();
    let mut scratch = vec![0u8; n];
    for round in 0..rounds {
        for (op, is_seal) in [(0, true), (1, false)] {
            for k in 0..imps.len() {
                let i = (k + round) % imps.len();
                let imp = &imps[i].1;
                let t = Instant::now();
                for _ in 0..iters {
                    if is_seal && copy_in {
                        scratch.copy_from_slice(black_box(&pt[..]));
                        black_box(imp.seal(&mut scratch));
                    } else if is_seal {
                        black_box(imp.seal(buf));
                        toggle.sealed();
                    } else {
                        assert!(toggle.open(imp, buf));
                    }
                }
                times[op][i].push(t.elapsed().as_nanos() as f64 / iters as f64);
            }
        }
        tick();
    }
    let expect = if toggle.holds_sealed() { &sealed } else { &pt };
    assert!(buf == &expect[..], "the bursts leave the buffer as tracked");
    times
}

/// Runs `f(imp)` `iters` times per burst for each of `n_imps`
/// implementations in turn, `rounds` rounds, the order rotating every
/// round; returns ns per call, `[imp][round]`. `tick` is called after every
/// round.
pub fn interleave(
    n_imps: usize,
    rounds: usize,
    iters: usize,
    mut f: impl FnMut(usize),
    mut tick: impl FnMut(),
) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::with_capacity(rounds); n_imps];
    for round in 0..rounds {
        for k in 0..n_imps {
            let i = (k + round) % n_imps;
            let t = Instant::now();
            for _ in 0..iters {
                f(i);
            }
            times[i].push(t.elapsed().as_nanos() as f64 / iters as f64);
        }
        tick();
    }
    times
}

/// The best (lowest) time.
pub fn best(t: &[f64]) -> f64 {
    t.iter().copied().fold(f64::MAX, f64::min)
}

/// Per round, the best of the references `refs` over `ours`, both timed
/// within the same round; the median of those ratios (above 1.00: ours is
/// faster).
pub fn median_ratio(times: &[Vec<f64>], refs: &[usize], ours: usize) -> f64 {
    let rounds = times[ours].len();
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|r| {
            let best_ref = refs.iter().map(|&i| times[i][r]).fold(f64::MAX, f64::min);
            best_ref / times[ours][r]
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[rounds / 2]
}
