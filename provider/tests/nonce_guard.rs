//! The nonce guard's required cases (docs/nonce-guard.md, "Test cases"),
//! numbered as there. Case 18 (a reference peer end to end) is in
//! `tls-tests/tests/end_to_end.rs`.

mod common;

use common::tls::{alg_of, all_suites, decrypt, encrypt, pair, tls12};
use common::{masked_nonce, Alg, Rng};
use rustls::crypto::cipher::{make_tls12_aad, make_tls13_aad};
use rustls::{ContentType, Error, ProtocolVersion};
use rustls_fusion::nonce_guard::{NonceError, OpenGuard, ReplayError, SealGuard};
use NonceError::*;

const MAX: u64 = u64::MAX;

fn salted_nonce(salt: &[u8; 4], seq: u64) -> [u8; 12] {
    let mut n = [0; 12];
    n[..4].copy_from_slice(salt);
    n[4..].copy_from_slice(&seq.to_be_bytes());
    n
}

/// Runs a counter stream through the guard in both constructions and
/// through every suite's encrypter; `expected[i]` is the outcome of `seqs[i]`.
fn check_stream(seqs: &[u64], expected: &[Result<(), NonceError>]) {
    assert_eq!(seqs.len(), expected.len());
    let iv = [
        0x11, 0x22, 0x33, 0x44, 0xde, 0xad, 0xbe, 0xef, 0x42, 0x99, 0x42, 0x07,
    ];
    let salt = [0xca, 0xfe, 0xba, 0xbe];
    let mut masked = SealGuard::masked(&iv);
    let mut salted = SealGuard::salted(&salt);
    for (&seq, &want) in seqs.iter().zip(expected) {
        assert_eq!(
            masked.check(&masked_nonce(&iv, seq)),
            want,
            "masked guard, seq {seq}"
        );
        assert_eq!(
            salted.check(&salted_nonce(&salt, seq)),
            want,
            "salted guard, seq {seq}"
        );
    }
    // Case 12: the same outcomes through every suite's MessageEncrypter
    // (ChaCha20-Poly1305 in both versions included).
    for &suite in all_suites() {
        let mut p = pair(suite, 3, iv);
        for (&seq, &want) in seqs.iter().zip(expected) {
            let got = encrypt(p.enc.as_mut(), b"data", seq);
            match want {
                Ok(()) => assert!(got.is_ok(), "{:?} seq {seq}", suite.suite()),
                Err(_) => assert_eq!(
                    got,
                    Err(Error::EncryptError),
                    "{:?} seq {seq}",
                    suite.suite()
                ),
            }
        }
    }
}

#[test]
fn case_01_tls13_nonces_are_iv_xor_seq() {
    for &suite in all_suites().iter().filter(|s| s.tls13().is_some()) {
        let alg = alg_of(suite);
        let iv = [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0xff, 0x80];
        let mut p = pair(suite, 1, iv);
        for seq in 0..4 {
            let record = encrypt(p.enc.as_mut(), b"hello", seq).unwrap();
            let nonce = masked_nonce(&iv, seq);
            let opened = alg.aws_lc_open(&p.key, &nonce, &make_tls13_aad(record.len()), &record);
            assert_eq!(
                opened.as_deref(),
                Some(&b"hello\x17"[..]),
                "{:?} seq {seq}",
                suite.suite()
            );
        }
    }
}

#[test]
fn case_02_repeat() {
    check_stream(&[0, 1, 1, 2], &[Ok(()), Ok(()), Err(Repeated), Ok(())]);
}

#[test]
fn case_03_decrease() {
    check_stream(&[0, 5, 3, 6], &[Ok(()), Ok(()), Err(Decreased), Ok(())]);
}

#[test]
fn case_04_gaps_accepted() {
    check_stream(&[0, 10, 9, 11], &[Ok(()), Ok(()), Err(Decreased), Ok(())]);
}

#[test]
fn case_05_strict_start() {
    check_stream(&[1, 0], &[Err(NotStartedAtZero), Ok(())]);
}

#[test]
fn case_06_exhaustion_is_terminal() {
    check_stream(
        &[0, MAX - 1, MAX, 0, 5, MAX - 1],
        &[
            Ok(()),
            Ok(()),
            Err(Exhausted),
            Err(Decreased),
            Err(Decreased),
            Err(Repeated),
        ],
    );
}

#[test]
fn case_07_max_is_exhausted_not_decreased() {
    check_stream(&[0, MAX], &[Ok(()), Err(Exhausted)]);
}

#[test]
fn case_08_fixed_field_mismatch_changes_nothing() {
    let iv = [1; 12];
    let salt = [2; 4];
    for (mut guard, nonce) in [
        (SealGuard::masked(&iv), masked_nonce(&iv, 0)),
        (SealGuard::salted(&salt), salted_nonce(&salt, 0)),
    ] {
        for byte in 0..4 {
            let mut bad = nonce;
            bad[byte] ^= 0x10;
            assert_eq!(guard.check(&bad), Err(FixedFieldMismatch));
            assert_eq!(guard.next_counter(), 0, "state unchanged");
        }
        assert_eq!(guard.check(&nonce), Ok(()), "next valid counter accepted");
    }
}

#[test]
fn case_09_xor_unmasking() {
    let mut iv = [0u8; 12];
    iv[9] = 0x42;
    iv[11] = 0x0b;
    let mut guard = SealGuard::masked(&iv);
    let mut last_raw = u64::MAX;
    let mut ran_backwards = false;
    for seq in 0..64 {
        let nonce = masked_nonce(&iv, seq);
        let raw = u64::from_be_bytes(nonce[4..].try_into().unwrap());
        ran_backwards |= raw < last_raw && seq > 0;
        last_raw = raw;
        assert_eq!(guard.check(&nonce), Ok(()), "seq {seq}");
    }
    assert!(
        ran_backwards,
        "the raw nonce bytes must run backwards somewhere"
    );
}

#[test]
fn case_10_tls12_gcm_explicit_nonce_is_seq() {
    for &suite in all_suites() {
        let Some(s) = tls12(suite) else { continue };
        let alg = alg_of(suite);
        if alg == Alg::ChaCha20Poly1305 {
            continue;
        }
        assert_eq!(s.aead_alg.key_block_shape().explicit_nonce_len, 8);
        let mut p = pair(suite, 2, [0x5a; 12]);
        for seq in 0..3u64 {
            let record = encrypt(p.enc.as_mut(), b"tls12 data", seq).unwrap();
            assert_eq!(
                record[..8],
                seq.to_be_bytes(),
                "{:?}: explicit nonce",
                suite.suite()
            );
            let nonce = salted_nonce(&p.iv.clone().try_into().unwrap(), seq);
            let aad = make_tls12_aad(
                seq,
                ContentType::ApplicationData,
                ProtocolVersion::TLSv1_2,
                10,
            );
            let opened = alg.aws_lc_open(&p.key, &nonce, &aad, &record[8..]);
            assert_eq!(
                opened.as_deref(),
                Some(&b"tls12 data"[..]),
                "{:?} seq {seq}",
                suite.suite()
            );
        }
    }
}

#[test]
fn case_11_same_seq_twice_through_encrypter() {
    for &suite in all_suites() {
        let mut p = pair(suite, 4, [0; 12]);
        for seq in 0..=7 {
            encrypt(p.enc.as_mut(), b"x", seq).unwrap();
        }
        assert_eq!(
            encrypt(p.enc.as_mut(), b"x", 7),
            Err(Error::EncryptError),
            "{:?}",
            suite.suite()
        );
        assert!(encrypt(p.enc.as_mut(), b"x", 8).is_ok());
    }
}

#[test]
fn case_13_property_against_model() {
    let mut rng = Rng::new(13);
    for round in 0..2000 {
        let iv = rng.array::<12>();
        let mut guard = SealGuard::masked(&iv);
        let (mut next, mut started) = (0u64, false);
        let mut accepted = std::collections::HashSet::new();
        for _ in 0..32 {
            let seq = match rng.below(6) {
                0 => next.saturating_sub(1),
                1 => next,
                2 => next.saturating_add(rng.below(4) as u64),
                3 => MAX - rng.below(3) as u64,
                4 => rng.next_u64(),
                _ => rng.below(40) as u64,
            };
            let mut nonce = masked_nonce(&iv, seq);
            let prefix_ok = rng.below(20) != 0;
            if !prefix_ok {
                nonce[rng.below(4)] ^= 1 << rng.below(8);
            }
            let model = prefix_ok && seq != MAX && seq >= next && (started || seq == 0);
            assert_eq!(
                guard.check(&nonce).is_ok(),
                model,
                "round {round}, seq {seq}, next {next}"
            );
            if model {
                next = seq + 1;
                started = true;
                assert!(accepted.insert(nonce), "nonce accepted twice");
            }
        }
    }
}

#[test]
fn case_14_key_update_restarts_at_zero() {
    for &suite in all_suites() {
        let mut old = pair(suite, 5, [3; 12]);
        for seq in 0..5 {
            encrypt(old.enc.as_mut(), b"old", seq).unwrap();
        }
        let mut new = pair(suite, 6, [4; 12]);
        assert!(
            encrypt(new.enc.as_mut(), b"new", 0).is_ok(),
            "{:?}",
            suite.suite()
        );
        assert_eq!(
            encrypt(old.enc.as_mut(), b"old", 0),
            Err(Error::EncryptError)
        );
    }
}

#[test]
fn case_15_peer_explicit_nonces_unconstrained() {
    let mut rng = Rng::new(15);
    for &suite in all_suites() {
        let alg = alg_of(suite);
        if tls12(suite).is_none() || alg == Alg::ChaCha20Poly1305 {
            continue;
        }
        let mut p = pair(suite, 7, [0x77; 12]);
        let salt: [u8; 4] = p.iv.clone().try_into().unwrap();
        for (seq, explicit) in [(0u64, 5u64), (1, 3), (2, rng.next_u64())] {
            let nonce = salted_nonce(&salt, explicit);
            let aad = make_tls12_aad(
                seq,
                ContentType::ApplicationData,
                ProtocolVersion::TLSv1_2,
                4,
            );
            let mut record = explicit.to_be_bytes().to_vec();
            record.extend(alg.aws_lc_seal(&p.key, &nonce, &aad, b"peer"));
            assert_eq!(
                decrypt(p.dec.as_mut(), &mut record, seq),
                Ok(b"peer".to_vec()),
                "{:?}",
                suite.suite()
            );
        }
    }
}

#[test]
fn case_16_open_side_rules() {
    for &suite in all_suites() {
        let name = suite.suite();
        let mut sender = pair(suite, 8, [0x16; 12]);
        let mut p = pair(suite, 8, [0x16; 12]);
        let r0 = encrypt(sender.enc.as_mut(), b"zero", 0).unwrap();
        let r1 = encrypt(sender.enc.as_mut(), b"one", 1).unwrap();

        assert!(
            decrypt(p.dec.as_mut(), &mut r0.clone(), 0).is_ok(),
            "{name:?}"
        );
        // Trial decryption: a bad record at seq 1 does not consume seq 1.
        let mut bad = r1.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(
            decrypt(p.dec.as_mut(), &mut bad, 1),
            Err(Error::DecryptError),
            "{name:?}"
        );
        assert!(
            bad.iter().all(|&b| b == 0),
            "{name:?}: buffer zeroed after a bad tag"
        );
        assert_eq!(
            decrypt(p.dec.as_mut(), &mut r1.clone(), 1),
            Ok(b"one".to_vec()),
            "{name:?}"
        );
        // 0, 1, 1: the replay is refused although it would authenticate.
        let mut replay = r1.clone();
        assert_eq!(
            decrypt(p.dec.as_mut(), &mut replay, 1),
            Err(Error::DecryptError),
            "{name:?}"
        );
        assert!(
            replay.iter().all(|&b| b == 0),
            "{name:?}: buffer zeroed after a replay"
        );

        // seq 2^64-1 is never opened.
        let mut at_max = pair(suite, 8, [0x16; 12]);
        let mut rec = r0.clone();
        assert_eq!(
            decrypt(at_max.dec.as_mut(), &mut rec, MAX),
            Err(Error::DecryptError),
            "{name:?}"
        );
        assert!(rec.iter().all(|&b| b == 0));

        // Short records: 23 bytes is one short of a TLS 1.2 GCM record's
        // explicit nonce and tag; shorter than a tag for everything else.
        for len in [0, 1, 15, 16, 23] {
            let mut short = vec![0xab; len];
            let result = decrypt(p.dec.as_mut(), &mut short, 2);
            assert_eq!(
                result,
                Err(Error::DecryptError),
                "{name:?}: {len}-byte record"
            );
            assert!(short.iter().all(|&b| b == 0), "{name:?} len {len}: zeroed");
        }
    }
    let mut guard = OpenGuard::new();
    assert_eq!(guard.check(0), Ok(()));
    assert_eq!(guard.opened(0), Ok(()));
    assert_eq!(guard.check(0), Err(ReplayError::Replayed));
    assert_eq!(guard.check(MAX), Err(ReplayError::Exhausted));
    // `opened` checks too, in release builds: a refused sequence number
    // moves nothing (2⁶⁴−1 would wrap the floor to 0; 0 would lower it).
    assert_eq!(guard.opened(MAX), Err(ReplayError::Exhausted));
    assert_eq!(guard.opened(0), Err(ReplayError::Replayed));
    assert_eq!(guard.check(1), Ok(()));
    assert_eq!(guard.opened(7), Ok(()));
    assert_eq!(guard.check(7), Err(ReplayError::Replayed));
    assert_eq!(guard.check(8), Ok(()));
}

#[test]
fn case_17_confidentiality_limits() {
    for &suite in all_suites() {
        let want = match alg_of(suite) {
            Alg::ChaCha20Poly1305 => u64::MAX,
            _ => 1 << 24,
        };
        let limit = match suite {
            rustls::SupportedCipherSuite::Tls13(s) => s.common.confidentiality_limit,
            rustls::SupportedCipherSuite::Tls12(s) => s.common.confidentiality_limit,
        };
        assert_eq!(limit, want, "{:?}", suite.suite());
    }
}
