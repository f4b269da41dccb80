//! Every engine at its edges, every backend: every length 0..=4200 against
//! ring, both sides of every internal boundary to past 16 KiB (AES-GCM's
//! 128-byte batches; ChaCha20's 64-byte head, 512-byte batches and 128-byte
//! tail steps, so every tail shape), AAD of 0..=80 bytes, unaligned input
//! and output. (AES-GCM's 32-bit counter wrap: unit test in
//! `aes_gcm/mod.rs`.)

mod common;

use common::{Alg, Rng};

use common::ALGS;

fn check(alg: Alg, rng: &mut Rng, len: usize, aad_len: usize) {
    let key_bytes = rng.bytes(alg.key_len());
    let nonce = rng.array();
    let aad = rng.bytes(aad_len);
    let pt = rng.bytes(len);
    let want = alg.ring_seal(&key_bytes, &nonce, &aad, &pt);
    for backend in alg.backends() {
        let key = alg.key(&key_bytes, backend);
        let what = format!("{alg:?} {backend} len {len} aad {aad_len}");
        assert_eq!(key.seal(&nonce, &aad, &pt), want, "seal: {what}");
        assert_eq!(
            key.open(&nonce, &aad, &want).as_deref(),
            Some(&pt[..]),
            "open: {what}"
        );
    }
}

#[test]
fn every_length_to_4200() {
    let mut rng = Rng::new(0xa1);
    for alg in ALGS {
        for len in 0..=4200 {
            check(alg, &mut rng, len, [5, 13][len % 2]);
        }
    }
}

#[test]
fn internal_boundaries_to_past_16k() {
    let mut rng = Rng::new(0xa2);
    for alg in ALGS {
        for edge in (0..=258usize).map(|k| k * 64) {
            for len in [
                edge.saturating_sub(17),
                edge.saturating_sub(1),
                edge,
                edge + 1,
                edge + 15,
                edge + 17,
            ] {
                check(alg, &mut rng, len, 13);
            }
        }
    }
}

#[test]
fn aad_lengths_0_to_80() {
    let mut rng = Rng::new(0xa3);
    for alg in ALGS {
        for aad_len in 0..=80 {
            for len in [
                0, 1, 15, 16, 17, 111, 112, 113, 127, 128, 129, 255, 256, 1000,
            ] {
                check(alg, &mut rng, len, aad_len);
            }
        }
        // Long AAD too (several GHASH chunks).
        for aad_len in [255, 256, 257, 1000, 5000] {
            check(alg, &mut rng, 300, aad_len);
        }
    }
}

#[test]
fn unaligned_slices_and_split_seal() {
    let mut rng = Rng::new(0xa4);
    for alg in ALGS {
        for backend in alg.backends() {
            for len in [1, 16, 100, 127, 128, 129, 1350, 4097] {
                let key_bytes = rng.bytes(alg.key_len());
                let key = alg.key(&key_bytes, backend);
                let (nonce, aad, pt) = (rng.array(), rng.bytes(13), rng.bytes(len));
                let want = alg.ring_seal(&key_bytes, &nonce, &aad, &pt);
                for offset in 1..16 {
                    let mut src = vec![0; len + offset];
                    src[offset..].copy_from_slice(&pt);
                    let mut dst = vec![0; len + 16 - offset];
                    let tag = key.seal_out_of_place(
                        &nonce,
                        &aad,
                        &src[offset..],
                        &mut dst[16 - offset..],
                    );
                    assert_eq!(
                        [&dst[16 - offset..], &tag[..]].concat(),
                        want,
                        "{alg:?} {backend} {len} +{offset}"
                    );

                    let mut buf = vec![0; len + 16 + offset];
                    buf[offset..offset + len + 16].copy_from_slice(&want);
                    let (ct, tag) = buf[offset..offset + len + 16].split_at_mut(len);
                    let tag: [u8; 16] = (&*tag).try_into().unwrap();
                    assert!(key.open_in_place(&nonce, &aad, ct, &tag).is_ok());
                    assert_eq!(ct, &pt[..], "{alg:?} {backend} open {len} +{offset}");
                }
            }
        }
    }
}
