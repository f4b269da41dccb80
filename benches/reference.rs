//! The references the AEAD benches time (`interleaved.rs`,
//! `instructions.rs`).

/// aws-lc-rs's or ring's own AEAD (AES-128-GCM or AES-256-GCM by key
/// length, or ChaCha20-Poly1305), behind the in-place interface of ours:
/// the references the benches time.
// ring's key is inline and large; boxing it would add an indirection only
// ring pays.
#[allow(clippy::large_enum_variant)]
pub enum Reference {
    AwsLc(aws_lc_rs::aead::LessSafeKey),
    Ring(ring::aead::LessSafeKey),
}

macro_rules! less_safe_key {
    ($krate:ident, $chacha:expr, $key:expr) => {{
        use $krate::aead;
        let alg = match ($chacha, $key.len()) {
            (true, _) => &aead::CHACHA20_POLY1305,
            (false, 16) => &aead::AES_128_GCM,
            (false, _) => &aead::AES_256_GCM,
        };
        aead::LessSafeKey::new(aead::UnboundKey::new(alg, $key).expect("a valid key"))
    }};
}

impl Reference {
    /// aws-lc-rs's ChaCha20-Poly1305 if `chacha`, else its AES-GCM for `key`.
    pub fn aws_lc(chacha: bool, key: &[u8]) -> Self {
        Self::AwsLc(less_safe_key!(aws_lc_rs, chacha, key))
    }

    /// ring's likewise.
    pub fn ring(chacha: bool, key: &[u8]) -> Self {
        Self::Ring(less_safe_key!(ring, chacha, key))
    }

    /// Seals `buf` in place and returns the tag.
    #[inline(always)]
    pub fn seal_in_place(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        let tag: Result<[u8; 16], _> = match self {
            Self::AwsLc(k) => {
                use aws_lc_rs::aead::{Aad, Nonce};
                let nonce = Nonce::assume_unique_for_key(*nonce);
                let tag = k.seal_in_place_separate_tag(nonce, Aad::from(aad), buf);
                tag.expect("seals").as_ref().try_into()
            }
            Self::Ring(k) => {
                use ring::aead::{Aad, Nonce};
                let nonce = Nonce::assume_unique_for_key(*nonce);
                let tag = k.seal_in_place_separate_tag(nonce, Aad::from(aad), buf);
                tag.expect("seals").as_ref().try_into()
            }
        };
        tag.expect("a 16-byte tag")
    }

    /// Opens `buf` in place; `Err` if `tag` does not match.
    #[inline(always)]
    pub fn open_in_place(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; 16],
    ) -> Result<(), ()> {
        let opened = match self {
            Self::AwsLc(k) => {
                use aws_lc_rs::aead::{Aad, Nonce};
                let nonce = Nonce::assume_unique_for_key(*nonce);
                k.open_in_place_separate_tag(nonce, Aad::from(aad), tag, buf)
                    .is_ok()
            }
            Self::Ring(k) => {
                use ring::aead::{Aad, Nonce, Tag};
                let nonce = Nonce::assume_unique_for_key(*nonce);
                k.open_in_place_separate_tag(nonce, Aad::from(aad), Tag::from(*tag), buf, 0..)
                    .is_ok()
            }
        };
        if opened {
            Ok(())
        } else {
            Err(())
        }
    }
}
