//! What TLS 1.2 and TLS 1.3 records share: the key, sealing from rustls's
//! plaintext chunks into the record buffer, and guarded opening.

use rustls::crypto::cipher::{AeadKey, Iv, OutboundChunks, PrefixedPayload};
use rustls::{ConnectionTrafficSecrets, Error};
use zeroize::{Zeroize, Zeroizing};

use crate::aead::{Algorithm, AnyKey, Backend, Base, Hardening, NONCE_LEN, TAG_LEN};
use crate::nonce_guard::{OpenGuard, SealGuard};

/// Which AEAD a suite uses, which backend (if forced) and the opt-in
/// hardening of its keys.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AeadChoice {
    pub(crate) kind: Algorithm,
    /// `None`: the best backend this CPU runs.
    pub(crate) backend: Option<Backend>,
    pub(crate) hardening: Hardening,
}

impl AeadChoice {
    /// `wrap` of one traffic key's AEAD context, in one box with it
    /// (`AnyKey::boxed_in`); `key_of` finds the key in the holder.
    ///
    /// # Panics
    /// If `key` is not `kind.key_len()` bytes (rustls derives exactly that
    /// many), or a forced backend does not run here (checked when the
    /// provider was built).
    pub(crate) fn boxed<T>(
        &self,
        key: &AeadKey,
        wrap: impl FnOnce(AnyKey) -> T,
        key_of: impl FnOnce(&mut T) -> &mut AnyKey,
    ) -> Box<T> {
        AnyKey::boxed_in(
            self.kind,
            key.as_ref(),
            self.backend,
            self.hardening,
            wrap,
            key_of,
        )
        .expect("forced backend was checked at provider setup")
    }

    /// The kTLS view of a key: always the full 12-byte IV.
    pub(crate) fn secrets(&self, key: AeadKey, iv: Iv) -> ConnectionTrafficSecrets {
        match self.kind {
            Algorithm::Aes128Gcm => ConnectionTrafficSecrets::Aes128Gcm { key, iv },
            Algorithm::Aes256Gcm => ConnectionTrafficSecrets::Aes256Gcm { key, iv },
            Algorithm::ChaCha20Poly1305 => ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv },
        }
    }
}

/// A static IV (zeroized on drop, unlike rustls's `Iv`).
pub(crate) struct StaticIv(Zeroizing<[u8; NONCE_LEN]>);

impl StaticIv {
    pub(crate) fn new(iv: &[u8]) -> Self {
        Self(Zeroizing::new(
            iv.try_into().expect("rustls passes 12-byte IVs"),
        ))
    }

    /// RFC 8446 §5.3 / RFC 7905: `iv XOR (0³² ‖ BE64(seq))`.
    pub(crate) fn nonce(&self, seq: u64) -> [u8; NONCE_LEN] {
        let mut nonce = *self.0;
        for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        nonce
    }
}

/// Plaintext up to this long is copied into the record buffer and sealed
/// in place; longer plaintext is read by the engine where it lies (on
/// `Base`, the limit is [`BASE_COPY_MAX`]).
const COPY_MAX: usize = 512;

/// On `Base`, plaintext up to this long is copied and sealed in place even
/// where the base provider could read it apart (aws-lc's AES-GCM scatter
/// seal): below 8 KiB the zero fill that sizes the buffer for a seal apart
/// costs more than the copy saves (docs/decisions.md, "The record layer on
/// `Base`").
const BASE_COPY_MAX: usize = 8192;

/// The sealing half of a traffic key: the AEAD and its nonce guard.
pub(crate) struct Sealer {
    pub(crate) key: AnyKey,
    pub(crate) guard: SealGuard,
}

impl Sealer {
    /// Builds one record payload: `explicit ‖ E(plaintext ‖ inner_type) ‖ tag`
    /// (TLS 1.3's inner content type, RFC 8446 §5.2; `None` for TLS 1.2).
    ///
    /// The nonce is checked first; on refusal nothing is sealed and rustls
    /// gets `EncryptError` (G10, G12). The engine reads a single-chunk
    /// plaintext of more than [`COPY_MAX`] bytes straight from rustls's
    /// buffer and writes the ciphertext into the record, so each such
    /// plaintext byte is read once; shorter plaintext is copied first. A
    /// `Base` key seals as the base provider's rustls provider does, with
    /// the tag appended, but for a plaintext longer than [`BASE_COPY_MAX`]
    /// that it reads apart (`Base::reads_apart`).
    #[inline(always)]
    pub(crate) fn seal(
        &mut self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        explicit: &[u8],
        plaintext: &OutboundChunks<'_>,
        inner_type: Option<u8>,
        payload_len: usize,
    ) -> Result<PrefixedPayload, Error> {
        self.guard.check(nonce).map_err(|_| Error::EncryptError)?;
        let mut payload = PrefixedPayload::with_capacity(payload_len);
        // Bytes go in through the generic `Extend`, compiled here, not the
        // out-of-line `extend_from_slice` (a call each, 26 instructions).
        if !explicit.is_empty() {
            payload.extend(explicit);
        }
        // `Base` seals in the base provider's own record shape (plaintext
        // copied, tag appended, as its rustls provider does), except where
        // it reads a plaintext longer than `BASE_COPY_MAX` where it lies
        // (below).
        if let AnyKey::Base(base) = &self.key {
            let long =
                matches!(*plaintext, OutboundChunks::Single(src) if src.len() > BASE_COPY_MAX);
            if !(long && Base::reads_apart(base.algorithm())) {
                payload.extend_from_chunks(plaintext);
                if let Some(ty) = inner_type {
                    payload.extend(&[ty]);
                }
                base.seal_append(nonce, aad, &mut payload, explicit.len());
                debug_assert_eq!(payload.as_ref().len(), payload_len);
                return Ok(payload);
            }
        }
        let src = match *plaintext {
            // rustls 0.23 gives no way to size the record buffer without
            // writing it; a zero fill is the cheapest such write. Short
            // records are copied instead and sealed in place: the ChaCha20
            // short path (up to 448 bytes) copies its input into the
            // buffer anyway, and the zero fill is one more call
            // (docs/decisions.md, "ChaCha20-Poly1305 record shapes (Intel Xeon)").
            // Our engines, and `Base` past `BASE_COPY_MAX` where it reads
            // apart (above), read a single slice where it lies.
            OutboundChunks::Single(src) if src.len() > COPY_MAX => {
                payload.extend(core::iter::repeat_n(&0, src.len()));
                src
            }
            _ => {
                payload.extend_from_chunks(plaintext);
                &[]
            }
        };
        // The inner content type and room for the tag in one extend; the
        // tag is then stored where it goes, not appended by another call.
        let tail = match inner_type {
            Some(ty) => &[ty; 1 + TAG_LEN][..],
            None => &[0; TAG_LEN][..],
        };
        payload.extend(tail);
        let sealed = &mut payload.as_mut()[explicit.len()..];
        let (body, tag) = sealed.split_at_mut(sealed.len() - TAG_LEN);
        tag.copy_from_slice(&self.key.seal_split(nonce, aad, src, body));
        debug_assert_eq!(payload.as_ref().len(), payload_len);
        Ok(payload)
    }
}

/// The opening half of a traffic key: the AEAD and its replay guard.
pub(crate) struct Opener {
    pub(crate) key: AnyKey,
    pub(crate) guard: OpenGuard,
}

impl Opener {
    /// Opens `body = ciphertext ‖ tag` in place for read sequence `seq` and
    /// returns the plaintext length. Any failure is `DecryptError` and
    /// leaves `body` zeroed (O5).
    #[inline(always)]
    pub(crate) fn open(
        &mut self,
        seq: u64,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        body: &mut [u8],
    ) -> Result<usize, Error> {
        let opened = self.guard.check(seq).is_ok()
            && match &self.key {
                // The base provider's own record shape: the tag read in place.
                AnyKey::Base(base) => base.open_within(nonce, aad, body).is_ok(),
                key => {
                    body.len() >= TAG_LEN && {
                        let (ciphertext, tag) = body.split_at_mut(body.len() - TAG_LEN);
                        let tag = <&[u8; TAG_LEN]>::try_from(&*tag).expect("16-byte tag");
                        key.open(nonce, aad, ciphertext, tag).is_ok()
                    }
                }
            };
        if !opened {
            body.zeroize();
            return Err(Error::DecryptError);
        }
        // `check` passed above, so this moves the floor and cannot fail.
        self.guard.opened(seq).map_err(|_| Error::DecryptError)?;
        Ok(body.len() - TAG_LEN)
    }
}
