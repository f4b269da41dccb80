//! Shared test helpers: one handle over the three AEAD types, every backend
//! this CPU runs, reference implementations, and a seeded PRNG.
#![allow(dead_code)]

pub mod tls;

use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305, OpenError};

/// The nonce of record or packet `seq` under `iv`: `iv` with `seq`'s
/// big-endian bytes XORed into its last eight (RFC 8446 §5.3, RFC 9001
/// §5.3).
pub fn masked_nonce(iv: &[u8; 12], seq: u64) -> [u8; 12] {
    let mut n = *iv;
    for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    n
}

/// A `LessSafeKey` of ring or aws-lc-rs (same API) for `alg`.
macro_rules! reference_key {
    ($krate:ident, $alg:expr, $key:expr) => {{
        use $krate::aead;
        let alg = match $alg {
            Alg::Aes128Gcm => &aead::AES_128_GCM,
            Alg::Aes256Gcm => &aead::AES_256_GCM,
            Alg::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
        };
        aead::LessSafeKey::new(aead::UnboundKey::new(alg, $key).unwrap())
    }};
}

/// A reference seal with ring or aws-lc-rs: ciphertext || tag.
macro_rules! reference_seal {
    ($krate:ident, $alg:expr, $key:expr, $nonce:expr, $aad:expr, $pt:expr) => {{
        let key = reference_key!($krate, $alg, $key);
        let mut out = $pt.to_vec();
        key.seal_in_place_append_tag(
            $krate::aead::Nonce::assume_unique_for_key(*$nonce),
            $krate::aead::Aad::from($aad),
            &mut out,
        )
        .unwrap();
        out
    }};
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alg {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

pub const ALGS: [Alg; 3] = [Alg::Aes128Gcm, Alg::Aes256Gcm, Alg::ChaCha20Poly1305];

impl Alg {
    pub fn from_name(name: &str) -> Self {
        match name {
            "aes128gcm" => Self::Aes128Gcm,
            "aes256gcm" => Self::Aes256Gcm,
            "chacha20poly1305" => Self::ChaCha20Poly1305,
            _ => panic!("unknown algorithm {name}"),
        }
    }

    pub fn key_len(self) -> usize {
        match self {
            Self::Aes128Gcm => 16,
            _ => 32,
        }
    }

    /// Every backend this CPU runs for this algorithm.
    pub fn backends(self) -> Vec<Backend> {
        let backends = match self {
            Self::Aes128Gcm => Aes128Gcm::backends(),
            Self::Aes256Gcm => Aes256Gcm::backends(),
            Self::ChaCha20Poly1305 => ChaCha20Poly1305::backends(),
        };
        assert!(
            backends.contains(&Backend::Base),
            "the base provider's AEAD is always available"
        );
        // Shown with the test's output (`--nocapture`, or on a failure).
        println!("{self:?}: running on {backends:?}");
        backends
    }

    pub fn key(self, key: &[u8], backend: Backend) -> Key {
        let k = match self {
            Self::Aes128Gcm => {
                Key::Aes128(Aes128Gcm::with_backend(key.try_into().unwrap(), backend).unwrap())
            }
            Self::Aes256Gcm => {
                Key::Aes256(Aes256Gcm::with_backend(key.try_into().unwrap(), backend).unwrap())
            }
            Self::ChaCha20Poly1305 => Key::ChaCha(
                ChaCha20Poly1305::with_backend(key.try_into().unwrap(), backend).unwrap(),
            ),
        };
        assert_eq!(k.backend(), backend);
        k
    }

    /// Every (algorithm, backend) pair this CPU runs.
    pub fn all_engines() -> Vec<(Alg, Backend)> {
        ALGS.iter()
            .flat_map(|&a| a.backends().into_iter().map(move |b| (a, b)))
            .collect()
    }

    /// ring's reference seal: ciphertext || tag.
    pub fn ring_seal(self, key: &[u8], nonce: &[u8; 12], aad: &[u8], pt: &[u8]) -> Vec<u8> {
        reference_seal!(ring, self, key, nonce, aad, pt)
    }

    /// aws-lc-rs's reference seal: ciphertext || tag.
    pub fn aws_lc_seal(self, key: &[u8], nonce: &[u8; 12], aad: &[u8], pt: &[u8]) -> Vec<u8> {
        reference_seal!(aws_lc_rs, self, key, nonce, aad, pt)
    }

    /// RustCrypto's reference seal (`aes-gcm`, `chacha20poly1305`): a third,
    /// independent oracle.
    pub fn rustcrypto_seal(self, key: &[u8], nonce: &[u8; 12], aad: &[u8], pt: &[u8]) -> Vec<u8> {
        use aes_gcm::aead::{AeadInOut, KeyInit};
        fn seal<C: AeadInOut + KeyInit>(
            key: &[u8],
            nonce: &[u8; 12],
            aad: &[u8],
            pt: &[u8],
        ) -> Vec<u8> {
            let mut out = pt.to_vec();
            let cipher = C::new_from_slice(key).unwrap();
            let nonce = nonce.as_slice().try_into().unwrap();
            let tag = cipher
                .encrypt_inout_detached(nonce, aad, out.as_mut_slice().into())
                .unwrap();
            out.extend_from_slice(&tag);
            out
        }
        match self {
            Self::Aes128Gcm => seal::<aes_gcm::Aes128Gcm>(key, nonce, aad, pt),
            Self::Aes256Gcm => seal::<aes_gcm::Aes256Gcm>(key, nonce, aad, pt),
            Self::ChaCha20Poly1305 => {
                seal::<chacha20poly1305::ChaCha20Poly1305>(key, nonce, aad, pt)
            }
        }
    }

    /// aws-lc-rs's reference open of ciphertext || tag.
    pub fn aws_lc_open(
        self,
        key: &[u8],
        nonce: &[u8; 12],
        aad: &[u8],
        sealed: &[u8],
    ) -> Option<Vec<u8>> {
        let key = reference_key!(aws_lc_rs, self, key);
        let mut buf = sealed.to_vec();
        let n = key
            .open_in_place(
                aws_lc_rs::aead::Nonce::assume_unique_for_key(*nonce),
                aws_lc_rs::aead::Aad::from(aad),
                &mut buf,
            )
            .ok()?
            .len();
        buf.truncate(n);
        Some(buf)
    }
}

/// Any of the three key types.
pub enum Key {
    Aes128(Aes128Gcm),
    Aes256(Aes256Gcm),
    ChaCha(ChaCha20Poly1305),
}

impl Key {
    pub fn backend(&self) -> Backend {
        match self {
            Self::Aes128(k) => k.backend(),
            Self::Aes256(k) => k.backend(),
            Self::ChaCha(k) => k.backend(),
        }
    }

    pub fn seal_in_place(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        match self {
            Self::Aes128(k) => k.seal_in_place(nonce, aad, buf),
            Self::Aes256(k) => k.seal_in_place(nonce, aad, buf),
            Self::ChaCha(k) => k.seal_in_place(nonce, aad, buf),
        }
    }

    pub fn seal_out_of_place(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        pt: &[u8],
        ct: &mut [u8],
    ) -> [u8; 16] {
        match self {
            Self::Aes128(k) => k.seal_out_of_place(nonce, aad, pt, ct),
            Self::Aes256(k) => k.seal_out_of_place(nonce, aad, pt, ct),
            Self::ChaCha(k) => k.seal_out_of_place(nonce, aad, pt, ct),
        }
    }

    pub fn open_in_place(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; 16],
    ) -> Result<(), OpenError> {
        match self {
            Self::Aes128(k) => k.open_in_place(nonce, aad, buf, tag),
            Self::Aes256(k) => k.open_in_place(nonce, aad, buf, tag),
            Self::ChaCha(k) => k.open_in_place(nonce, aad, buf, tag),
        }
    }

    /// Seals `pt` and returns ciphertext || tag.
    pub fn seal(&self, nonce: &[u8; 12], aad: &[u8], pt: &[u8]) -> Vec<u8> {
        let mut out = pt.to_vec();
        let tag = self.seal_in_place(nonce, aad, &mut out);
        out.extend_from_slice(&tag);
        out
    }

    /// Opens ciphertext || tag; on failure checks the buffer was zeroed.
    pub fn open(&self, nonce: &[u8; 12], aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
        let (ct, tag) = sealed.split_at(sealed.len() - 16);
        let mut buf = ct.to_vec();
        match self.open_in_place(nonce, aad, &mut buf, tag.try_into().unwrap()) {
            Ok(()) => Some(buf),
            Err(OpenError) => {
                assert!(
                    buf.iter().all(|&b| b == 0),
                    "buffer not zeroed after a failed open"
                );
                None
            }
        }
    }
}

/// SplitMix64: a small seeded PRNG, so failures reproduce.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0; n];
        self.fill(&mut v);
        v
    }

    /// Random bytes of a random length in `min..=max`.
    pub fn bytes_between(&mut self, min: usize, max: usize) -> Vec<u8> {
        let n = min + self.below(max - min + 1);
        self.bytes(n)
    }

    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0; N];
        self.fill(&mut a);
        a
    }
}

pub fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        Vec::new()
    } else {
        hex::decode(s).unwrap()
    }
}
