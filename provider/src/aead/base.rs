//! The `Base` backend: the base provider's own AEAD (aws-lc-rs's with the
//! default feature, ring's with feature `ring`): behind our engine shape
//! for the public AEAD types, and in the base provider's own shape for the
//! TLS record layer and QUIC header protection (`AnyKey::Base`).
//!
//! It runs wherever none of our engines does or none is the default: every
//! target other than x86-64 (aarch64 servers and laptops, where the NEON
//! ChaCha20 engine is listed but not yet the default; 32-bit targets), and
//! x86-64 CPUs without the features our engines need. The key is set up once, as the
//! base provider's own rustls record layer does (`LessSafeKey`), and every
//! record still goes through our record code and nonce guard, so installing
//! rustls-fusion costs nothing there: record protection runs the same
//! assembly the replaced provider would have run, and by default nothing
//! more (the stack scrub after each call is opt-in, [`Hardening`]).

#[cfg(feature = "aws-lc-rs")]
use aws_lc_rs::aead;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
use ring::aead;
use zeroize::Zeroize;

use super::{Algorithm, Hardening, OpenError, NONCE_LEN, TAG_LEN};

/// The base provider's AEAD for `alg`.
fn base_algorithm(alg: Algorithm) -> &'static aead::Algorithm {
    match alg {
        Algorithm::Aes128Gcm => &aead::AES_128_GCM,
        Algorithm::Aes256Gcm => &aead::AES_256_GCM,
        Algorithm::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
    }
}

/// Scrubs the stack after a call into the base provider for `alg`: its
/// code leaves E(K, J0) and plaintext (AES-GCM), the key, the Poly1305 key
/// and keystream (ChaCha20-Poly1305) in frames down to 2.7 KiB and 1.2 KiB
/// below the call (aws-lc on x86-64; `tests/stack_residue/`).
#[inline(always)]
fn scrub(alg: Algorithm) {
    match alg {
        Algorithm::Aes128Gcm | Algorithm::Aes256Gcm => {
            super::secret::scrub_stack::<{ super::secret::BASE_AES_GCM }>()
        }
        Algorithm::ChaCha20Poly1305 => {
            super::secret::scrub_stack::<{ super::secret::BASE_CHACHA20_POLY1305 }>()
        }
    }
}

/// One key of the base provider's AEAD, and whether every call scrubs the
/// stack the base provider used ([`Hardening::scrub_base_stack`], off by
/// default: what that code leaves is what it leaves without us).
///
/// aws-lc-rs keeps its key schedule behind a pointer and cleanses it when
/// the key is dropped (aws-lc's `OPENSSL_free`). ring keeps its key
/// schedule inline (about 550 bytes) and does not wipe it: it is boxed
/// (which also keeps our engine enums small) and the box is zeroed when the
/// key is dropped. The copies both libraries leave on the stack while
/// building a key are scrubbed by the caller where the key opts in
/// (`Hardening::scrub_base_stack`, `secret::scrub_after_setup`).
pub(crate) struct Base(Inner, Algorithm, bool);

#[cfg(feature = "aws-lc-rs")]
type Inner = aead::LessSafeKey;
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
type Inner = Box<core::mem::ManuallyDrop<aead::LessSafeKey>>;

impl Base {
    /// # Panics
    /// If `key` is not the algorithm's key length (callers pass typed keys).
    /// No per-call scrub until [`Self::harden`] turns it on.
    pub(crate) fn new(alg: Algorithm, key: &[u8]) -> Self {
        let key = aead::UnboundKey::new(base_algorithm(alg), key)
            .expect("key length matches the algorithm");
        #[cfg(feature = "aws-lc-rs")]
        return Self(aead::LessSafeKey::new(key), alg, false);
        #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
        return Self(
            Box::new(core::mem::ManuallyDrop::new(aead::LessSafeKey::new(key))),
            alg,
            false,
        );
    }

    /// [`Self::new`] with `hardening` applied.
    pub(crate) fn hardened(alg: Algorithm, key: &[u8], hardening: Hardening) -> Self {
        let mut key = Self::new(alg, key);
        key.harden(hardening);
        key
    }

    pub(crate) fn algorithm(&self) -> Algorithm {
        self.1
    }

    /// Seals `buf[from..]` in place and appends the tag to `buf`: the shape
    /// the base provider's own rustls record layer seals in (a record
    /// buffer that grows), so nothing is copied between frames of ours.
    /// `from` skips what is not sealed (TLS 1.2's explicit nonce).
    ///
    /// # Panics
    /// If `from > buf.len()`, or the message is beyond the algorithm's
    /// length limit (tens of GiB).
    #[inline(always)]
    pub(crate) fn seal_append<B>(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut B,
        from: usize,
    ) where
        B: AsMut<[u8]> + for<'a> Extend<&'a u8>,
    {
        let nonce = aead::Nonce::assume_unique_for_key(*nonce);
        let aad = aead::Aad::from(aad);
        let sealed = if from == 0 {
            self.0.seal_in_place_append_tag(nonce, aad, buf)
        } else {
            self.0
                .seal_in_place_separate_tag(nonce, aad, &mut buf.as_mut()[from..])
                .map(|tag| buf.extend(tag.as_ref()))
        };
        sealed.expect("message within the algorithm's length limit");
        self.scrub_if_hardened();
    }

    /// Opens `body = ciphertext ‖ tag` in place (the base provider's own
    /// record shape). On failure, including a `body` shorter than a tag,
    /// `body` is all zeros.
    #[inline(always)]
    pub(crate) fn open_within(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        body: &mut [u8],
    ) -> Result<(), OpenError> {
        let nonce = aead::Nonce::assume_unique_for_key(*nonce);
        let opened = self
            .0
            .open_in_place(nonce, aead::Aad::from(aad), body)
            .is_ok();
        self.opened(opened, body)
    }

    /// After an open: the opt-in scrub, then `buf` zeroed on failure (both
    /// libraries may have written to it before the check).
    #[inline(always)]
    fn opened(&self, opened: bool, buf: &mut [u8]) -> Result<(), OpenError> {
        self.scrub_if_hardened();
        if opened {
            Ok(())
        } else {
            buf.zeroize();
            Err(OpenError)
        }
    }

    /// Whether a seal of a separate `src` reads it where it lies (aws-lc's
    /// scatter seal, AES-GCM only: [`Self::seal_apart`], for a tail after
    /// `src` of up to 16 bytes, as TLS's is) rather than copying it into the
    /// buffer first.
    pub(crate) const fn reads_apart(alg: Algorithm) -> bool {
        cfg!(feature = "aws-lc-rs") && !matches!(alg, Algorithm::ChaCha20Poly1305)
    }

    /// Turns the per-call scrub on or off.
    pub(crate) fn harden(&mut self, hardening: Hardening) {
        self.2 = hardening.scrubs_base_stack();
    }

    /// Inlined into the dispatch: an in-place seal reaches a frame that
    /// keeps only the tag's address and the key live across the base
    /// provider's call; a split seal (the public out-of-place seal, TLS
    /// records over 8 KiB on aws-lc-rs's AES-GCM) its own (docs/decisions.md,
    /// "One dispatch frame").
    #[inline(always)]
    pub(crate) fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        if src.is_empty() {
            self.seal_in_place(nonce, aad, buf)
        } else {
            self.seal_split(nonce, aad, src, buf)
        }
    }

    /// `buf` sealed in place.
    #[inline(never)]
    fn seal_in_place(&self, nonce: &[u8; NONCE_LEN], aad: &[u8], buf: &mut [u8]) -> [u8; TAG_LEN] {
        let tag = self.seal_whole(nonce, aad, buf);
        self.scrub_if_hardened();
        tag
    }

    /// `src` then the rest of `buf` (TLS's content type), into `buf`.
    #[inline(never)]
    fn seal_split(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        let tag = self.seal_apart(nonce, aad, src, buf).unwrap_or_else(|| {
            buf[..src.len()].copy_from_slice(src);
            self.seal_whole(nonce, aad, buf)
        });
        self.scrub_if_hardened();
        tag
    }

    /// The opt-in per-call scrub ([`Hardening::scrub_base_stack`]), run in
    /// the frame that called the base provider.
    #[inline(always)]
    fn scrub_if_hardened(&self) {
        if self.2 {
            scrub(self.1);
        }
    }

    /// Seals `buf` in place with the base provider's call.
    #[inline(always)]
    fn seal_whole(&self, nonce: &[u8; NONCE_LEN], aad: &[u8], buf: &mut [u8]) -> [u8; TAG_LEN] {
        // Made here, after any copy: a nonce live across a call is spilled.
        let nonce = aead::Nonce::assume_unique_for_key(*nonce);
        let aad = aead::Aad::from(aad);
        // aws-lc-rs writes the tag straight into ours: no `Tag` to convert.
        #[cfg(feature = "aws-lc-rs")]
        let tag = {
            let mut tag = [0; TAG_LEN];
            self.0
                .seal_in_place_scatter(nonce, aad, buf, &[], &mut tag)
                .map(|()| tag)
        };
        #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
        let tag = self
            .0
            .seal_in_place_separate_tag(nonce, aad, buf)
            .map(|tag| tag.as_ref().try_into().expect("16-byte tag"));
        tag.expect("message within the algorithm's length limit")
    }

    /// ring has no scatter seal: a separate `src` is always copied first.
    #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
    #[inline(always)]
    fn seal_apart(
        &self,
        _: &[u8; NONCE_LEN],
        _: &[u8],
        _: &[u8],
        _: &mut [u8],
    ) -> Option<[u8; TAG_LEN]> {
        None
    }

    /// AES-GCM on aws-lc-rs reads a separate `src` as it writes `buf` (no
    /// copy first): the short tail after it (TLS's content type) goes in as
    /// aws-lc's `extra_in`, its ciphertext and the tag come out in one small
    /// array. `None` where that does not apply. ChaCha20-Poly1305 copies
    /// instead: aws-lc computes a whole keystream block apart for any
    /// `extra_in`, slower than the copy (1 KiB TLS 1.3 writes 1,591 ns
    /// against 1,492, `BASE=1 TLS=1` interleaved bench).
    #[cfg(feature = "aws-lc-rs")]
    #[inline(always)]
    fn seal_apart(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> Option<[u8; TAG_LEN]> {
        const TAIL_MAX: usize = 16;
        if src.is_empty()
            || self.1 == Algorithm::ChaCha20Poly1305
            || src.len() > buf.len()
            || buf.len() > src.len() + TAIL_MAX
        {
            return None;
        }
        let (out, tail) = buf.split_at_mut(src.len());
        let mut extra = [0; TAIL_MAX + TAG_LEN];
        let extra = &mut extra[..tail.len() + TAG_LEN];
        let nonce = aead::Nonce::assume_unique_for_key(*nonce);
        self.0
            .seal_out_of_place_scatter(nonce, aead::Aad::from(aad), src, out, tail, extra)
            .expect("message within the algorithm's length limit");
        let (sealed_tail, tag) = extra.split_at(tail.len());
        tail.copy_from_slice(sealed_tail);
        Some(tag.try_into().expect("16-byte tag"))
    }

    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        let nonce = aead::Nonce::assume_unique_for_key(*nonce);
        let aad = aead::Aad::from(aad);
        #[cfg(feature = "aws-lc-rs")]
        let opened = self.0.open_in_place_separate_tag(nonce, aad, tag, buf);
        #[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
        let opened = self
            .0
            .open_in_place_separate_tag(nonce, aad, aead::Tag::from(*tag), buf, 0..);
        self.opened(opened.is_ok(), buf)
    }
}

// The one `unsafe` outside the x86 engines: zeroing ring's key in place.
#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
#[allow(unsafe_code)]
impl Drop for Base {
    fn drop(&mut self) {
        let key: &mut core::mem::ManuallyDrop<aead::LessSafeKey> = &mut self.0;
        // SAFETY: ring's `LessSafeKey` owns no resources (plain data, no
        // `Drop`), so dropping it in place releases nothing; after that the
        // bytes are overwritten and never read again as a `LessSafeKey`:
        // the `Box` frees them without running any drop glue of the value
        // (`ManuallyDrop`). The pointer comes from a live `&mut` to the
        // whole value, valid for `size_of` bytes of writes.
        unsafe {
            core::mem::ManuallyDrop::drop(key);
            let bytes = (key as *mut core::mem::ManuallyDrop<aead::LessSafeKey>).cast::<u8>();
            for i in 0..core::mem::size_of::<aead::LessSafeKey>() {
                core::ptr::write_volatile(bytes.add(i), 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A split seal (`src`, then a tail already in `buf`) gives what one
    /// in-place seal of the whole message gives, for every tail length
    /// around the out-of-place path's limit and both sides of it.
    #[test]
    fn split_seal_matches_in_place() {
        for (alg, key_len) in [
            (Algorithm::Aes128Gcm, 16),
            (Algorithm::Aes256Gcm, 32),
            (Algorithm::ChaCha20Poly1305, 32),
        ] {
            let key = Base::new(alg, &[0x42; 32][..key_len]);
            for src_len in [1, 15, 16, 17, 513, 4099] {
                for tail_len in 0..=40 {
                    let msg: Vec<u8> = (0..src_len + tail_len)
                        .map(|i| (i * 31 + 7) as u8)
                        .collect();
                    let nonce = [src_len as u8; NONCE_LEN];
                    let aad = [tail_len as u8; 13];
                    let mut whole = msg.clone();
                    let want = key.seal(&nonce, &aad, &[], &mut whole);
                    let mut buf = vec![0xa5; src_len];
                    buf.extend_from_slice(&msg[src_len..]);
                    let got = key.seal(&nonce, &aad, &msg[..src_len], &mut buf);
                    assert_eq!(
                        (got, &buf),
                        (want, &whole),
                        "{alg:?} {src_len} + {tail_len}"
                    );
                }
            }
        }
    }
}
