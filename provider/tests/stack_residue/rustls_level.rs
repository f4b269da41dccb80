//! The keys and records rustls asks the provider for, searched as the
//! engine-level ones are.

use super::*;

/// A provider with `aes` or ChaCha20 suites pinned to backend `b`.
fn provider_on(aes: bool, b: Backend) -> rustls::crypto::CryptoProvider {
    let builder = rustls_fusion::ProviderBuilder::new().hardening(hardening(b));
    let builder = if aes {
        builder.aes_gcm(b)
    } else {
        builder.chacha20_poly1305(b)
    };
    builder.build().expect("a backend this CPU runs")
}

/// The suites of [`rustls_suites`], TLS 1.3 and TLS 1.2, each on every
/// backend: (TLS 1.3, AES, the backend's index, the backend, the suite of
/// a provider pinned to it).
fn record_suites() -> Vec<(bool, bool, usize, Backend, rustls::SupportedCipherSuite)> {
    let mut out = Vec::new();
    for tls13 in [true, false] {
        for (id, aes, backends) in rustls_suites(tls13) {
            for (bi, b) in backends.into_iter().enumerate() {
                let suite = *provider_on(aes, b)
                    .cipher_suites
                    .iter()
                    .find(|s| s.suite() == id)
                    .expect("the suite");
                out.push((tls13, aes, bi, b, suite));
            }
        }
    }
    out
}

/// Our suites with 32-byte keys, which `AeadKey::from` makes (AES-128-GCM
/// keys go through the same generic setup as AES-256-GCM's): (suite, AES,
/// backends).
fn rustls_suites(tls13: bool) -> Vec<(rustls::CipherSuite, bool, Vec<Backend>)> {
    use rustls::CipherSuite as S;
    let (aes, chacha) = if tls13 {
        (
            S::TLS13_AES_256_GCM_SHA384,
            S::TLS13_CHACHA20_POLY1305_SHA256,
        )
    } else {
        (
            S::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            S::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        )
    };
    vec![
        (aes, true, Aes256Gcm::backends()),
        (chacha, false, ChaCha20Poly1305::backends()),
    ]
}

/// QUIC keys made through rustls (`quic::Algorithm::packet_key` and
/// `header_protection_key`), which our provider builds in the one box it
/// returns (the ChaCha20 words inline in it): for every suite and
/// backend, the frames below the call are searched for the raw key and
/// everything setup derives from it. rustls passes the key by value, a
/// copy in the caller's frame, which `residue_of_calls` leaves out.
#[test]
fn no_rustls_quic_key_material_left_on_the_stack() {
    use rustls::crypto::cipher::{AeadKey, Iv};
    let mut failures = Vec::new();
    for (id, aes, backends) in rustls_suites(true) {
        for (bi, b) in backends.into_iter().enumerate() {
            let provider = provider_on(aes, b);
            let quic = provider
                .cipher_suites
                .iter()
                .find(|s| s.suite() == id)
                .and_then(|s| s.tls13())
                .and_then(|s| s.quic)
                .expect("a QUIC-capable TLS 1.3 suite");
            let key = random_bytes(32, 0x9a + bi as u64);
            let k: [u8; 32] = key.clone().try_into().unwrap();
            let (keys, dead) = residue_of_calls(move |below| {
                *below = stack_pointer();
                let hp = quic.header_protection_key(AeadKey::from(k));
                let packet = quic.packet_key(AeadKey::from(k), Iv::new([7; 12]));
                (hp, packet)
            });
            for f in key_secrets(aes, &key).found_in(&dead) {
                failures.push(format!("rustls QUIC {id:?} {b} key setup: {f}"));
            }
            drop(keys);
            println!("rustls QUIC {id:?}: dead stack searched on {b}");
        }
    }
    assert_none_found(&failures);
}

/// TLS record keys made through rustls (`encrypter` and `decrypter` of
/// every TLS 1.3 and TLS 1.2 suite), each built with its holder in one
/// box: searched as the QUIC keys are, on every backend.
#[test]
fn no_rustls_record_key_material_left_on_the_stack() {
    use rustls::crypto::cipher::{AeadKey, Iv};
    use rustls::SupportedCipherSuite;
    let mut failures = Vec::new();
    for (_, aes, bi, b, suite) in record_suites() {
        let id = suite.suite();
        let key = random_bytes(32, 0x7c + bi as u64);
        let k: [u8; 32] = key.clone().try_into().unwrap();
        let (keys, dead) = residue_of_calls(move |below| {
            *below = stack_pointer();
            let key = || AeadKey::from(k);
            match suite {
                SupportedCipherSuite::Tls13(s) => (
                    s.aead_alg.encrypter(key(), Iv::new([7; 12])),
                    s.aead_alg.decrypter(key(), Iv::new([7; 12])),
                ),
                SupportedCipherSuite::Tls12(s) => {
                    let iv = [7u8; 12];
                    let iv = &iv[..s.aead_alg.key_block_shape().fixed_iv_len];
                    (
                        s.aead_alg.encrypter(key(), iv, &[9; 8]),
                        s.aead_alg.decrypter(key(), iv),
                    )
                }
            }
        });
        for f in key_secrets(aes, &key).found_in(&dead) {
            failures.push(format!("rustls {id:?} {b} record key setup: {f}"));
        }
        drop(keys);
        println!("rustls {id:?}: dead stack searched on {b}");
    }
    assert_none_found(&failures);
}

/// Records sealed and opened through rustls's `MessageEncrypter` and
/// `MessageDecrypter` (the record layer's own paths: `Base` seals and
/// opens in the base provider's shape, with its opt-in scrub on), TLS 1.3
/// and TLS 1.2 (an explicit nonce for AES-GCM), on every backend, at
/// lengths on both sides of the record layer's copy limits (512 bytes, and
/// 8 KiB on `Base`).
#[test]
fn no_rustls_record_secrets_left_on_the_stack() {
    use rustls::crypto::cipher::{
        AeadKey, InboundOpaqueMessage, Iv, OutboundChunks, OutboundPlainMessage,
    };
    use rustls::{ContentType, ProtocolVersion, SupportedCipherSuite};
    let mut failures = Vec::new();
    for (tls13, aes, bi, b, suite) in record_suites() {
        let id = suite.suite();
        let key = random_bytes(32, 0x51 + bi as u64);
        let k: [u8; 32] = key.clone().try_into().unwrap();
        // TLS 1.2 AES-GCM: a 4-byte salt (the 8 bytes after it are
        // only the encrypter's `extra` argument: the explicit nonce
        // is the sequence number, read back from the record below);
        // the others a 12-byte IV, which is the nonce at sequence
        // number 0.
        let explicit = !tls13 && aes;
        let iv: [u8; 12] = if explicit {
            [7, 7, 7, 7, 9, 9, 9, 9, 9, 9, 9, 9]
        } else {
            [7; 12]
        };
        for len in [64, 1000, 9000] {
            let data = random_bytes(len, 0x600d + len as u64);
            let (enc, dec) = match suite {
                SupportedCipherSuite::Tls13(s) => (
                    s.aead_alg.encrypter(AeadKey::from(k), Iv::new(iv)),
                    s.aead_alg.decrypter(AeadKey::from(k), Iv::new(iv)),
                ),
                SupportedCipherSuite::Tls12(s) => {
                    let fixed = &iv[..s.aead_alg.key_block_shape().fixed_iv_len];
                    (
                        s.aead_alg.encrypter(AeadKey::from(k), fixed, &iv[4..]),
                        s.aead_alg.decrypter(AeadKey::from(k), fixed),
                    )
                }
            };
            let d = data.clone();
            // Nothing allocates or frees after the call under test:
            // the plaintext and the encrypter are returned, not
            // dropped in the thread.
            let ((record, enc, d), dead) = residue(move || {
                let mut enc = enc;
                let msg = OutboundPlainMessage {
                    typ: ContentType::ApplicationData,
                    version: ProtocolVersion::TLSv1_2,
                    payload: OutboundChunks::Single(&d),
                };
                let record = enc.encrypt(msg, 0).expect("sealed");
                (record, enc, d)
            });
            drop((enc, d));
            let payload = record.encode()[5..].to_vec();
            // What the AEAD sealed: TLS 1.3 adds the content type
            // and takes the record header as AAD; TLS 1.2 takes
            // seq ‖ type ‖ version ‖ length.
            let (pt, aad) = if tls13 {
                let mut pt = data.clone();
                pt.push(0x17);
                let n = payload.len();
                (pt, vec![0x17, 3, 3, (n >> 8) as u8, n as u8])
            } else {
                let mut aad = vec![0; 8];
                aad.extend([0x17, 3, 3, (len >> 8) as u8, len as u8]);
                (data.clone(), aad)
            };
            let body = &payload[if explicit { 8 } else { 0 }..];
            let (ct, tag) = body.split_at(pt.len());
            let tag: [u8; 16] = tag.try_into().unwrap();
            let mut nonce = iv;
            if explicit {
                nonce[4..].copy_from_slice(&payload[..8]);
            }
            let secrets = record_secrets(aes, &key, &nonce, &aad, (&pt, ct, &tag));
            for f in secrets.found_in(&dead) {
                failures.push(format!("rustls {id:?} {b} encrypt {len}: {f}"));
            }
            let p = payload.clone();
            let ((opened, buf, dec), dead) = residue(move || {
                let mut dec = dec;
                let mut buf = p;
                let msg = InboundOpaqueMessage::new(
                    ContentType::ApplicationData,
                    ProtocolVersion::TLSv1_2,
                    &mut buf,
                );
                let opened = dec.decrypt(msg, 0).map(|m| m.payload.len());
                (opened, buf, dec)
            });
            drop(dec);
            assert_eq!(opened.ok(), Some(len), "rustls {id:?} {b} {len}");
            let at = if explicit { 8 } else { 0 };
            assert_eq!(buf[at..at + len], data[..], "rustls {id:?} {b} {len}");
            for f in secrets.found_in(&dead) {
                failures.push(format!("rustls {id:?} {b} decrypt {len}: {f}"));
            }
        }
        println!("rustls {id:?}: records' dead stack searched on {b}");
    }
    assert_none_found(&failures);
}
