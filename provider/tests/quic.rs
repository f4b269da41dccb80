//! QUIC packet and header protection: RFC 9001 Appendix A and RFC 9369
//! Appendix A through rustls's public `quic` API and through the standalone
//! API, on every backend this CPU runs; differential tests against rustls's
//! aws-lc-rs `quic::Algorithm`; the header-protection contract; the
//! packet-number guard (cases Q1–Q8 of docs/quic.md); the fused seal equals
//! the separate calls byte for byte.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{unhex, Rng};
use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::quic::{DirectionalKeys, Keys, Version};
use rustls::{CipherSuite, Side, Tls13CipherSuite};
use rustls_fusion::aead::{Aes128Gcm, Backend, ChaCha20Poly1305};
use rustls_fusion::nonce_guard::NonceError;
use rustls_fusion::quic::{
    Cipher, InPacket, Opener, OutPacket, PacketNumberGuard, QuicError, Sealer, MAX_PACKET_NUMBER,
};

fn vectors() -> HashMap<String, Vec<u8>> {
    include_str!("data/quic_vectors.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once(" = ").expect("name = hex");
            (k.to_owned(), unhex(v))
        })
        .collect()
}

/// Our TLS 1.3 suite `id` on every backend pair this CPU runs (a suite per
/// backend of its AEAD).
fn our_suites(id: CipherSuite) -> Vec<(Backend, &'static Tls13CipherSuite)> {
    let chacha = id == CipherSuite::TLS13_CHACHA20_POLY1305_SHA256;
    let backends = if chacha {
        ChaCha20Poly1305::backends()
    } else {
        Aes128Gcm::backends()
    };
    backends
        .into_iter()
        .map(|b| {
            let provider = if chacha {
                rustls_fusion::provider_with_backends(Backend::Base, b)
            } else {
                rustls_fusion::provider_with_backends(b, Backend::Base)
            }
            .expect("listed backends run");
            let suite = provider
                .cipher_suites
                .iter()
                .find(|s| s.suite() == id)
                .and_then(|s| s.tls13())
                .expect("suite offered");
            (b, suite)
        })
        .collect()
}

/// The reference: rustls's own provider for the base this build uses
/// (aws-lc-rs by default, ring with feature `ring` alone).
fn aws_lc_suite(id: CipherSuite) -> &'static Tls13CipherSuite {
    #[cfg(feature = "aws-lc-rs")]
    let reference = rustls::crypto::aws_lc_rs::default_provider();
    #[cfg(not(feature = "aws-lc-rs"))]
    let reference = rustls::crypto::ring::default_provider();
    reference
        .cipher_suites
        .iter()
        .find(|s| s.suite() == id)
        .and_then(|s| s.tls13())
        .expect("aws-lc-rs has the suite")
}

fn initial_keys(
    suite: &'static Tls13CipherSuite,
    version: Version,
    dcid: &[u8],
    side: Side,
) -> Keys {
    Keys::initial(
        version,
        suite,
        suite.quic.expect("QUIC-capable suite"),
        dcid,
        side,
    )
}

/// Protects a packet the way quinn does: seal, then header protection with
/// a 4-byte packet-number slice (or what is left of the packet).
fn protect(
    keys: &DirectionalKeys,
    header: &[u8],
    pn_offset: usize,
    pn: u64,
    payload: &[u8],
) -> Vec<u8> {
    let mut packet = [header, payload].concat();
    let (h, p) = packet.split_at_mut(header.len());
    let tag = keys.packet.encrypt_in_place(pn, h, p).expect("seal");
    packet.extend_from_slice(tag.as_ref());
    let (head, sample) = packet.split_at_mut(pn_offset + 4);
    let (first, rest) = head.split_at_mut(1);
    keys.header
        .encrypt_in_place(&sample[..16], &mut first[0], &mut rest[pn_offset - 1..])
        .expect("header protection");
    packet
}

/// Removes protection the way quinn does; returns the plaintext payload.
fn unprotect(
    keys: &DirectionalKeys,
    packet: &mut [u8],
    pn_offset: usize,
    pn: u64,
) -> Result<Vec<u8>, rustls::Error> {
    let (head, sample) = packet.split_at_mut(pn_offset + 4);
    let (first, rest) = head.split_at_mut(1);
    keys.header
        .decrypt_in_place(&sample[..16], &mut first[0], &mut rest[pn_offset - 1..])?;
    let header_len = pn_offset + usize::from(packet[0] & 3) + 1;
    let (h, p) = packet.split_at_mut(header_len);
    keys.packet.decrypt_in_place(pn, h, p).map(<[u8]>::to_vec)
}

#[test]
fn rfc9001_initial_packets_through_rustls() {
    let v = vectors();
    let mut a2_payload = v["a2_frames"].clone();
    a2_payload.resize(1162, 0);
    for (backend, suite) in our_suites(CipherSuite::TLS13_AES_128_GCM_SHA256) {
        let client = initial_keys(suite, Version::V1, &v["dcid"], Side::Client);
        let server = initial_keys(suite, Version::V1, &v["dcid"], Side::Server);
        let mut a2 = protect(&client.local, &v["a2_header"], 18, 2, &a2_payload);
        assert_eq!(a2, v["a2_packet"], "A.2 on {backend}");
        assert_eq!(
            unprotect(&server.remote, &mut a2, 18, 2).unwrap(),
            a2_payload,
            "{backend}"
        );
        let mut a3 = protect(&server.local, &v["a3_header"], 18, 1, &v["a3_payload"]);
        assert_eq!(a3, v["a3_packet"], "A.3 on {backend}");
        assert_eq!(
            unprotect(&client.remote, &mut a3, 18, 1).unwrap(),
            v["a3_payload"],
            "{backend}"
        );
        // RFC 9369 A.3: the same server Initial under QUIC v2.
        let server2 = initial_keys(suite, Version::V2, &v["dcid"], Side::Server);
        let client2 = initial_keys(suite, Version::V2, &v["dcid"], Side::Client);
        let mut v2 = protect(
            &server2.local,
            &v["v2_a3_header"],
            18,
            1,
            &v["v2_a3_payload"],
        );
        assert_eq!(v2, v["v2_a3_packet"], "RFC 9369 A.3 on {backend}");
        assert_eq!(
            unprotect(&client2.remote, &mut v2, 18, 1).unwrap(),
            v["v2_a3_payload"]
        );
    }
}

#[test]
fn chacha_short_header_through_rustls() {
    let v = vectors();
    for (backend, suite) in our_suites(CipherSuite::TLS13_CHACHA20_POLY1305_SHA256) {
        let alg = suite.quic.unwrap();
        for (key, iv, hp, want) in [
            ("a5_key", "a5_iv", "a5_hp", "a5_packet"),
            ("v2_a5_key", "v2_a5_iv", "v2_a5_hp", "v2_a5_packet"),
        ] {
            let keys = DirectionalKeys {
                header: alg.header_protection_key(AeadKey::from(
                    <[u8; 32]>::try_from(&v[hp][..]).unwrap(),
                )),
                packet: alg.packet_key(
                    AeadKey::from(<[u8; 32]>::try_from(&v[key][..]).unwrap()),
                    Iv::copy(&v[iv]),
                ),
            };
            let mut packet = protect(&keys, &v["a5_header"], 1, 654360564, &v["a5_payload"]);
            assert_eq!(packet, v[want], "{want} on {backend}");
            assert_eq!(
                unprotect(&keys, &mut packet, 1, 654360564).unwrap(),
                v["a5_payload"]
            );
        }
    }
}

/// Every backend the standalone API can be pinned to for `cipher`.
fn backends(cipher: Cipher) -> Vec<Backend> {
    match cipher {
        Cipher::ChaCha20Poly1305 => ChaCha20Poly1305::backends(),
        _ => Aes128Gcm::backends(),
    }
}

#[test]
fn vectors_through_the_standalone_api() {
    let v = vectors();
    let mut a2_payload = v["a2_frames"].clone();
    a2_payload.resize(1162, 0);
    // (cipher, key, iv, hp, header, payload, pn_offset, pn, packet)
    #[allow(clippy::type_complexity)]
    let cases: [(Cipher, &str, &str, &str, &str, Vec<u8>, usize, u64, &str); 4] = [
        (
            Cipher::Aes128Gcm,
            "a1_client_key",
            "a1_client_iv",
            "a1_client_hp",
            "a2_header",
            a2_payload,
            18,
            2,
            "a2_packet",
        ),
        (
            Cipher::Aes128Gcm,
            "a1_server_key",
            "a1_server_iv",
            "a1_server_hp",
            "a3_header",
            v["a3_payload"].clone(),
            18,
            1,
            "a3_packet",
        ),
        (
            Cipher::ChaCha20Poly1305,
            "a5_key",
            "a5_iv",
            "a5_hp",
            "a5_header",
            v["a5_payload"].clone(),
            1,
            654360564,
            "a5_packet",
        ),
        (
            Cipher::ChaCha20Poly1305,
            "v2_a5_key",
            "v2_a5_iv",
            "v2_a5_hp",
            "a5_header",
            v["a5_payload"].clone(),
            1,
            654360564,
            "v2_a5_packet",
        ),
    ];
    for (cipher, key, iv, hp, header, payload, pn_offset, pn, want) in cases {
        let iv: [u8; 12] = v[iv][..].try_into().unwrap();
        for backend in backends(cipher) {
            let sealer = Sealer::with_backend(cipher, &v[key], &iv, &v[hp], backend).unwrap();
            let opener = Opener::with_backend(cipher, &v[key], &iv, &v[hp], backend).unwrap();
            assert_eq!(sealer.backend(), backend);
            let mut packet = [&v[header][..], &payload, &[0; 16]].concat();
            sealer.seal_packet(&mut packet, pn_offset, pn).unwrap();
            assert_eq!(packet, v[want], "{want} on {backend}");
            // And as a batch of one.
            let sealer = Sealer::with_backend(cipher, &v[key], &iv, &v[hp], backend).unwrap();
            let mut again = [&v[header][..], &payload, &[0; 16]].concat();
            sealer
                .seal_batch(&mut [OutPacket {
                    packet: &mut again,
                    pn_offset,
                    pn,
                }])
                .unwrap();
            assert_eq!(again, v[want], "{want} batch on {backend}");
            let info = opener.unprotect_header(&mut packet, pn_offset).unwrap();
            assert_eq!(info.header_len, v[header].len());
            assert_eq!(
                u64::from(info.truncated_pn),
                pn & ((1 << (8 * info.pn_len)) - 1)
            );
            assert_eq!(
                opener
                    .open_packet(&mut packet, info.header_len, pn)
                    .unwrap(),
                &payload[..]
            );
        }
    }
}

/// A random header: short (first byte 0x40 | bits, a connection id of
/// 0..=20 bytes) or long (0xc0 | bits, version, ids, a token of up to 512
/// bytes, a length), with the packet number of `pn_len` bytes last.
fn random_header(rng: &mut Rng, pn: u64, pn_len: usize) -> (Vec<u8>, usize) {
    let long = rng.below(2) == 0;
    let mut h = Vec::new();
    if long {
        h.push(0xc0 | (rng.below(4) as u8) << 4 | (rng.below(4) as u8) << 2 | (pn_len as u8 - 1));
        h.extend_from_slice(&1u32.to_be_bytes());
        for _ in 0..2 {
            let n = rng.below(21);
            h.push(n as u8);
            h.extend(rng.bytes(n));
        }
        let token = if rng.below(4) == 0 {
            rng.below(513)
        } else {
            rng.below(8)
        };
        h.extend_from_slice(&(0x4000u16 | token as u16).to_be_bytes());
        h.extend(rng.bytes(token));
        h.extend_from_slice(&[0x44, 0x9e]);
    } else {
        h.push(0x40 | (rng.below(8) as u8) << 2 | (pn_len as u8 - 1));
        let n = rng.below(21);
        h.extend(rng.bytes(n));
    }
    let pn_offset = h.len();
    h.extend_from_slice(&pn.to_be_bytes()[8 - pn_len..]);
    (h, pn_offset)
}

#[test]
fn matches_aws_lc_rs_both_directions() {
    let mut rng = Rng::new(0x9001);
    for id in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_AES_256_GCM_SHA384,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    ] {
        let reference = aws_lc_suite(id);
        for (backend, ours) in our_suites(id) {
            let dcid = rng.bytes(8);
            let our_keys = initial_keys(ours, Version::V1, &dcid, Side::Client);
            let ref_keys = initial_keys(reference, Version::V1, &dcid, Side::Client);
            let our_peer = initial_keys(ours, Version::V1, &dcid, Side::Server);
            let ref_peer = initial_keys(reference, Version::V1, &dcid, Side::Server);
            let mut pn = 0u64;
            // Fixed sizes about the AES-GCM tail's paths (the short path,
            // a record of under one batch, the half batch, a masked tail
            // after whole batches) beside random ones.
            let fixed = [
                130, 300, 496, 497, 511, 513, 576, 800, 1200, 1350, 1452, 1500,
            ];
            let mut sizes: Vec<usize> = (0..=40).chain(fixed).collect();
            sizes.extend((0..40).map(|_| rng.below(1501)));
            sizes.extend([16_384, 65_527]);
            for (i, &len) in sizes.iter().enumerate() {
                pn = match i % 5 {
                    0 => pn + 1,
                    1 => pn + 1 + rng.below(1000) as u64,
                    _ => pn + 1,
                };
                if i == sizes.len() - 1 {
                    pn = MAX_PACKET_NUMBER;
                }
                let pn_len = 1 + rng.below(4);
                let (header, pn_offset) = random_header(&mut rng, pn, pn_len);
                // RFC 9001 §5.4.2: enough bytes after the packet number for the sample.
                let len = len.max(4 - pn_len);
                let payload = rng.bytes(len);
                let what = format!(
                    "{id:?} on {backend}, {len} B, pn {pn} on {pn_len}, header {}",
                    header.len()
                );
                let mine = protect(&our_keys.local, &header, pn_offset, pn, &payload);
                let theirs = protect(&ref_keys.local, &header, pn_offset, pn, &payload);
                assert_eq!(mine, theirs, "{what}");
                // Ours opens theirs and theirs opens ours.
                let mut a = theirs.clone();
                assert_eq!(
                    unprotect(&our_peer.remote, &mut a, pn_offset, pn).unwrap(),
                    payload,
                    "{what}"
                );
                let mut b = mine;
                assert_eq!(
                    unprotect(&ref_peer.remote, &mut b, pn_offset, pn).unwrap(),
                    payload,
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn failed_open_is_decrypt_error_and_zeroes_the_payload() {
    let v = vectors();
    for id in [
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    ] {
        for (backend, suite) in our_suites(id) {
            let client = initial_keys(suite, Version::V1, &v["dcid"], Side::Client);
            let server = initial_keys(suite, Version::V1, &v["dcid"], Side::Server);
            for (pn, flip) in [(2u64, 22usize), (3, 100), (4, 1183)] {
                let mut header = v["a2_header"].clone();
                header[21] = pn as u8;
                let mut packet = protect(&client.local, &header, 18, pn, &[7; 1162]);
                packet[flip] ^= 1;
                // The header as sent before protection is the AAD.
                let p = &mut packet[22..];
                let err = server
                    .remote
                    .packet
                    .decrypt_in_place(pn, &header, p)
                    .unwrap_err();
                assert_eq!(err, rustls::Error::DecryptError, "{backend}");
                assert!(p.iter().all(|&b| b == 0), "payload zeroed on {backend}");
            }
            let mut short = [1u8; 15];
            assert_eq!(
                server
                    .remote
                    .packet
                    .decrypt_in_place(2, &v["a2_header"], &mut short)
                    .unwrap_err(),
                rustls::Error::DecryptError
            );
        }
    }
}

#[test]
fn header_protection_contract() {
    let v = vectors();
    for (backend, suite) in our_suites(CipherSuite::TLS13_AES_128_GCM_SHA256)
        .into_iter()
        .chain(our_suites(CipherSuite::TLS13_CHACHA20_POLY1305_SHA256))
    {
        let keys = initial_keys(suite, Version::V1, &v["dcid"], Side::Client);
        let hp = &keys.local.header;
        assert_eq!(hp.sample_len(), 16);
        let sample = [0x5au8; 16];
        // A wrong sample length or a packet-number slice over 4 bytes: an
        // error, nothing changed.
        for bad in [&sample[..15], &[0u8; 17][..], &[][..]] {
            let (mut first, mut pn) = (0x43u8, [1u8, 2, 3, 4]);
            assert!(
                hp.encrypt_in_place(bad, &mut first, &mut pn).is_err(),
                "{backend}"
            );
            assert_eq!((first, pn), (0x43, [1, 2, 3, 4]));
        }
        let (mut first, mut pn5) = (0x43u8, [1u8, 2, 3, 4, 5]);
        assert!(hp.encrypt_in_place(&sample, &mut first, &mut pn5).is_err());
        assert!(hp.decrypt_in_place(&sample, &mut first, &mut pn5).is_err());
        assert_eq!((first, pn5), (0x43, [1, 2, 3, 4, 5]));
        // Every first byte: only the protected bits and pn_len bytes of a
        // 4-byte slice change, and removal restores them.
        // The mask, learnt from a short header with a 4-byte packet number.
        let mask = {
            let (mut f, mut p) = (0x03u8, [0u8; 4]);
            hp.encrypt_in_place(&sample, &mut f, &mut p).unwrap();
            (f ^ 0x03, p)
        };
        for first0 in 0..=255u8 {
            let (mut first, mut pn) = (first0, [0x11u8, 0x22, 0x33, 0x44]);
            hp.encrypt_in_place(&sample, &mut first, &mut pn).unwrap();
            let bits = if first0 & 0x80 != 0 { 0x0f } else { 0x1f };
            assert_eq!(first ^ first0, mask.0 & bits, "{backend} {first0:#x}");
            let pn_len = usize::from(first0 & 3) + 1;
            for i in 0..4 {
                let want = if i < pn_len {
                    [0x11, 0x22, 0x33, 0x44][i] ^ mask.1[i]
                } else {
                    [0x11, 0x22, 0x33, 0x44][i]
                };
                assert_eq!(pn[i], want, "{backend} first {first0:#x} byte {i}");
            }
            hp.decrypt_in_place(&sample, &mut first, &mut pn).unwrap();
            assert_eq!((first, pn), (first0, [0x11, 0x22, 0x33, 0x44]));
        }
    }
}

/// The guard cases of docs/quic.md.
#[test]
fn packet_number_guard_q1_to_q7() {
    let iv = [0x10u8; 12];
    let nonce = |path: u32, pn: u64| {
        let mut n = iv;
        for (b, p) in n
            .iter_mut()
            .zip(path.to_be_bytes().into_iter().chain(pn.to_be_bytes()))
        {
            *b ^= p;
        }
        n
    };
    // Q1: no start at zero.
    let g = PacketNumberGuard::new(&iv, 0);
    for pn in [409, 410, 500] {
        assert_eq!(g.check(&nonce(0, pn)), Ok(()));
    }
    // Q2: a repeat is refused and changes nothing.
    let g = PacketNumberGuard::new(&iv, 0);
    assert_eq!(g.check(&nonce(0, 5)), Ok(()));
    assert_eq!(g.check(&nonce(0, 5)), Err(NonceError::Repeated));
    assert_eq!(g.check(&nonce(0, 4)), Err(NonceError::Decreased));
    assert_eq!(g.next_packet_number(), 6);
    assert_eq!(g.check(&nonce(0, 6)), Ok(()));
    // Q3: the last allowed packet number, then exhaustion for good.
    let g = PacketNumberGuard::new(&iv, 0);
    assert_eq!(g.check(&nonce(0, (1 << 62) - 2)), Ok(()));
    assert_eq!(
        g.check(&nonce(0, (1 << 62) - 1)),
        Err(NonceError::Exhausted)
    );
    assert_eq!(g.check(&nonce(0, (1 << 62) - 2)), Err(NonceError::Repeated));
    assert_eq!(g.check(&nonce(0, 7)), Err(NonceError::Decreased));
    // Q4: u64::MAX is exhaustion, not a decrease.
    let g = PacketNumberGuard::new(&iv, 0);
    assert_eq!(g.check(&nonce(0, 9)), Ok(()));
    assert_eq!(g.check(&nonce(0, u64::MAX)), Err(NonceError::Exhausted));
    // Q5: batches.
    let g = PacketNumberGuard::new(&iv, 0);
    let batch = |pns: &[u64]| pns.iter().map(|&p| nonce(0, p)).collect::<Vec<_>>();
    assert_eq!(g.check_batch(batch(&[10, 12, 15])), Ok(()));
    assert_eq!(g.next_packet_number(), 16);
    assert_eq!(g.check_batch(batch(&[16, 16])), Err(NonceError::Repeated));
    assert_eq!(
        g.check_batch(batch(&[17, 1 << 62])),
        Err(NonceError::Exhausted)
    );
    assert_eq!(g.check_batch(batch(&[12, 20])), Err(NonceError::Decreased));
    assert_eq!(g.next_packet_number(), 16);
    assert_eq!(g.check_batch(batch(&[])), Ok(()));
    assert_eq!(g.check(&nonce(0, 16)), Ok(()));
    // The fixed field is checked on the exact nonce.
    let mut wrong = nonce(0, 20);
    wrong[0] ^= 1;
    assert_eq!(g.check(&wrong), Err(NonceError::FixedFieldMismatch));
    // Q7: paths have their own numbers; a path's nonce is not another's.
    let p0 = PacketNumberGuard::new(&iv, 0);
    let p1 = PacketNumberGuard::new(&iv, 1);
    assert_eq!(p0.check(&nonce(0, 3)), Ok(()));
    assert_eq!(p1.check(&nonce(1, 3)), Ok(()));
    assert_eq!(p1.check(&nonce(1, 3)), Err(NonceError::Repeated));
    assert_eq!(p1.check(&nonce(0, 4)), Err(NonceError::FixedFieldMismatch));
}

/// Q6 and Q7 through rustls's `PacketKey`: opens check no packet number
/// (reordered and replayed packets reach the AEAD); refused seals are
/// `EncryptError` and change nothing; multipath paths are separate.
#[test]
fn packet_key_guard_and_open_order() {
    let v = vectors();
    for (backend, suite) in our_suites(CipherSuite::TLS13_AES_128_GCM_SHA256) {
        let client = initial_keys(suite, Version::V1, &v["dcid"], Side::Client);
        let server = initial_keys(suite, Version::V1, &v["dcid"], Side::Server);
        let sealed: Vec<Vec<u8>> = [5u64, 6, 7]
            .iter()
            .map(|&pn| protect(&client.local, &[0x40, pn as u8], 1, pn, &[pn as u8; 30]))
            .collect();
        for pn in [7u64, 5, 6, 7] {
            let mut p = sealed[pn as usize - 5].clone();
            assert_eq!(
                unprotect(&server.remote, &mut p, 1, pn).unwrap(),
                [pn as u8; 30],
                "{backend}"
            );
        }
        let mut payload = [9u8; 20];
        assert_eq!(
            client
                .local
                .packet
                .encrypt_in_place(6, &[0x40, 6], &mut payload)
                .err(),
            Some(rustls::Error::EncryptError)
        );
        assert_eq!(payload, [9; 20], "a refused seal changes nothing");
        assert!(client
            .local
            .packet
            .encrypt_in_place(8, &[0x40, 8], &mut payload)
            .is_ok());
        // Multipath: path 2 starts its own numbers; path 0 is the plain key.
        let pk = &client.local.packet;
        assert!(pk
            .encrypt_in_place_for_path(2, 3, b"h", &mut [0; 4])
            .is_ok());
        assert!(pk
            .encrypt_in_place_for_path(2, 3, b"h", &mut [0; 4])
            .is_err());
        assert!(pk
            .encrypt_in_place_for_path(0, 8, b"h", &mut [0; 4])
            .is_err());
        assert!(pk
            .encrypt_in_place_for_path(0, 9, b"h", &mut [0; 4])
            .is_ok());
        let mut buf = [1u8; 4];
        let tag = pk
            .encrypt_in_place_for_path(3, 100, b"hdr", &mut buf)
            .unwrap();
        let mut sealed = [&buf[..], tag.as_ref()].concat();
        assert_eq!(
            server
                .remote
                .packet
                .decrypt_in_place_for_path(3, 100, b"hdr", &mut sealed)
                .unwrap(),
            [1; 4]
        );
        assert_eq!(pk.confidentiality_limit(), 1 << 23);
        assert_eq!(pk.integrity_limit(), 1 << 52);
    }
}

/// Q8: threads sealing on one key never get the same packet number twice,
/// and a refusal means a number at least as large was taken.
#[test]
fn packet_number_guard_q8_threads() {
    let v = vectors();
    let (_, suite) = our_suites(CipherSuite::TLS13_AES_128_GCM_SHA256).remove(0);
    let keys = Arc::new(initial_keys(suite, Version::V1, &v["dcid"], Side::Client));
    let next = Arc::new(AtomicUsize::new(0));
    let accepted: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let (keys, next) = (keys.clone(), next.clone());
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..2000u64 {
                        // Overlapping streams: every thread tries every number,
                        // some out of order.
                        let pn = if (i + t) % 7 == 0 {
                            i.saturating_sub(3)
                        } else {
                            i
                        };
                        if keys
                            .local
                            .packet
                            .encrypt_in_place(pn, b"h", &mut [0; 8])
                            .is_ok()
                        {
                            mine.push(pn);
                        }
                        next.fetch_add(1, Ordering::Relaxed);
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<u64> = accepted.iter().flatten().copied().collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "a packet number was accepted twice");
    for mine in &accepted {
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "each thread's accepted numbers increase"
        );
    }
    assert_eq!(next.load(Ordering::Relaxed), 8000);
}

/// The fused seal (and the batch) equal the separate seal + header
/// protection calls byte for byte: samples wholly in the ciphertext,
/// straddling the tag and wholly in the tag, every packet-number length,
/// around every engine's batch edges.
#[test]
fn fused_and_batch_equal_separate_calls() {
    let mut rng = Rng::new(0xf05e);
    for cipher in [
        Cipher::Aes128Gcm,
        Cipher::Aes256Gcm,
        Cipher::ChaCha20Poly1305,
    ] {
        for backend in backends(cipher) {
            let key = rng.bytes(cipher.key_len());
            let hp = rng.bytes(cipher.key_len());
            let iv: [u8; 12] = rng.array();
            let reference = Sealer::with_backend(cipher, &key, &iv, &hp, Backend::Base).unwrap();
            let fused = Sealer::with_backend(cipher, &key, &iv, &hp, backend).unwrap();
            let batched = Sealer::with_backend(cipher, &key, &iv, &hp, backend).unwrap();
            let opener = Opener::with_backend(cipher, &key, &iv, &hp, backend).unwrap();
            let mut lens: Vec<usize> = (0..=70).collect();
            lens.extend([
                127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 1200, 1350, 1452,
                1500,
            ]);
            let mut batch_store = Vec::new();
            let mut pn = 0u64;
            for &len in &lens {
                for pn_len in 1..=4 {
                    pn += 1 + rng.below(3) as u64;
                    let (header, pn_offset) = random_header(&mut rng, pn, pn_len);
                    let len = len.max(4 - pn_len);
                    let payload = rng.bytes(len);
                    let plain = [&header[..], &payload, &[0; 16]].concat();
                    let mut want = plain.clone();
                    reference.seal_packet(&mut want, pn_offset, pn).unwrap();
                    let mut got = plain.clone();
                    fused.seal_packet(&mut got, pn_offset, pn).unwrap();
                    assert_eq!(
                        got, want,
                        "{cipher:?} on {backend}: {len} B, pn_len {pn_len}"
                    );
                    batch_store.push((plain, pn_offset, pn, want));
                    let info = opener.unprotect_header(&mut got, pn_offset).unwrap();
                    assert_eq!(info.pn_len, pn_len);
                    assert_eq!(
                        opener.open_packet(&mut got, info.header_len, pn).unwrap(),
                        &payload[..]
                    );
                }
            }
            // The same packets in batches of 1 to 40.
            let mut i = 0;
            let mut size = 1;
            while i < batch_store.len() {
                let end = (i + size).min(batch_store.len());
                let mut bufs: Vec<Vec<u8>> =
                    batch_store[i..end].iter().map(|b| b.0.clone()).collect();
                let mut packets: Vec<OutPacket<'_>> = bufs
                    .iter_mut()
                    .zip(&batch_store[i..end])
                    .map(|(buf, b)| OutPacket {
                        packet: buf,
                        pn_offset: b.1,
                        pn: b.2,
                    })
                    .collect();
                batched.seal_batch(&mut packets).unwrap();
                for (buf, b) in bufs.iter().zip(&batch_store[i..end]) {
                    assert_eq!(buf, &b.3, "{cipher:?} batch of {size} on {backend}");
                }
                // Receive side, batched.
                let mut ins: Vec<InPacket<'_>> = bufs
                    .iter_mut()
                    .zip(&batch_store[i..end])
                    .map(|(buf, b)| InPacket {
                        packet: buf,
                        pn_offset: b.1,
                    })
                    .collect();
                let mut out = vec![Err(QuicError::PacketTooShort); ins.len()];
                opener.unprotect_headers(&mut ins, &mut out);
                for ((buf, b), info) in bufs.iter_mut().zip(&batch_store[i..end]).zip(&out) {
                    let info = info.unwrap();
                    assert_eq!(&buf[..info.header_len], &b.0[..info.header_len]);
                    let plain = opener.open_packet(buf, info.header_len, b.2).unwrap();
                    assert_eq!(plain, &b.0[info.header_len..b.0.len() - 16]);
                }
                i = end;
                size = size % 40 + 1;
            }
        }
    }
}

#[test]
fn standalone_refusals_change_nothing() {
    let key = [1u8; 16];
    let (iv, hp) = ([2u8; 12], [3u8; 16]);
    let sealer = Sealer::new(Cipher::Aes128Gcm, &key, &iv, &hp).unwrap();
    assert_eq!(
        Sealer::new(Cipher::Aes128Gcm, &[0; 32], &iv, &hp).unwrap_err(),
        QuicError::KeyLength
    );
    let fresh = |pn: u8| {
        let mut p = vec![0x41, 0, pn];
        p.extend([0xaa; 40]);
        p
    };
    let mut p = fresh(5);
    sealer.seal_packet(&mut p, 1, 5).unwrap();
    // Repeat, mismatching packet-number bytes, too short: nothing changes.
    let mut again = fresh(5);
    assert_eq!(
        sealer.seal_packet(&mut again, 1, 5),
        Err(QuicError::Nonce(NonceError::Repeated))
    );
    assert_eq!(again, fresh(5));
    let mut mismatch = fresh(7);
    assert_eq!(
        sealer.seal_packet(&mut mismatch, 1, 6),
        Err(QuicError::PacketNumberMismatch)
    );
    assert_eq!(mismatch, fresh(7));
    let mut short = vec![0x41, 0, 8, 1, 2];
    assert_eq!(
        sealer.seal_packet(&mut short, 1, 8),
        Err(QuicError::PacketTooShort)
    );
    assert_eq!(short, [0x41, 0, 8, 1, 2]);
    // A batch with a repeat inside is refused whole.
    let (mut a, mut b) = (fresh(9), fresh(9));
    let err = sealer
        .seal_batch(&mut [
            OutPacket {
                packet: &mut a,
                pn_offset: 1,
                pn: 9,
            },
            OutPacket {
                packet: &mut b,
                pn_offset: 1,
                pn: 9,
            },
        ])
        .unwrap_err();
    assert_eq!(err, QuicError::Nonce(NonceError::Repeated));
    assert_eq!((a, b), (fresh(9), fresh(9)));
    assert_eq!(sealer.next_packet_number(), 6);
    // Open: a flipped bit fails and zeroes payload and tag; a short sample
    // is refused untouched.
    let opener = Opener::new(Cipher::Aes128Gcm, &key, &iv, &hp).unwrap();
    let mut bad = p.clone();
    bad[30] ^= 1;
    let info = opener.unprotect_header(&mut bad, 1).unwrap();
    assert_eq!(
        opener.open_packet(&mut bad, info.header_len, 5),
        Err(QuicError::Authentication)
    );
    assert!(bad[info.header_len..].iter().all(|&b| b == 0));
    let mut tiny = vec![0x41, 0, 1, 2, 3];
    assert_eq!(
        opener.unprotect_header(&mut tiny, 1),
        Err(QuicError::PacketTooShort)
    );
    assert_eq!(tiny, [0x41, 0, 1, 2, 3]);
}

/// Offsets near `usize::MAX` (a stack may take them from a peer's length
/// fields) are refused with an error on every entry point, never a panic
/// or a wrapped sum, in debug and release builds alike.
#[test]
fn offsets_at_usize_max_are_refused() {
    let (key, iv, hp) = ([7u8; 32], [9u8; 12], [5u8; 32]);
    for cipher in [
        Cipher::Aes128Gcm,
        Cipher::Aes256Gcm,
        Cipher::ChaCha20Poly1305,
    ] {
        let (key, hp) = (&key[..cipher.key_len()], &hp[..cipher.key_len()]);
        for backend in backends(cipher) {
            let sealer = Sealer::with_backend(cipher, key, &iv, hp, backend).unwrap();
            let opener = Opener::with_backend(cipher, key, &iv, hp, backend).unwrap();
            for offset in [
                usize::MAX,
                usize::MAX - 1,
                usize::MAX - 3,
                usize::MAX - 4,
                usize::MAX - 7,
                usize::MAX - 15,
                usize::MAX - 19,
                usize::MAX - 20,
            ] {
                let mut packet = [0x43u8; 64];
                assert_eq!(
                    opener.unprotect_header(&mut packet, offset),
                    Err(QuicError::PacketTooShort),
                    "{cipher:?} {backend} unprotect_header at {offset:#x}"
                );
                assert_eq!(
                    opener.open_packet(&mut packet, offset, 0).map(|_| ()),
                    Err(QuicError::PacketTooShort),
                    "{cipher:?} {backend} open_packet at {offset:#x}"
                );
                assert_eq!(
                    sealer.seal_packet(&mut packet, offset, 0),
                    Err(QuicError::PacketTooShort),
                    "{cipher:?} {backend} seal_packet at {offset:#x}"
                );
                let mut outs = [OutPacket {
                    packet: &mut packet,
                    pn_offset: offset,
                    pn: 0,
                }];
                assert_eq!(
                    sealer.seal_batch(&mut outs),
                    Err(QuicError::PacketTooShort),
                    "{cipher:?} {backend} seal_batch at {offset:#x}"
                );
                let mut ins = [InPacket {
                    packet: &mut packet,
                    pn_offset: offset,
                }];
                let mut out = [Ok(rustls_fusion::quic::HeaderInfo {
                    pn_len: 0,
                    truncated_pn: 0,
                    header_len: 0,
                })];
                opener.unprotect_headers(&mut ins, &mut out);
                assert_eq!(
                    out[0],
                    Err(QuicError::PacketTooShort),
                    "{cipher:?} {backend}"
                );
            }
        }
    }
}

/// RFC 9001 §6.6's limits, opt-in on the standalone API: a sealer refuses
/// past its packet limit (a refusal changes nothing, the guard included),
/// an opener counts failures and refuses once its limit is reached.
#[test]
fn standalone_usage_limits() {
    assert_eq!(Cipher::Aes128Gcm.confidentiality_limit(), 1 << 23);
    assert_eq!(Cipher::ChaCha20Poly1305.integrity_limit(), 1 << 36);
    let (key, iv, hp) = ([1u8; 16], [2u8; 12], [3u8; 16]);
    for backend in backends(Cipher::Aes128Gcm) {
        let sealer = Sealer::with_backend(Cipher::Aes128Gcm, &key, &iv, &hp, backend)
            .unwrap()
            .limit_packets(3);
        let fresh = |pn: u8| {
            let mut p = vec![0x41, 0, pn];
            p.extend([0xaa; 40]);
            p
        };
        let mut sealed = Vec::new();
        for pn in 1..=2u8 {
            let mut p = fresh(pn);
            sealer.seal_packet(&mut p, 1, pn.into()).unwrap();
            sealed.push(p);
        }
        // Two more in a batch pass the limit: refused whole, nothing changes.
        let (mut a, mut b) = (fresh(3), fresh(4));
        let batch = sealer.seal_batch(&mut [
            OutPacket {
                packet: &mut a,
                pn_offset: 1,
                pn: 3,
            },
            OutPacket {
                packet: &mut b,
                pn_offset: 1,
                pn: 4,
            },
        ]);
        assert_eq!(batch, Err(QuicError::ConfidentialityLimit), "{backend}");
        assert_eq!((a, b), (fresh(3), fresh(4)));
        assert_eq!(
            (sealer.packets_sealed(), sealer.next_packet_number()),
            (2, 3)
        );
        let mut p = fresh(3);
        sealer.seal_packet(&mut p, 1, 3).unwrap();
        let mut over = fresh(4);
        assert_eq!(
            sealer.seal_packet(&mut over, 1, 4),
            Err(QuicError::ConfidentialityLimit)
        );
        assert_eq!((over, sealer.next_packet_number()), (fresh(4), 4));
        // A refusal by the guard gives its packet back to the limit.
        let two = Sealer::with_backend(Cipher::Aes128Gcm, &key, &iv, &hp, backend)
            .unwrap()
            .limit_packets(2);
        let mut q = fresh(1);
        two.seal_packet(&mut q, 1, 1).unwrap();
        let mut repeat = fresh(1);
        assert_eq!(
            two.seal_packet(&mut repeat, 1, 1),
            Err(QuicError::Nonce(NonceError::Repeated))
        );
        assert_eq!(two.packets_sealed(), 1);
        let mut q = fresh(2);
        two.seal_packet(&mut q, 1, 2).unwrap();
        assert_eq!(two.packets_sealed(), 2);

        let opener = Opener::with_backend(Cipher::Aes128Gcm, &key, &iv, &hp, backend)
            .unwrap()
            .limit_failures(2);
        for _ in 0..2 {
            let mut forged = sealed[0].clone();
            let n = forged.len();
            forged[n - 1] ^= 1;
            let h = opener.unprotect_header(&mut forged, 1).unwrap();
            assert_eq!(
                opener.open_packet(&mut forged, h.header_len, 1).map(|_| ()),
                Err(QuicError::Authentication)
            );
        }
        assert_eq!(opener.failed_opens(), 2);
        let mut good = sealed[1].clone();
        let h = opener.unprotect_header(&mut good, 1).unwrap();
        assert_eq!(
            opener.open_packet(&mut good, h.header_len, 2).map(|_| ()),
            Err(QuicError::IntegrityLimit),
            "{backend}"
        );
        assert!(
            good[h.header_len..].iter().all(|&x| x == 0),
            "nothing opened"
        );
        // Without a limit, failures are counted and opens go on.
        let counting = Opener::with_backend(Cipher::Aes128Gcm, &key, &iv, &hp, backend).unwrap();
        let mut good = sealed[1].clone();
        let h = counting.unprotect_header(&mut good, 1).unwrap();
        assert!(counting.open_packet(&mut good, h.header_len, 2).is_ok());
        assert_eq!(counting.failed_opens(), 0);
    }
}

/// `seal_packet`'s packet-number check (a fixed four-byte window masked
/// by the length): for every length 1–4, a change in any of the `pn_len`
/// bytes is refused, and bytes past them (the payload) and bytes of `pn`
/// above them (not on the wire) do not matter.
#[test]
fn packet_number_check_covers_exactly_pn_len_bytes() {
    let (key, iv, hp) = ([1u8; 16], [2u8; 12], [3u8; 16]);
    let pn: u64 = 0x0102_0304_0506_0708;
    for pn_len in 1..=4usize {
        let packet = |flip: Option<usize>| {
            let mut p = vec![0x40 | (pn_len as u8 - 1), 0];
            p.extend(&pn.to_be_bytes()[8 - pn_len..]);
            p.extend([0xaa; 40]);
            if let Some(i) = flip {
                p[2 + i] ^= 0x10;
            }
            p
        };
        let seal = |p: &mut Vec<u8>, pn: u64| {
            Sealer::new(Cipher::Aes128Gcm, &key, &iv, &hp)
                .unwrap()
                .seal_packet(p, 2, pn)
        };
        assert_eq!(seal(&mut packet(None), pn), Ok(()), "pn_len {pn_len}");
        for i in 0..pn_len {
            assert_eq!(
                seal(&mut packet(Some(i)), pn),
                Err(QuicError::PacketNumberMismatch),
                "pn_len {pn_len}, byte {i}"
            );
        }
        for i in pn_len..4 {
            assert_eq!(
                seal(&mut packet(Some(i)), pn),
                Ok(()),
                "pn_len {pn_len}, payload byte {i}"
            );
        }
        let above = pn ^ (1u64 << (8 * pn_len));
        assert_eq!(
            seal(&mut packet(None), above),
            Ok(()),
            "pn_len {pn_len}, higher pn bytes"
        );
    }
}
