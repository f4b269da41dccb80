//! The rustls record layer, driven directly: round trips, chunked
//! plaintext, malformed and oversized records, kTLS key export.

mod common;

use common::tls::{aead_key, alg_of, all_suites, decrypt, encrypt, pair, tls12};
use common::{Alg, Rng};
use rustls::crypto::cipher::{OutboundChunks, OutboundPlainMessage};
use rustls::{ConnectionTrafficSecrets, ContentType, Error, ProtocolVersion, SupportedCipherSuite};
use rustls_fusion::aead::Backend;

#[test]
fn round_trip_every_suite() {
    let mut rng = Rng::new(1);
    for &suite in all_suites() {
        let mut p = pair(suite, 9, rng.array());
        for (seq, len) in [0, 1, 15, 16, 17, 255, 1350, 16383, 16384]
            .into_iter()
            .enumerate()
        {
            let data = rng.bytes(len);
            let mut record = encrypt(p.enc.as_mut(), &data, seq as u64).unwrap();
            assert_eq!(
                record.len(),
                p.enc.encrypted_payload_len(len),
                "{:?}",
                suite.suite()
            );
            assert_eq!(
                decrypt(p.dec.as_mut(), &mut record, seq as u64),
                Ok(data),
                "{:?} len {len}",
                suite.suite()
            );
        }
    }
}

/// Records sealed on `Base` (the base provider's AEAD: aws-lc-rs, or ring
/// with feature `ring`) equal the default provider's engines' and open on
/// both, at lengths on both sides of the record layer's copy limits (512
/// bytes for our engines; 8 KiB for `Base` where it can read a plaintext
/// apart: `tls/record.rs`).
#[test]
fn base_records_match_the_default_engines() {
    let base = rustls_fusion::provider_with_backends(Backend::Base, Backend::Base)
        .expect("Base runs everywhere");
    let mut rng = Rng::new(11);
    for &ours in rustls_fusion::cipher_suite::ALL_CIPHER_SUITES {
        // Looked up by name: the order of the suites follows the CPU.
        let on_base = *base
            .cipher_suites
            .iter()
            .find(|s| s.suite() == ours.suite())
            .expect("Base has every suite");
        let iv = rng.array();
        let mut a = pair(ours, 5, iv);
        let mut b = pair(on_base, 5, iv);
        for (seq, len) in [0, 1, 511, 512, 513, 1350, 4099, 8192, 8193, 16384]
            .into_iter()
            .enumerate()
        {
            let data = rng.bytes(len);
            let seq = seq as u64;
            let mut sealed = encrypt(b.enc.as_mut(), &data, seq).unwrap();
            assert_eq!(
                encrypt(a.enc.as_mut(), &data, seq).unwrap(),
                sealed,
                "{:?} len {len}",
                ours.suite()
            );
            // Against aws-lc directly too: where the default engines are
            // `Base` (aarch64) the comparison above is `Base` with itself.
            assert_eq!(
                forge_authentic(on_base, &b, &data, seq),
                sealed,
                "{:?} len {len} against aws-lc",
                ours.suite()
            );
            assert_eq!(
                decrypt(a.dec.as_mut(), &mut sealed.clone(), seq),
                Ok(data.clone())
            );
            assert_eq!(decrypt(b.dec.as_mut(), &mut sealed, seq), Ok(data));
        }
    }
}

#[test]
fn chunked_plaintext_seals_like_contiguous() {
    let mut rng = Rng::new(2);
    // 9000 bytes: over `Base`'s copy limit, where one slice is read apart.
    for (&suite, len) in all_suites().iter().flat_map(|s| [(s, 3000), (s, 9000)]) {
        let iv = rng.array();
        let data = rng.bytes(len);
        let (a, rest) = data.split_at(7);
        let (b, c) = rest.split_at(1500);
        let chunks = [a, b, c];
        let mut single = pair(suite, 10, iv);
        let mut multi = pair(suite, 10, iv);
        let want = encrypt(single.enc.as_mut(), &data, 0).unwrap();
        let msg = OutboundPlainMessage {
            typ: ContentType::ApplicationData,
            version: ProtocolVersion::TLSv1_2,
            payload: OutboundChunks::new(&chunks),
        };
        let got = multi.enc.encrypt(msg, 0).unwrap();
        assert_eq!(
            got.payload.as_ref(),
            &want[..],
            "{:?} len {len}",
            suite.suite()
        );
    }
}

/// Seals `plain` for `seq` as the peer would, with any length.
fn forge_authentic(
    suite: SupportedCipherSuite,
    p: &common::tls::Pair,
    plain: &[u8],
    seq: u64,
) -> Vec<u8> {
    use rustls::crypto::cipher::{make_tls12_aad, make_tls13_aad};
    let alg = alg_of(suite);
    let mut nonce = [0u8; 12];
    match (suite.tls13().is_some(), alg) {
        (false, Alg::Aes128Gcm | Alg::Aes256Gcm) => {
            nonce[..4].copy_from_slice(&p.iv);
            nonce[4..].copy_from_slice(&seq.to_be_bytes());
            let aad = make_tls12_aad(
                seq,
                ContentType::ApplicationData,
                ProtocolVersion::TLSv1_2,
                plain.len(),
            );
            let mut out = seq.to_be_bytes().to_vec();
            out.extend(alg.aws_lc_seal(&p.key, &nonce, &aad, plain));
            out
        }
        (tls13, _) => {
            nonce = common::masked_nonce(&p.iv[..].try_into().unwrap(), seq);
            if tls13 {
                let mut inner = plain.to_vec();
                inner.push(ContentType::ApplicationData.into());
                alg.aws_lc_seal(&p.key, &nonce, &make_tls13_aad(inner.len() + 16), &inner)
            } else {
                let aad = make_tls12_aad(
                    seq,
                    ContentType::ApplicationData,
                    ProtocolVersion::TLSv1_2,
                    plain.len(),
                );
                alg.aws_lc_seal(&p.key, &nonce, &aad, plain)
            }
        }
    }
}

#[test]
fn oversized_authentic_records_are_refused() {
    for &suite in all_suites() {
        let mut p = pair(suite, 11, [0x42; 12]);
        let ok = forge_authentic(suite, &p, &[7; 16384], 0);
        assert_eq!(
            decrypt(p.dec.as_mut(), &mut ok.clone(), 0).map(|v| v.len()),
            Ok(16384),
            "{:?}",
            suite.suite()
        );
        let mut big = forge_authentic(suite, &p, &[7; 16385], 1);
        assert_eq!(
            decrypt(p.dec.as_mut(), &mut big, 1),
            Err(Error::PeerSentOversizedRecord),
            "{:?}",
            suite.suite()
        );
    }
}

#[test]
fn garbage_never_panics() {
    let mut rng = Rng::new(3);
    for &suite in all_suites() {
        let mut p = pair(suite, 12, rng.array());
        for i in 0..300 {
            let len = match i % 3 {
                0 => rng.below(64),
                1 => rng.below(20_000),
                _ => 16384 + rng.below(2048),
            };
            let mut junk = rng.bytes(len);
            assert_eq!(
                decrypt(p.dec.as_mut(), &mut junk, 0),
                Err(Error::DecryptError),
                "{:?} len {len}",
                suite.suite()
            );
            assert!(junk.iter().all(|&b| b == 0));
        }
    }
}

#[test]
fn extract_keys_for_ktls() {
    for &suite in all_suites() {
        let alg = alg_of(suite);
        let key = || aead_key(alg.key_len(), 13);
        let iv12 = [0x21u8; 12];
        let secrets = match suite {
            SupportedCipherSuite::Tls13(s) => s.aead_alg.extract_keys(key(), iv12.into()),
            SupportedCipherSuite::Tls12(s) => {
                let shape = s.aead_alg.key_block_shape();
                s.aead_alg.extract_keys(
                    key(),
                    &iv12[..shape.fixed_iv_len],
                    &[0x99; 8][..shape.explicit_nonce_len],
                )
            }
        };
        if tls12(suite).is_some() && alg != Alg::ChaCha20Poly1305 {
            // The kernel would restart the explicit-nonce counter.
            assert!(secrets.is_err(), "{:?}", suite.suite());
            continue;
        }
        let (k, iv) = match (secrets.unwrap(), alg) {
            (ConnectionTrafficSecrets::Aes128Gcm { key, iv }, Alg::Aes128Gcm)
            | (ConnectionTrafficSecrets::Aes256Gcm { key, iv }, Alg::Aes256Gcm)
            | (ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv }, Alg::ChaCha20Poly1305) => {
                (key, iv)
            }
            _ => panic!("{:?}: wrong kind of secrets", suite.suite()),
        };
        assert_eq!(k.as_ref(), key().as_ref());
        assert_eq!(iv.as_ref(), &iv12);
    }
}
