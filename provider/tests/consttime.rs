//! Constant time, checked by valgrind's memcheck (`scripts/consttime.sh`):
//! keys and plaintext are marked as undefined memory before key setup,
//! seal and open, on every backend this (virtual) CPU lists, for every
//! length class the engines treat differently; memcheck then reports any
//! branch or memory address that depends on them. Only an open's
//! accept/reject is declassified (inside the engine), and the test
//! declassifies outputs before it compares them.
//!
//! QUIC: with the packet and header-protection keys secret, sealing a
//! packet, removing its header protection (the packet-number length comes
//! from a masked bit) and opening it.
//!
//! Outside valgrind the requests are no-ops and this is an ordinary test
//! (built only with feature `audit`). `scripts/consttime.sh` sets
//! `CONSTTIME_UNDER_VALGRIND`, which makes the tests insist they run under
//! valgrind, and runs the ignored canary, which insists memcheck reports a
//! branch on a secret: the check can fail.
#![cfg(feature = "audit")]

use rustls_fusion::aead::audit::{declassify, error_count, running_on_valgrind, secret};
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};
use rustls_fusion::quic::{Cipher, InPacket, Opener, OutPacket, QuicError, Sealer};

fn insist_on_valgrind() {
    if std::env::var_os("CONSTTIME_UNDER_VALGRIND").is_some() {
        assert!(
            running_on_valgrind(),
            "CONSTTIME_UNDER_VALGRIND set, but not under valgrind"
        );
    }
}

/// Every length class: short path, block edges, batch edges of every
/// engine, head/tail splits, a TLS record.
const LENGTHS: [usize; 24] = [
    0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 191, 255, 256, 448, 449, 511, 512, 1023, 1024,
    1350, 2047, 4103, 16384,
];

fn check<K>(
    name: &str,
    backend: Backend,
    key: &mut [u8],
    make: impl Fn(&[u8]) -> K,
    seal: impl Fn(&K, &[u8; 12], &[u8], &mut [u8]) -> [u8; 16],
    open: impl Fn(&K, &[u8; 12], &[u8], &mut [u8], &[u8; 16]) -> bool,
) {
    secret(key);
    let k = make(key);
    let nonce = [3u8; 12];
    let aad = [0x17, 3, 3, 0x40, 0x11];
    for &len in &LENGTHS {
        let pt: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
        let mut buf = pt.clone();
        secret(&mut buf);
        let mut tag = seal(&k, &nonce, &aad, &mut buf);
        // The ciphertext and tag go on the wire: public from here.
        declassify(&mut buf);
        declassify(&mut tag);
        let mut opened = buf.clone();
        // The ciphertext too, though public: an open must not branch on it
        // either (it carries the plaintext's value through the keystream).
        secret(&mut opened);
        assert!(
            open(&k, &nonce, &aad, &mut opened, &tag),
            "{name} {backend} {len}: open"
        );
        declassify(&mut opened);
        assert_eq!(opened, pt, "{name} {backend} {len}");
        // A forged tag: rejected, with the buffer zeroed.
        tag[0] ^= 1;
        let mut forged = buf.clone();
        assert!(
            !open(&k, &nonce, &aad, &mut forged, &tag),
            "{name} {backend} {len}: forged"
        );
        declassify(&mut forged);
        assert!(forged.iter().all(|&b| b == 0));
    }
    println!(
        "{name}: constant time on {backend}, {} lengths",
        LENGTHS.len()
    );
}

#[test]
fn seal_and_open_are_constant_time() {
    insist_on_valgrind();
    for b in Aes128Gcm::backends() {
        check(
            "AES-128-GCM",
            b,
            &mut [0x42; 16],
            |k| Aes128Gcm::with_backend(k.try_into().unwrap(), b).unwrap(),
            |k, n, a, buf| k.seal_in_place(n, a, buf),
            |k, n, a, buf, t| k.open_in_place(n, a, buf, t).is_ok(),
        );
    }
    for b in Aes256Gcm::backends() {
        check(
            "AES-256-GCM",
            b,
            &mut [0x42; 32],
            |k| Aes256Gcm::with_backend(k.try_into().unwrap(), b).unwrap(),
            |k, n, a, buf| k.seal_in_place(n, a, buf),
            |k, n, a, buf, t| k.open_in_place(n, a, buf, t).is_ok(),
        );
    }
    for b in ChaCha20Poly1305::backends() {
        check(
            "ChaCha20-Poly1305",
            b,
            &mut [0x42; 32],
            |k| ChaCha20Poly1305::with_backend(k.try_into().unwrap(), b).unwrap(),
            |k, n, a, buf| k.seal_in_place(n, a, buf),
            |k, n, a, buf, t| k.open_in_place(n, a, buf, t).is_ok(),
        );
    }
}

/// `v`, declassified.
fn public(v: usize) -> usize {
    let mut bytes = v.to_ne_bytes();
    declassify(&mut bytes);
    usize::from_ne_bytes(bytes)
}

#[test]
fn quic_packets_are_constant_time() {
    insist_on_valgrind();
    let ciphers = [
        (Cipher::Aes128Gcm, 16, Aes128Gcm::backends()),
        (Cipher::Aes256Gcm, 32, Aes256Gcm::backends()),
        (Cipher::ChaCha20Poly1305, 32, ChaCha20Poly1305::backends()),
    ];
    for (cipher, key_len, backends) in ciphers {
        for backend in backends {
            let mut key = vec![0x42u8; key_len];
            let mut hp = vec![0x24u8; key_len];
            // The IV stays public here: the packet-number guard branches on
            // nonce XOR IV, the packet number, which the header carries.
            let iv = [7u8; 12];
            secret(&mut key);
            secret(&mut hp);
            let sealer = Sealer::with_backend(cipher, &key, &iv, &hp, backend).unwrap();
            let opener = Opener::with_backend(cipher, &key, &iv, &hp, backend).unwrap();
            // Short headers with every packet-number length, payloads from
            // the shortest that holds a sample to past a batch.
            for (i, payload_len) in [4usize, 20, 100, 1200].into_iter().enumerate() {
                for pn_len in 1..=4usize {
                    let pn = (i * 4 + pn_len) as u64;
                    let pn_offset = 9;
                    let mut packet = vec![0u8; pn_offset + pn_len + payload_len + 16];
                    packet[0] = 0x40 | (pn_len as u8 - 1);
                    packet[1..pn_offset].fill(0xcc);
                    for (j, b) in packet[pn_offset..pn_offset + pn_len].iter_mut().enumerate() {
                        *b = (pn >> (8 * (pn_len - 1 - j))) as u8;
                    }
                    let payload = pn_offset + pn_len..pn_offset + pn_len + payload_len;
                    packet[payload.clone()].fill(0x5a);
                    secret(&mut packet[payload.clone()]);
                    sealer.seal_packet(&mut packet, pn_offset, pn).unwrap();
                    // On the wire: public.
                    declassify(&mut packet);
                    let info = opener.unprotect_header(&mut packet, pn_offset).unwrap();
                    // The stack reads these next (packet-number recovery):
                    // public once unmasked, never branched on before.
                    let (got_len, header_len) = (public(info.pn_len), public(info.header_len));
                    declassify(&mut packet[..pn_offset + 4]);
                    assert_eq!(got_len, pn_len, "{cipher:?} {backend}");
                    let plain = opener.open_packet(&mut packet, header_len, pn).unwrap();
                    declassify(plain);
                    assert!(plain.iter().all(|&b| b == 0x5a), "{cipher:?} {backend}");
                }
            }
            // A GSO batch, sealed together, and batch header removal.
            let mut packets: Vec<Vec<u8>> = (0..20)
                .map(|i| {
                    let mut p = vec![0x5au8; 9 + 4 + 40 + i * 7 + 16];
                    p[0] = 0x43;
                    p[1..9].fill(0xcc);
                    secret(&mut p[13..]);
                    p
                })
                .collect();
            let first = sealer.next_packet_number();
            let mut out: Vec<OutPacket<'_>> = packets
                .iter_mut()
                .enumerate()
                .map(|(i, p)| {
                    let pn = first + i as u64;
                    p[9..13].copy_from_slice(&(pn as u32).to_be_bytes());
                    OutPacket {
                        packet: p,
                        pn_offset: 9,
                        pn,
                    }
                })
                .collect();
            sealer.seal_batch(&mut out).unwrap();
            drop(out);
            packets.iter_mut().for_each(|p| declassify(p));
            let mut inp: Vec<InPacket<'_>> = packets
                .iter_mut()
                .map(|p| InPacket {
                    packet: p,
                    pn_offset: 9,
                })
                .collect();
            let mut infos = vec![Err(QuicError::PacketTooShort); inp.len()];
            opener.unprotect_headers(&mut inp, &mut infos);
            drop(inp);
            for (i, (p, info)) in packets.iter_mut().zip(infos).enumerate() {
                let header_len = public(info.unwrap().header_len);
                declassify(&mut p[..13]);
                assert_eq!(header_len, 13);
                let plain = opener.open_packet(p, header_len, first + i as u64).unwrap();
                declassify(plain);
                assert!(plain.iter().all(|&b| b == 0x5a), "{cipher:?} {backend}");
            }
            println!("QUIC {cipher:?}: constant time on {backend}");
        }
    }
}

/// The check can fail: a branch on a secret byte is reported. Run by
/// `scripts/consttime.sh` on its own (it leaves memcheck errors behind).
#[test]
#[ignore = "run under valgrind by scripts/consttime.sh"]
fn canary_branch_on_secret_is_reported() {
    assert!(
        running_on_valgrind(),
        "the canary means something only under valgrind"
    );
    let before = error_count();
    let mut byte = [core::hint::black_box(0x42u8)];
    secret(&mut byte);
    // A branch with a side effect the compiler cannot turn into a select.
    if core::hint::black_box(byte[0]) & 1 == 0 {
        println!("canary: even");
    }
    assert!(
        error_count() > before,
        "memcheck did not report a branch on a secret"
    );
    println!("canary: memcheck reported the branch on a secret");
}
