//! The references the AEAD benches time (`interleaved.rs`,
//! `instructions.rs`, `aead.rs`, the `report` binary).

use core::ptr::NonNull;

/// aws-lc-rs's, ring's or BoringSSL's own AEAD (AES-128-GCM or AES-256-GCM
/// by key length, or ChaCha20-Poly1305), behind the in-place interface of
/// ours: the references the benches time.
// ring's key is inline and large; boxing it would add an indirection only
// ring pays.
#[allow(clippy::large_enum_variant)]
pub enum Reference {
    AwsLc(aws_lc_rs::aead::LessSafeKey),
    Ring(ring::aead::LessSafeKey),
    BoringSsl(BoringAead),
}

/// An open failed: the tag does not match.
#[derive(Debug)]
pub struct TagMismatch;

/// BoringSSL's `EVP_AEAD_CTX` (through boring-sys), made once per key like
/// the `LessSafeKey`s; seals and opens in place with a separate 16-byte tag.
pub struct BoringAead(NonNull<boring_sys::EVP_AEAD_CTX>);

impl BoringAead {
    /// BoringSSL's ChaCha20-Poly1305 if `chacha`, else its AES-GCM for `key`
    /// (AES-128 or AES-256 by length).
    ///
    /// # Panics
    /// If BoringSSL rejects the key.
    pub fn new(chacha: bool, key: &[u8]) -> Self {
        // SAFETY: the EVP_aead_* functions return pointers to static tables.
        let aead = unsafe {
            match (chacha, key.len()) {
                (true, _) => boring_sys::EVP_aead_chacha20_poly1305(),
                (false, 16) => boring_sys::EVP_aead_aes_128_gcm(),
                (false, _) => boring_sys::EVP_aead_aes_256_gcm(),
            }
        };
        // SAFETY: `aead` is a valid EVP_AEAD and `key` is readable for
        // `key.len()` bytes; tag length 0 is EVP_AEAD_DEFAULT_TAG_LENGTH (16).
        let ctx = unsafe { boring_sys::EVP_AEAD_CTX_new(aead, key.as_ptr(), key.len(), 0) };
        Self(NonNull::new(ctx).expect("BoringSSL accepts the key"))
    }

    /// Seals `buf` in place and returns the tag.
    ///
    /// # Panics
    /// If BoringSSL fails to seal.
    #[inline(always)]
    pub fn seal_in_place(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        let mut tag = [0u8; 16];
        let mut tag_len = 0usize;
        let (data, len) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: the context is live (freed only on drop); `out == in`
        // (allowed), both `buf.len()` bytes; the tag buffer holds 16 bytes
        // and aliases nothing; nonce and aad are readable for their lengths;
        // no extra input.
        let ok = unsafe {
            boring_sys::EVP_AEAD_CTX_seal_scatter(
                self.0.as_ptr(),
                data,
                tag.as_mut_ptr(),
                &mut tag_len,
                tag.len(),
                nonce.as_ptr(),
                nonce.len(),
                data,
                len,
                core::ptr::null(),
                0,
                aad.as_ptr(),
                aad.len(),
            )
        };
        assert!(ok == 1 && tag_len == 16, "BoringSSL seals");
        tag
    }

    /// Opens `buf` in place; `Err` if `tag` does not match.
    #[inline(always)]
    pub fn open_in_place(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; 16],
    ) -> Result<(), TagMismatch> {
        let (data, len) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: as for sealing: the context is live, `out == in` over
        // `buf.len()` bytes, every input is readable for its length.
        let ok = unsafe {
            boring_sys::EVP_AEAD_CTX_open_gather(
                self.0.as_ptr(),
                data,
                nonce.as_ptr(),
                nonce.len(),
                data,
                len,
                tag.as_ptr(),
                tag.len(),
                aad.as_ptr(),
                aad.len(),
            )
        };
        if ok == 1 {
            Ok(())
        } else {
            Err(TagMismatch)
        }
    }
}

impl Drop for BoringAead {
    fn drop(&mut self) {
        // SAFETY: made by EVP_AEAD_CTX_new, freed once, here.
        unsafe { boring_sys::EVP_AEAD_CTX_free(self.0.as_ptr()) }
    }
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

    /// BoringSSL's likewise.
    pub fn boringssl(chacha: bool, key: &[u8]) -> Self {
        Self::BoringSsl(BoringAead::new(chacha, key))
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
            Self::BoringSsl(k) => Ok(k.seal_in_place(nonce, aad, buf)),
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
    ) -> Result<(), TagMismatch> {
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
            Self::BoringSsl(k) => k.open_in_place(nonce, aad, buf, tag).is_ok(),
        };
        if opened {
            Ok(())
        } else {
            Err(TagMismatch)
        }
    }
}
