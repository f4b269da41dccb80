//! QUIC packet protection per packet, interleaved (as `interleaved.rs`):
//! rustls-fusion against aws-lc-rs and ring through their `rustls::quic`
//! objects, called exactly as quinn calls them (seal, then header protection
//! with a 4-byte packet-number slice; header-protection removal, then open),
//! and against BoringSSL at the AEAD level (it has no rustls provider): its
//! `EVP_AEAD` seals the packet, the header-protection mask comes from
//! `AES_encrypt` (AES-ECB of the sample) or `CRYPTO_chacha_20` (counter and
//! nonce from the sample), applied as RFC 9001 §5.4 says. Then our
//! standalone API (`seal_packet`, `seal_batch`, batch header removal).
//!
//! ```text
//! taskset -c 1 cargo bench -p rustls-fusion-benches --bench quic
//! CPU_CLASS=avx2 taskset -c 1 cargo bench -p rustls-fusion-benches --bench quic
//! ```
//! A short header (1 + 8-byte connection id + 2-byte packet number) before
//! payloads of 40, 200, 1200, 1350 and 1452 bytes; ns per packet, each
//! implementation's best burst; ratio = the median over rounds of the best
//! reference's time over ours (above 1.00× is faster).
//! `SEAL_ALONE=1` adds a row per payload that seals without header
//! protection (our packet key through rustls's object, BoringSSL's AEAD
//! called directly): what the header-protection call adds to each.
//! `BASE=1` pins ours to `Base` for both AEADs (what a CPU without our
//! engines gets), adds a column that reads it against the base provider's
//! own QUIC keys (aws-lc-rs's, or ring's with the benches built
//! `--no-default-features --features ring-base`) and skips the standalone
//! API.

use std::hint::black_box;
use std::time::Instant;

use rustls::quic::DirectionalKeys;
use rustls::CipherSuite;
use rustls_fusion::aead::Backend;
use rustls_fusion::quic::{Cipher, InPacket, Opener, OutPacket, QuicError, Sealer};
use rustls_fusion_benches::quic_keys::keys;
use rustls_fusion_benches::reference::BoringAead;
use rustls_fusion_benches::{class_from_env, BASE_PROVIDER};

const ROUNDS: usize = 25;
const CID: usize = 8;
const PN_OFFSET: usize = 1 + CID;
const HEADER: usize = PN_OFFSET + 2;

fn short_header(pn: u64) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0] = 0x41; // short header, 2-byte packet number
    h[1..PN_OFFSET].copy_from_slice(&[0xc1; CID]);
    h[PN_OFFSET..].copy_from_slice(&(pn as u16).to_be_bytes());
    h
}

/// Seal, its header left unprotected.
#[inline(always)]
fn seal_only(k: &DirectionalKeys, pn: u64, packet: &mut [u8]) {
    let (header, rest) = packet.split_at_mut(HEADER);
    let (payload, tag_room) = rest.split_at_mut(rest.len() - 16);
    header.copy_from_slice(&short_header(pn));
    let tag = k
        .packet
        .encrypt_in_place(pn, header, payload)
        .expect("seal");
    tag_room.copy_from_slice(tag.as_ref());
}

/// Seal then protect the header, as quinn's `PartialEncode::finish` does.
#[inline(always)]
fn seal_protect(k: &DirectionalKeys, pn: u64, packet: &mut [u8]) {
    seal_only(k, pn, packet);
    let (head, sample) = packet.split_at_mut(PN_OFFSET + 4);
    let (first, rest) = head.split_at_mut(1);
    k.header
        .encrypt_in_place(&sample[..16], &mut first[0], &mut rest[PN_OFFSET - 1..])
        .expect("header protection");
}

/// Remove header protection then open, as quinn's receive path does.
#[inline(always)]
fn unprotect_open(k: &DirectionalKeys, pn: u64, packet: &mut [u8]) -> usize {
    let (head, sample) = packet.split_at_mut(PN_OFFSET + 4);
    let (first, rest) = head.split_at_mut(1);
    k.header
        .decrypt_in_place(&sample[..16], &mut first[0], &mut rest[PN_OFFSET - 1..])
        .expect("header removal");
    let (header, payload) = packet.split_at_mut(HEADER);
    k.packet
        .decrypt_in_place(pn, header, payload)
        .expect("open")
        .len()
}

/// BoringSSL's QUIC packet protection, assembled at the AEAD level: the
/// packet key as an `EVP_AEAD_CTX` and the header-protection key as an
/// `AES_KEY` or ChaCha20 key bytes.
struct BoringQuic {
    aead: BoringAead,
    iv: [u8; 12],
    hp: BoringHp,
}

// The AES key schedule inline, as the others hold theirs: boxing it would
// add an indirection only BoringSSL pays.
#[allow(clippy::large_enum_variant)]
enum BoringHp {
    Aes(boring_sys::AES_KEY),
    ChaCha([u8; 32]),
}

impl BoringQuic {
    fn new(cipher: Cipher, key: &[u8], iv: [u8; 12], hp: &[u8]) -> Self {
        let chacha = cipher == Cipher::ChaCha20Poly1305;
        let hp = if chacha {
            BoringHp::ChaCha(hp.try_into().expect("32-byte ChaCha20 key"))
        } else {
            let mut aes = boring_sys::AES_KEY::default();
            // SAFETY: `hp` holds `8 * hp.len()` bits of key; `aes` is a
            // writable AES_KEY.
            let rc = unsafe {
                boring_sys::AES_set_encrypt_key(hp.as_ptr(), 8 * hp.len() as u32, &mut aes)
            };
            assert_eq!(rc, 0, "BoringSSL accepts the header-protection key");
            BoringHp::Aes(aes)
        };
        Self {
            aead: BoringAead::new(chacha, key),
            iv,
            hp,
        }
    }

    /// Seals `packet`, its header left unprotected.
    #[inline(always)]
    fn seal(&self, pn: u64, packet: &mut [u8]) {
        let (header, rest) = packet.split_at_mut(HEADER);
        let (payload, tag_room) = rest.split_at_mut(rest.len() - 16);
        header.copy_from_slice(&short_header(pn));
        let tag = self.aead.seal_in_place(&self.nonce(pn), header, payload);
        tag_room.copy_from_slice(&tag);
    }

    #[inline(always)]
    fn nonce(&self, pn: u64) -> [u8; 12] {
        let mut nonce = self.iv;
        for (n, p) in nonce[4..].iter_mut().zip(pn.to_be_bytes()) {
            *n ^= p;
        }
        nonce
    }

    /// The 5-byte header-protection mask for `sample`.
    #[inline(always)]
    fn mask(&self, sample: &[u8; 16]) -> [u8; 5] {
        let mut mask = [0u8; 16];
        match &self.hp {
            // SAFETY: `sample` and `mask` are 16-byte blocks; the key is an
            // initialised AES_KEY.
            BoringHp::Aes(key) => unsafe {
                boring_sys::AES_encrypt(sample.as_ptr(), mask.as_mut_ptr(), key)
            },
            BoringHp::ChaCha(key) => {
                let counter = u32::from_le_bytes(sample[..4].try_into().unwrap());
                let m = mask.as_mut_ptr();
                // SAFETY: in == out (allowed), 5 bytes each; the key is 32
                // bytes and the nonce the sample's last 12.
                unsafe {
                    boring_sys::CRYPTO_chacha_20(
                        m,
                        m,
                        5,
                        key.as_ptr(),
                        sample[4..].as_ptr(),
                        counter,
                    )
                }
            }
        }
        mask[..5].try_into().unwrap()
    }

    /// XORs the mask into a short header's first byte and packet number.
    #[inline(always)]
    fn apply(&self, packet: &mut [u8], protect: bool) {
        let sample: [u8; 16] = packet[PN_OFFSET + 4..PN_OFFSET + 20].try_into().unwrap();
        let mask = self.mask(&sample);
        let pn_len = if protect {
            (packet[0] & 3) as usize + 1
        } else {
            ((packet[0] ^ mask[0]) & 3) as usize + 1
        };
        packet[0] ^= mask[0] & 0x1f;
        for (p, m) in packet[PN_OFFSET..PN_OFFSET + pn_len]
            .iter_mut()
            .zip(&mask[1..])
        {
            *p ^= m;
        }
    }
}

/// What a row times: a `rustls::quic` key pair, or BoringSSL's.
#[allow(clippy::large_enum_variant)]
enum QuicImp {
    Rustls(DirectionalKeys),
    Boring(BoringQuic),
}

impl QuicImp {
    #[inline(always)]
    fn seal_protect(&self, pn: u64, packet: &mut [u8]) {
        match self {
            Self::Rustls(k) => seal_protect(k, pn, packet),
            Self::Boring(k) => {
                k.seal(pn, packet);
                k.apply(packet, true);
            }
        }
    }

    /// The packet sealed, its header left unprotected.
    #[inline(always)]
    fn seal_only(&self, pn: u64, packet: &mut [u8]) {
        match self {
            Self::Rustls(k) => seal_only(k, pn, packet),
            Self::Boring(k) => k.seal(pn, packet),
        }
    }

    #[inline(always)]
    fn unprotect_open(&self, pn: u64, packet: &mut [u8]) -> usize {
        match self {
            Self::Rustls(k) => unprotect_open(k, pn, packet),
            Self::Boring(k) => {
                k.apply(packet, false);
                let (header, rest) = packet.split_at_mut(HEADER);
                let (payload, tag) = rest.split_at_mut(rest.len() - 16);
                k.aead
                    .open_in_place(&k.nonce(pn), header, payload, (&*tag).try_into().unwrap())
                    .expect("open");
                payload.len()
            }
        }
    }

    /// Header protection alone, as the rustls objects are called.
    #[inline(always)]
    fn protect_header(&self, sample: &[u8; 16], first: &mut u8, pn: &mut [u8; 4]) {
        match self {
            Self::Rustls(k) => k.header.encrypt_in_place(sample, first, pn).unwrap(),
            Self::Boring(k) => {
                let mask = k.mask(sample);
                let pn_len = (*first & 3) as usize + 1;
                *first ^= mask[0] & 0x1f;
                for (p, m) in pn[..pn_len].iter_mut().zip(&mask[1..]) {
                    *p ^= m;
                }
            }
        }
    }
}

/// BoringSSL's QUIC keys for `cipher`, with the fixed key bytes `standalone`
/// uses. Checked against our `Sealer` on the same bytes: the same packet.
fn boring_keys(cipher: Cipher) -> QuicImp {
    let (key, iv, hp) = (
        vec![0x44u8; cipher.key_len()],
        [0x55u8; 12],
        vec![0x33u8; cipher.key_len()],
    );
    let boring = QuicImp::Boring(BoringQuic::new(cipher, &key, iv, &hp));
    let ours = Sealer::new(cipher, &key, &iv, &hp).unwrap();
    let len = HEADER + 1200 + 16;
    let (mut a, mut b) = (vec![0xabu8; len], vec![0xabu8; len]);
    a[..HEADER].copy_from_slice(&short_header(77));
    ours.seal_packet(&mut a, PN_OFFSET, 77).unwrap();
    boring.seal_protect(77, &mut b);
    assert!(a == b, "BoringSSL's QUIC protection matches ours");
    assert_eq!(boring.unprotect_open(77, &mut b), 1200, "BoringSSL opens");
    assert!(b[HEADER..HEADER + 1200].iter().all(|&x| x == 0xab));
    boring
}

/// Runs `f(imp, iteration)` for each implementation in interleaved bursts;
/// returns each implementation's per-round ns per call.
fn interleave(n_imps: usize, iters: usize, mut f: impl FnMut(usize, u64)) -> Vec<Vec<f64>> {
    // Packet numbers only go up, across every call (a key seals each once).
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1 << 20);
    let start = NEXT.fetch_add(1 << 32, std::sync::atomic::Ordering::Relaxed);
    let mut times = vec![Vec::with_capacity(ROUNDS); n_imps];
    let mut counter = vec![start; n_imps];
    for round in 0..ROUNDS {
        for k in 0..n_imps {
            let i = (k + round) % n_imps;
            let t = Instant::now();
            for _ in 0..iters {
                counter[i] += 1;
                f(i, counter[i]);
            }
            times[i].push(t.elapsed().as_nanos() as f64 / iters as f64);
        }
    }
    times
}

fn best(t: &[f64]) -> f64 {
    t.iter().copied().fold(f64::MAX, f64::min)
}

/// Median over rounds of min(references `refs` in the round) / ours in the
/// round.
fn ratio(times: &[Vec<f64>], refs: &[usize], ours: usize) -> f64 {
    let mut r: Vec<f64> = (0..ROUNDS)
        .map(|k| refs.iter().map(|&i| times[i][k]).fold(f64::MAX, f64::min) / times[ours][k])
        .collect();
    r.sort_by(f64::total_cmp);
    r[ROUNDS / 2]
}

fn main() {
    let class = class_from_env();
    let on_base = std::env::var_os("BASE").is_some();
    let fusion = match class {
        _ if on_base => rustls_fusion::provider_with_backends(Backend::Base, Backend::Base)
            .expect("Base runs everywhere"),
        Some(c) => rustls_fusion::provider_with_backends(c.aes_backend(), c.chacha)
            .expect("class engines run here"),
        None => rustls_fusion::default_provider(),
    };
    let aws = rustls::crypto::aws_lc_rs::default_provider();
    let ring = rustls::crypto::ring::default_provider();
    if let Some(c) = class {
        println!("CPU class {}: {}", c.name, c.cpus);
    }
    println!(
        "ns per packet: the best of {ROUNDS} rounds of interleaved bursts; ratio: the median \
         over rounds of the best reference's time over ours. Short header ({HEADER} bytes)."
    );
    for (id, cipher) in [
        (CipherSuite::TLS13_AES_128_GCM_SHA256, Cipher::Aes128Gcm),
        (CipherSuite::TLS13_AES_256_GCM_SHA384, Cipher::Aes256Gcm),
        (
            CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
            Cipher::ChaCha20Poly1305,
        ),
    ] {
        let chacha = cipher == Cipher::ChaCha20Poly1305;
        let with_ring =
            on_base || class.is_none_or(|c| if chacha { c.ring_chacha } else { c.ring_aes });
        // BoringSSL is limited to every class by OPENSSL_ia32cap (lib.rs).
        let mut imps: Vec<(&str, QuicImp)> = vec![
            ("aws-lc-rs", QuicImp::Rustls(keys(&aws, id))),
            ("boringssl", boring_keys(cipher)),
        ];
        if with_ring {
            imps.push(("ring", QuicImp::Rustls(keys(&ring, id))));
        }
        let refs: Vec<usize> = (0..imps.len()).collect();
        imps.push(("fusion", QuicImp::Rustls(keys(&fusion, id))));
        let ours = imps.len() - 1;
        let base = on_base.then(|| {
            refs.iter()
                .copied()
                .find(|&i| imps[i].0 == BASE_PROVIDER)
                .expect("the base provider is a reference")
        });
        let r = Row {
            refs: &refs,
            ours,
            base,
        };
        println!("\n### {id:?}\n");
        print!("| payload | op |");
        for (name, _) in &imps {
            print!(" {name} |");
        }
        print!(" ratio |");
        if on_base {
            print!(" fusion / {BASE_PROVIDER} |");
        }
        println!(
            "\n|---|---|{}---|{}",
            "---|".repeat(imps.len()),
            if on_base { "---|" } else { "" }
        );
        for payload in [40usize, 200, 1200, 1350, 1452] {
            let len = HEADER + payload + 16;
            let iters = (2_000_000 / (len + 200)).max(50);
            // Seal + header protection.
            let mut bufs = vec![vec![0xabu8; len]; imps.len()];
            let t = interleave(imps.len(), iters, |i, pn| {
                imps[i].1.seal_protect(pn, &mut bufs[i]);
                black_box(&bufs[i]);
            });
            r.print(payload, "seal + protect header", &t);
            if std::env::var_os("SEAL_ALONE").is_some() {
                let t = interleave(imps.len(), iters, |i, pn| {
                    imps[i].1.seal_only(pn, &mut bufs[i]);
                    black_box(&bufs[i]);
                });
                r.print(payload, "seal alone", &t);
            }
            // Header removal + open (the packet restored before each).
            // Sealed by a fresh key object (a packet number is sealed once
            // per key), opened by the timed one: the same key bytes.
            let mut sealers: Vec<QuicImp> = vec![
                QuicImp::Rustls(keys(&aws, id)),
                // No packet-number guard: BoringSSL's keys seal it again.
                boring_keys(cipher),
            ];
            if with_ring {
                sealers.push(QuicImp::Rustls(keys(&ring, id)));
            }
            sealers.push(QuicImp::Rustls(keys(&fusion, id)));
            let sealed: Vec<Vec<u8>> = sealers
                .iter()
                .map(|k| {
                    let mut p = vec![0xabu8; len];
                    k.seal_protect(5, &mut p);
                    p
                })
                .collect();
            let mut bufs = sealed.clone();
            let t = interleave(imps.len(), iters, |i, _| {
                bufs[i].copy_from_slice(&sealed[i]);
                black_box(imps[i].1.unprotect_open(5, &mut bufs[i]));
            });
            r.print(payload, "remove header + open", &t);
        }
        // The header-protection call alone.
        let mut firsts = vec![0x41u8; imps.len()];
        let mut pns = vec![[0u8; 4]; imps.len()];
        let t = interleave(imps.len(), 200_000, |i, n| {
            let sample = [n as u8; 16];
            imps[i]
                .1
                .protect_header(black_box(&sample), &mut firsts[i], &mut pns[i]);
        });
        r.print(16, "header protection alone", &t);
        // Our standalone API runs our engines, not `Base`.
        if !on_base {
            standalone(cipher);
        }
    }
}

/// Which columns a table row reads: the references, ours, and (`BASE=1`)
/// the base provider's own keys.
struct Row<'a> {
    refs: &'a [usize],
    ours: usize,
    base: Option<usize>,
}

impl Row<'_> {
    fn print(&self, payload: usize, op: &str, t: &[Vec<f64>]) {
        print!("| {payload} | {op} |");
        for x in t {
            print!(" {:.1} |", best(x));
        }
        print!(" {:.2}× |", ratio(t, self.refs, self.ours));
        if let Some(b) = self.base {
            print!(" {:.2}× |", ratio(t, &[b], self.ours));
        }
        println!();
    }
}

/// Our standalone API: 10-packet `seal_batch` against 10 `seal_packet`
/// calls, and batched against single header removal (1350-byte payloads).
fn standalone(cipher: Cipher) {
    const BATCH: usize = 10;
    let key = vec![0x44u8; cipher.key_len()];
    let hp = vec![0x33u8; cipher.key_len()];
    let iv = [0x55u8; 12];
    let one = Sealer::new(cipher, &key, &iv, &hp).unwrap();
    // The same key through rustls's objects: seal then protect, per packet.
    let fusion = rustls_fusion::default_provider();
    let id = match cipher {
        Cipher::Aes128Gcm => CipherSuite::TLS13_AES_128_GCM_SHA256,
        Cipher::Aes256Gcm => CipherSuite::TLS13_AES_256_GCM_SHA384,
        Cipher::ChaCha20Poly1305 => CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    };
    let separate = keys(&fusion, id);
    let many = Sealer::new(cipher, &key, &iv, &hp).unwrap();
    let opener = Opener::new(cipher, &key, &iv, &hp).unwrap();
    let len = HEADER + 1350 + 16;
    let mut bufs = vec![vec![0xabu8; len]; BATCH];
    let mut pn = 1u64 << 20;
    // Times per packet: [10 × seal_packet, seal_batch(10), 10 × (seal, protect)].
    let t = interleave(3, 2_000, |i, _| {
        for b in bufs.iter_mut() {
            pn += 1;
            b[..HEADER].copy_from_slice(&short_header(pn));
        }
        let first = pn - BATCH as u64 + 1;
        if i == 0 {
            for (k, b) in bufs.iter_mut().enumerate() {
                one.seal_packet(b, PN_OFFSET, first + k as u64).unwrap();
            }
        } else if i == 2 {
            for (k, b) in bufs.iter_mut().enumerate() {
                seal_protect(&separate, first + k as u64, b);
            }
        } else {
            // An array, not a Vec: no allocation inside the timed loop.
            let mut it = bufs.iter_mut();
            let mut packets: [OutPacket<'_>; BATCH] = core::array::from_fn(|k| OutPacket {
                packet: it.next().expect("BATCH buffers"),
                pn_offset: PN_OFFSET,
                pn: first + k as u64,
            });
            many.seal_batch(&mut packets).unwrap();
        }
        black_box(&bufs);
    });
    let per = |x: f64| x / BATCH as f64;
    let vs_separate = ratio(&t, &[2], 1);
    let vs_packet = ratio(&t, &[0], 1);
    println!(
        "\nstandalone, 1350-byte payloads, ns per packet: 10 × (seal, protect header) through \
         rustls's objects {:.1}, 10 × seal_packet {:.1}, seal_batch(10) {:.1} \
         ({vs_separate:.2}× the separate calls, {vs_packet:.2}× seal_packet)",
        per(best(&t[2])),
        per(best(&t[0])),
        per(best(&t[1])),
    );
    // Header removal: 10 single calls against one batch of 10.
    let sealed = bufs.clone();
    let mut work = bufs.clone();
    let mut out = vec![Err(QuicError::PacketTooShort); BATCH];
    let t = interleave(2, 20_000, |i, _| {
        for (w, s) in work.iter_mut().zip(&sealed) {
            w[..HEADER].copy_from_slice(&s[..HEADER]);
        }
        if i == 0 {
            for w in work.iter_mut() {
                black_box(opener.unprotect_header(w, PN_OFFSET).unwrap());
            }
        } else {
            let mut it = work.iter_mut();
            let mut ins: [InPacket<'_>; BATCH] = core::array::from_fn(|_| InPacket {
                packet: it.next().expect("BATCH buffers"),
                pn_offset: PN_OFFSET,
            });
            opener.unprotect_headers(&mut ins, &mut out);
            black_box(&out);
        }
    });
    println!(
        "standalone header removal, ns per packet: single {:.1}, batch of 10 {:.1}",
        per(best(&t[0])),
        per(best(&t[1]))
    );
}
