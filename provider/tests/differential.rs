//! Differential tests against ring and aws-lc-rs (and RustCrypto up to 4200
//! bytes) on every backend: random
//! keys, nonces, AAD of 0–64 bytes and lengths from 0 to 20 000, sealed in
//! place and out of place from unaligned slices, and opened; tampering with
//! ciphertext, tag or AAD must fail and leave the buffer zeroed.

mod common;

use common::{Alg, Rng};

/// Lengths: everything up to 512 (the short path, one masked pass to 432
/// bytes, one batch of zmm), block-group edges, and random ones to 20 000.
fn lengths(rng: &mut Rng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=512).collect();
    for edge in [
        513, 1023, 1024, 1025, 1350, 1500, 4095, 4096, 4097, 8192, 16383, 16384, 16385, 16401,
        20000,
    ] {
        v.push(edge);
    }
    v.extend((0..120).map(|_| rng.below(20_001)));
    v
}

#[test]
fn matches_ring_and_aws_lc_rs() {
    let mut rng = Rng::new(0x5eed_0001);
    let lengths = lengths(&mut rng);
    for (alg, backend) in Alg::all_engines() {
        for &len in &lengths {
            let key_bytes = rng.bytes(alg.key_len());
            let key = alg.key(&key_bytes, backend);
            let nonce = rng.array();
            let aad = rng.bytes_between(0, 64);
            let pt = rng.bytes(len);
            let what = format!("{alg:?} on {backend}, len {len}, aad {}", aad.len());

            let expected = alg.ring_seal(&key_bytes, &nonce, &aad, &pt);
            assert_eq!(
                expected,
                alg.aws_lc_seal(&key_bytes, &nonce, &aad, &pt),
                "references disagree: {what}"
            );
            if len <= 4200 {
                assert_eq!(
                    expected,
                    alg.rustcrypto_seal(&key_bytes, &nonce, &aad, &pt),
                    "RustCrypto disagrees: {what}"
                );
            }
            assert_eq!(
                key.seal(&nonce, &aad, &pt),
                expected,
                "seal in place: {what}"
            );

            // Out of place, from and to slices at odd offsets.
            let (src_off, dst_off) = (rng.below(16), rng.below(16));
            let mut src = vec![0; src_off + len];
            src[src_off..].copy_from_slice(&pt);
            let mut dst = vec![0x5a; dst_off + len];
            let tag = key.seal_out_of_place(&nonce, &aad, &src[src_off..], &mut dst[dst_off..]);
            assert_eq!(
                [&dst[dst_off..], &tag[..]].concat(),
                expected,
                "seal out of place: {what}"
            );

            assert_eq!(
                key.open(&nonce, &aad, &expected).as_deref(),
                Some(&pt[..]),
                "open: {what}"
            );
        }
    }
}

#[test]
fn tampering_fails() {
    let mut rng = Rng::new(0x5eed_0002);
    for (alg, backend) in Alg::all_engines() {
        for len in [0, 1, 15, 16, 17, 64, 255, 1350, 4097, 16384] {
            let key_bytes = rng.bytes(alg.key_len());
            let key = alg.key(&key_bytes, backend);
            let nonce = rng.array();
            let aad = rng.bytes_between(1, 64);
            let sealed = alg.aws_lc_seal(&key_bytes, &nonce, &aad, &rng.bytes(len));
            let what = format!("{alg:?} on {backend}, len {len}");

            for _ in 0..8 {
                let mut bad = sealed.clone();
                let bit = rng.below(bad.len() * 8);
                bad[bit / 8] ^= 1 << (bit % 8);
                assert_eq!(
                    key.open(&nonce, &aad, &bad),
                    None,
                    "flipped bit {bit}: {what}"
                );
            }
            let mut bad_aad = aad.clone();
            bad_aad[rng.below(aad.len())] ^= 0x80;
            assert_eq!(
                key.open(&nonce, &bad_aad, &sealed),
                None,
                "tampered aad: {what}"
            );
            assert_eq!(
                key.open(&nonce, &aad[1..], &sealed),
                None,
                "truncated aad: {what}"
            );
            let mut bad_nonce = nonce;
            bad_nonce[rng.below(12)] ^= 4;
            assert_eq!(
                key.open(&bad_nonce, &aad, &sealed),
                None,
                "wrong nonce: {what}"
            );
        }
    }
}

/// Every AAD length at the edges of the zmm one-pass records (the lengths
/// where their register count changes, and 432 with 64 bytes of AAD: the
/// powers reach H^32) and of the masked tail after them, against ring.
#[test]
fn one_pass_edges_match_ring() {
    let mut rng = Rng::new(0x5eed_0004);
    for (alg, backend) in Alg::all_engines() {
        for len in [
            0, 1, 15, 16, 47, 48, 49, 112, 113, 127, 128, 431, 432, 433, 496, 497,
        ] {
            for aad_len in [0, 1, 15, 16, 17, 48, 63, 64, 65] {
                let key_bytes = rng.bytes(alg.key_len());
                let key = alg.key(&key_bytes, backend);
                let (nonce, aad, pt) = (rng.array(), rng.bytes(aad_len), rng.bytes(len));
                let what = format!("{alg:?} on {backend}, len {len}, aad {aad_len}");
                let expected = alg.ring_seal(&key_bytes, &nonce, &aad, &pt);
                assert_eq!(key.seal(&nonce, &aad, &pt), expected, "seal: {what}");
                assert_eq!(
                    key.open(&nonce, &aad, &expected).as_deref(),
                    Some(&pt[..]),
                    "open: {what}"
                );
            }
        }
    }
}

#[test]
fn opens_what_references_seal_and_vice_versa() {
    let mut rng = Rng::new(0x5eed_0003);
    for (alg, backend) in Alg::all_engines() {
        for _ in 0..200 {
            let len = rng.below(3000);
            let key_bytes = rng.bytes(alg.key_len());
            let key = alg.key(&key_bytes, backend);
            let (nonce, aad, pt) = (rng.array(), rng.bytes_between(0, 64), rng.bytes(len));
            let ours = key.seal(&nonce, &aad, &pt);
            assert_eq!(
                alg.aws_lc_open(&key_bytes, &nonce, &aad, &ours).as_deref(),
                Some(&pt[..])
            );
        }
    }
}
