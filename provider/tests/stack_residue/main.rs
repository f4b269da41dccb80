//! No key material left behind on the stack: after key setup, seal, open
//! and a failed open, on every backend this CPU runs, the dead stack just
//! below the caller (where those calls' frames lay) is searched for the raw
//! key, every AES round key, the GHASH key H, E(K, J0), the Poly1305
//! one-time key, its powers and its accumulator after every block, every
//! intermediate ChaCha20 state, every keystream block and every plaintext
//! block. Each
//! operation runs at the bottom of a fresh thread, so anything found was
//! left by that operation. A canary checks that the probe sees what a
//! careless function leaves.
//!
//! Built only with feature `audit` (`cargo test --features audit`, part of
//! the test command).
#![cfg(feature = "audit")]

#[path = "../common/mod.rs"]
mod common;
mod names;
mod rustls_level;
mod secrets;

use std::collections::HashMap;

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use names::*;
use rustls_fusion::aead::audit::{dead_stack, object_bytes, stack_pointer};
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305, Hardening};
use secrets::*;

/// How much dead stack to search: far more than any of these calls uses.
const DEAD: usize = 64 * 1024;
/// Record lengths: the short path (321–448: the ymm split seal), block
/// edges, every engine's batch edges, the zmm engines' ymm-lane records
/// on Zen 4 (512, 1350; 1024 and 1152: the ymm split open) and their zmm
/// records around them (900: an open; 1900: phased on IFMA); elsewhere
/// (`Features::zmm_split` unset) the ymm-lane records end at 576 and
/// these lengths reach the zmm records (each CPU checks the routes its
/// keys take: the routing, like the fused ChaCha20 rounds and the lengths
/// from which the hybrid AES-GCM schedule takes its loop, is chosen per key
/// from the CPU), the ymm AES-GCM
/// engine's assembly-loop seals (3000), the ymm records whose tails take
/// three whole registers (224, 255, 383, 895: unfenced, one build spilled
/// round keys there; `Lanes::fence`), the xmm AES-128 seals of one
/// compiled batch (128, 192: below the assembly loop's 256 B), the zmm
/// engine's one-pass records of 1 to 7 registers (0–432; unscrubbed
/// under 128 bytes: 16, 100, 120 with 1–3 registers, then 192, 300, 350,
/// 400, 432 with 4–7), its masked passes of 8 registers (433, 480, 496)
/// and the half batch after them (500), the IFMA engine's records in
/// phases where that CPU takes them (1900 on Zen 4; 2000 and 3000
/// elsewhere, which Zen 4 stitches), a TLS record.
const LENGTHS: [usize; 31] = [
    0, 1, 16, 100, 120, 128, 192, 224, 255, 300, 321, 350, 383, 400, 432, 433, 448, 480, 496, 500,
    512, 895, 900, 1024, 1152, 1350, 1900, 2000, 3000, 4103, 16384,
];
/// Lengths sealed with a 70-byte AAD: past the short path, the record is
/// all tail (on zmm one right-aligned masked register, whose lanes below
/// the data hold the AES states of the counters before the first block).
const LONG_AAD_LENGTHS: [usize; 2] = [16, 40];

/// Runs `op` in a new thread, on stack zeroed first (the C library may
/// hand out a cached stack), then copies the dead stack below the frame
/// that called it.
fn residue<T: Send + 'static>(op: impl FnOnce() -> T + Send + 'static) -> (T, Vec<u8>) {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let mut dead = vec![0u8; DEAD];
            clear_below();
            let out = call(op);
            // SAFETY: this thread's stack is 1 MiB; `clear_below` and the
            // operation used well under that, and `dead` is 64 KiB.
            unsafe { dead_stack(&mut dead) };
            (out, dead)
        })
        .unwrap()
        .join()
        .unwrap()
}

/// As [`residue`], but what is returned is only the dead stack below
/// `op`'s own frame (`op` is given where to write its stack pointer, and
/// writes it first): the frames of what `op` called. The copies `op` makes
/// itself (a by-value argument built in its frame) are the caller's, not
/// the callee's, and are left out.
fn residue_of_calls<T: Send + 'static>(
    op: impl FnOnce(&mut usize) -> T + Send + 'static,
) -> (T, Vec<u8>) {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let mut dead = vec![0u8; DEAD];
            clear_below();
            let top = stack_pointer();
            let mut below = 0;
            let out = call(|| op(&mut below));
            // SAFETY: as in `residue`.
            unsafe { dead_stack(&mut dead) };
            let keep = DEAD - (top - below).min(DEAD);
            dead.truncate(keep);
            (out, dead)
        })
        .unwrap()
        .join()
        .unwrap()
}

/// Zeroes the stack below the caller, further than [`DEAD`].
#[inline(never)]
fn clear_below() {
    let mut zeros = [0u8; DEAD + 4096];
    std::hint::black_box(&mut zeros);
}

#[inline(never)]
fn call<T>(op: impl FnOnce() -> T) -> T {
    std::hint::black_box(op())
}

/// How deep below the caller `op` wrote: the deepest non-zero byte.
fn depth(dead: &[u8]) -> usize {
    dead.iter().position(|&b| b != 0).map_or(0, |i| DEAD - i)
}

/// What each backend is tested with: `Base` with its opt-in stack scrub
/// (without it, the base provider's code leaves what it leaves without
/// rustls-fusion), our engines as they always run.
fn hardening(b: Backend) -> Hardening {
    Hardening::NONE.scrub_base_stack(b == Backend::Base)
}

/// The engines under test, as one shape.
trait Engine: Send + Sync + Sized + 'static {
    const AES: bool;
    const KEY_LEN: usize;
    fn backends() -> Vec<Backend>;
    fn make(key: &[u8], b: Backend) -> Self;
    fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16];
    fn open(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool;
}

macro_rules! engine {
    ($t:ty, $aes:expr, $len:expr) => {
        impl Engine for $t {
            const AES: bool = $aes;
            const KEY_LEN: usize = $len;
            fn backends() -> Vec<Backend> {
                <$t>::backends()
            }
            fn make(key: &[u8], b: Backend) -> Self {
                <$t>::with_hardening(key.try_into().unwrap(), b, hardening(b)).unwrap()
            }
            fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
                self.seal_in_place(nonce, aad, buf)
            }
            fn open(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
                self.open_in_place(nonce, aad, buf, tag).is_ok()
            }
        }
    };
}
engine!(Aes128Gcm, true, 16);
engine!(Aes256Gcm, true, 32);
engine!(ChaCha20Poly1305, false, 32);

/// Key setup, then seal, open and a failed open at every length, each in
/// its own fresh thread; returns what was found, by phase.
fn check<E: Engine>(name: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for (bi, b) in E::backends().into_iter().enumerate() {
        let key = random_bytes(E::KEY_LEN, 0x5eed + bi as u64);
        let nonce: [u8; 12] = random_bytes(12, 0x4e0ce).try_into().unwrap();
        let tls_aad = [0x17, 3, 3, 0x40, 0x11];
        let long_aad: [u8; 80] = core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0x5a);
        // An array, not a Vec: freeing it after the call would run the
        // allocator's frames over the dead stack the call left (they spill
        // whatever their registers held; see the canary).
        let mut k = [0u8; 32];
        k[..key.len()].copy_from_slice(&key);
        let (engine, dead) = residue(move || E::make(&k[..E::KEY_LEN], b));
        let mut deepest = [depth(&dead), 0, 0];
        for f in key_secrets(E::AES, &key).found_in(&dead) {
            failures.push(format!("{name} {b} key setup: {f}"));
        }
        // The key object itself, which its owner moves freely, holds no
        // key material inline (padding and unused variant space included).
        for f in key_secrets(E::AES, &key).found_in_object(&object_bytes(&engine)) {
            failures.push(format!("{name} {b} key object: {f}"));
        }
        let engine = std::sync::Arc::new(engine);
        let runs = LENGTHS.map(|l| (l, 5)).into_iter();
        for (len, aad_len) in runs.chain(LONG_AAD_LENGTHS.map(|l| (l, 70))) {
            let mut aad_store = [0u8; 80];
            if aad_len == 5 {
                aad_store[..5].copy_from_slice(&tls_aad);
            } else {
                aad_store = long_aad;
            }
            let aad = &aad_store[..aad_len];
            let len_name = if aad_len == 5 {
                format!("{len}")
            } else {
                format!("{len} (AAD {aad_len})")
            };
            let pt = random_bytes(len, 0x9e37 + len as u64);
            let (e, p) = (engine.clone(), pt.clone());
            let ((ct, tag), dead) = residue(move || {
                let mut buf = p;
                let tag = e.seal(&nonce, &aad_store[..aad_len], &mut buf);
                (buf, tag)
            });
            let secrets = record_secrets(E::AES, &key, &nonce, aad, (&pt, &ct, &tag));
            deepest[1] = deepest[1].max(depth(&dead));
            for f in secrets.found_in(&dead) {
                failures.push(format!("{name} {b} seal {len_name}: {f}"));
            }
            let (e, c) = (engine.clone(), ct.clone());
            let (opened, dead) = residue(move || {
                let mut buf = c;
                assert!(e.open(&nonce, &aad_store[..aad_len], &mut buf, &tag));
                buf
            });
            assert_eq!(opened, pt, "{name} {b} {len_name}");
            deepest[2] = deepest[2].max(depth(&dead));
            for f in secrets.found_in(&dead) {
                failures.push(format!("{name} {b} open {len_name}: {f}"));
            }
            let (e, c) = (engine.clone(), ct.clone());
            let mut forged = tag;
            forged[15] ^= 0x80;
            // Nothing allocates or frees after the call under test: the
            // allocator's frames would run over its dead stack.
            let ((opened, buf), dead) = residue(move || {
                let mut buf = c;
                (
                    e.open(&nonce, &aad_store[..aad_len], &mut buf, &forged),
                    buf,
                )
            });
            assert!(
                !opened && buf.iter().all(|&x| x == 0),
                "{name} {b} {len_name}: forged tag"
            );
            deepest[2] = deepest[2].max(depth(&dead));
            for f in secrets.found_in(&dead) {
                failures.push(format!("{name} {b} failed open {len_name}: {f}"));
            }
        }
        println!(
            "{name}: dead stack searched on {b} (deepest write below the caller: key setup {} B, seal {} B, open {} B)",
            deepest[0], deepest[1], deepest[2]
        );
    }
    failures
}

#[test]
fn no_key_material_left_on_the_stack() {
    let mut failures = check::<Aes128Gcm>("AES-128-GCM");
    failures.extend(check::<Aes256Gcm>("AES-256-GCM"));
    failures.extend(check::<ChaCha20Poly1305>("ChaCha20-Poly1305"));
    assert_none_found(&failures);
}

/// QUIC packet payload lengths: a 40-byte packet (the short path, on zmm
/// the one-pass record: neither scrubbed, the header-protection block
/// after the tag), then a short packet, one past a half batch (the fused
/// pass that carries the header-protection block on ymm and xmm), common
/// datagram payloads (the fused pass on zmm, the tail pass on ymm) and one
/// on the ymm assembly loop.
const QUIC_LENGTHS: [usize; 6] = [40, 300, 400, 1200, 1350, 1600];

/// QUIC: key setup, sealing a packet (with header protection, in the same
/// call on AES-GCM), removing header protection and opening, for every
/// cipher and backend at each of `QUIC_LENGTHS`; searched for the packet
/// key, the header-protection key (with its AES round keys or broadcast
/// ChaCha20 words) and the packet's record secrets (every AES state or
/// ChaCha20 state and Poly1305 value, keystream, payload).
#[test]
fn no_quic_key_material_left_on_the_stack() {
    use rustls_fusion::quic::{Cipher, Opener, Sealer};
    let ciphers = [
        (Cipher::Aes128Gcm, 16, true, Aes128Gcm::backends()),
        (Cipher::Aes256Gcm, 32, true, Aes256Gcm::backends()),
        (
            Cipher::ChaCha20Poly1305,
            32,
            false,
            ChaCha20Poly1305::backends(),
        ),
    ];
    let mut failures = Vec::new();
    for (cipher, key_len, aes, backends) in ciphers {
        for (bi, b) in backends.into_iter().enumerate() {
            let key = random_bytes(key_len, 0xabc + bi as u64);
            let hp = random_bytes(key_len, 0xdef + bi as u64);
            let iv: [u8; 12] = random_bytes(12, 0x1f).try_into().unwrap();
            let mut key_and_hp = key_secrets(aes, &key);
            key_and_hp.extend(&key_secrets(aes, &hp).prefixed("hp "));
            // Arrays, not Vecs, as in `check`.
            let (mut k, mut h) = ([0u8; 32], [0u8; 32]);
            k[..key_len].copy_from_slice(&key);
            h[..key_len].copy_from_slice(&hp);
            let ((sealer, opener), dead) = residue(move || {
                let (k, h) = (&k[..key_len], &h[..key_len]);
                (
                    Sealer::with_hardening(cipher, k, &iv, h, Some(b), hardening(b)).unwrap(),
                    Opener::with_hardening(cipher, k, &iv, h, Some(b), hardening(b)).unwrap(),
                )
            });
            // The objects the caller moves freely hold no key inline.
            for (what, bytes) in [
                ("Sealer", object_bytes(&sealer)),
                ("Opener", object_bytes(&opener)),
            ] {
                for f in key_and_hp.found_in_object(&bytes) {
                    failures.push(format!("QUIC {cipher:?} {b} {what} object: {f}"));
                }
            }
            for f in key_and_hp.found_in(&dead) {
                failures.push(format!("QUIC {cipher:?} {b} key setup: {f}"));
            }
            let sealer = std::sync::Arc::new(sealer);
            let opener = std::sync::Arc::new(opener);
            for len in QUIC_LENGTHS {
                let pn = 7u64 + len as u64;
                let payload = random_bytes(len, 0x77 + len as u64);
                let mut packet = vec![0u8; 9 + 2 + len + 16];
                packet[0] = 0x41;
                packet[9..11].copy_from_slice(&(pn as u16).to_be_bytes());
                packet[11..11 + len].copy_from_slice(&payload);
                let header: Vec<u8> = packet[..11].to_vec();
                let s = sealer.clone();
                let (packet, dead_seal) = residue(move || {
                    let mut p = packet;
                    s.seal_packet(&mut p, 9, pn).unwrap();
                    p
                });
                // The packet's nonce (RFC 9001 §5.3) and its record secrets.
                let nonce = common::masked_nonce(&iv, pn);
                let tag: [u8; 16] = packet[11 + len..].try_into().unwrap();
                let mut secrets = record_secrets(
                    aes,
                    &key,
                    &nonce,
                    &header,
                    (&payload, &packet[11..11 + len], &tag),
                );
                secrets.extend(&key_and_hp);
                // The header-protection block of the packet's sample (RFC 9001
                // §5.4.2, at the packet number's offset + 4): every AES or
                // ChaCha20 state it passes through.
                let sample: [u8; 16] = packet[13..29].try_into().unwrap();
                header_block_states(&mut secrets, aes, &hp, &sample);
                let mut report = |phase: &str, dead: &[u8]| {
                    for f in secrets.found_in(dead) {
                        failures.push(format!("QUIC {cipher:?} {b} {phase} {len}: {f}"));
                    }
                };
                report("seal_packet", &dead_seal);
                let o = opener.clone();
                let ((packet, header_len), dead) = residue(move || {
                    let mut p = packet;
                    let info = o.unprotect_header(&mut p, 9).unwrap();
                    (p, info.header_len)
                });
                report("unprotect_header", &dead);
                let o = opener.clone();
                let ((p, range), dead) = residue(move || {
                    let mut p = packet;
                    let base = p.as_ptr() as usize;
                    let plain = o.open_packet(&mut p, header_len, pn).unwrap();
                    let start = plain.as_ptr() as usize - base;
                    let range = start..start + plain.len();
                    (p, range)
                });
                assert_eq!(p[range], payload[..], "QUIC {cipher:?} {b} {len}");
                report("open_packet", &dead);
            }
            println!("QUIC {cipher:?}: dead stack searched on {b}");
        }
    }
    assert_none_found(&failures);
}

fn assert_none_found(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} secrets left on the stack:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The probe sees what a careless function leaves: a copy of a key in a
/// local array that is never wiped.
#[test]
fn canary_a_key_copy_left_on_the_stack_is_found() {
    #[inline(never)]
    fn careless(key: &[u8]) -> u8 {
        let mut copy = [0u8; 32];
        copy.copy_from_slice(std::hint::black_box(key));
        std::hint::black_box(&mut copy);
        copy.iter().fold(0, |a, b| a ^ b)
    }
    let key = random_bytes(32, 77);
    // An array, not a Vec: freeing a Vec after `careless` returns would run
    // the allocator's frames over the dead copy (glibc's `free` on aarch64
    // reaches that deep).
    let k: [u8; 32] = key.clone().try_into().unwrap();
    let (_, dead) = residue(move || careless(&k));
    let mut s = Secrets::default();
    s.add(name!("key"), &key);
    assert!(!s.found_in(&dead).is_empty(), "the probe missed a key copy");
}
