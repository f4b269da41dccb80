//! AEAD differential: a fuzzer-chosen algorithm, key, nonce, AAD, message
//! length and buffer offsets, on every backend this CPU lists, against
//! aws-lc-rs: the same ciphertext and tag; the ciphertext opens; a changed
//! byte of ciphertext, tag or AAD fails to open and leaves the buffer
//! zeroed; the record layer's split seal (prefix + rest of the buffer)
//! equals the contiguous one.
#![no_main]

use aws_lc_rs::aead::{
    Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, CHACHA20_POLY1305,
};
use libfuzzer_sys::fuzz_target;
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};

/// Reads fuzzer bytes in order, zeros when they run out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }
    fn u16(&mut self) -> usize {
        usize::from(self.byte()) | usize::from(self.byte()) << 8
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
}

enum Key {
    A128(Aes128Gcm),
    A256(Aes256Gcm),
    C(ChaCha20Poly1305),
}

impl Key {
    fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        match self {
            Self::A128(k) => k.seal_in_place(nonce, aad, buf),
            Self::A256(k) => k.seal_in_place(nonce, aad, buf),
            Self::C(k) => k.seal_in_place(nonce, aad, buf),
        }
    }
    fn seal_split(&self, nonce: &[u8; 12], aad: &[u8], prefix: &[u8], buf: &mut [u8]) -> [u8; 16] {
        match self {
            Self::A128(k) => k.fuzz_seal_split(nonce, aad, prefix, buf),
            Self::A256(k) => k.fuzz_seal_split(nonce, aad, prefix, buf),
            Self::C(k) => k.fuzz_seal_split(nonce, aad, prefix, buf),
        }
    }
    fn open(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
        match self {
            Self::A128(k) => k.open_in_place(nonce, aad, buf, tag).is_ok(),
            Self::A256(k) => k.open_in_place(nonce, aad, buf, tag).is_ok(),
            Self::C(k) => k.open_in_place(nonce, aad, buf, tag).is_ok(),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let alg = input.byte() % 3;
    let key_len = if alg == 0 { 16 } else { 32 };
    let key = input.bytes(key_len);
    let nonce: [u8; 12] = input.bytes(12).try_into().unwrap();
    let aad_len = usize::from(input.byte()) % 80;
    let len = input.u16() % 20_000;
    let (off_in, cut) = (usize::from(input.byte() % 32), input.u16());
    let flip = input.u16();
    let aad = input.bytes(aad_len);
    let mut pt = input.bytes(len.min(input.0.len()));
    pt.resize(len, 0x5a);

    let reference = LessSafeKey::new(
        UnboundKey::new(
            [&AES_128_GCM, &AES_256_GCM, &CHACHA20_POLY1305][usize::from(alg)],
            &key,
        )
        .unwrap(),
    );
    let mut want = pt.clone();
    let want_tag = reference
        .seal_in_place_separate_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(&aad),
            &mut want,
        )
        .unwrap();
    let backends: Vec<Backend> = match alg {
        0 => Aes128Gcm::backends(),
        1 => Aes256Gcm::backends(),
        _ => ChaCha20Poly1305::backends(),
    };
    for backend in backends {
        let k = match alg {
            0 => Key::A128(Aes128Gcm::with_backend(key[..].try_into().unwrap(), backend).unwrap()),
            1 => Key::A256(Aes256Gcm::with_backend(key[..].try_into().unwrap(), backend).unwrap()),
            _ => Key::C(
                ChaCha20Poly1305::with_backend(key[..].try_into().unwrap(), backend).unwrap(),
            ),
        };
        // In place, at a fuzzer-chosen offset.
        let mut buf = vec![0xee; off_in + len];
        buf[off_in..].copy_from_slice(&pt);
        let tag = k.seal(&nonce, &aad, &mut buf[off_in..]);
        assert_eq!(
            (&buf[off_in..], &tag[..]),
            (&want[..], want_tag.as_ref()),
            "{backend}"
        );
        // The split seal of the record layer.
        let cut = cut % (len + 1);
        let mut split = vec![0x11; len];
        split[cut..].copy_from_slice(&pt[cut..]);
        let tag2 = k.seal_split(&nonce, &aad, &pt[..cut], &mut split);
        assert_eq!(
            (&split[..], tag2),
            (&want[..], tag),
            "{backend} split at {cut}"
        );
        // Opens; any changed byte fails and zeroes.
        let mut ct = want.clone();
        assert!(k.open(&nonce, &aad, &mut ct, &tag), "{backend}");
        assert_eq!(ct, pt);
        let total = len + 16 + aad.len();
        if total > 0 {
            let at = flip % total;
            let (mut ct, mut t, mut a) = (want.clone(), tag, aad.clone());
            match at {
                i if i < len => ct[i] ^= 1,
                i if i < len + 16 => t[i - len] ^= 1,
                i => a[i - len - 16] ^= 1,
            }
            assert!(
                !k.open(&nonce, &a, &mut ct, &t),
                "{backend}: a changed byte opened"
            );
            assert!(ct.iter().all(|&b| b == 0), "{backend}: buffer not zeroed");
        }
    }
});
