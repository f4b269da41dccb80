//! TLS 1.2 records.
//!
//! - AES-GCM (RFC 5288): `explicit(8) ‖ ciphertext ‖ tag` under
//!   `nonce = salt ‖ explicit`. We send `explicit = BE64(seq)` as RFC 9325
//!   §7.2.1 recommends (rustls's built-in providers send `extra XOR seq`);
//!   the peer's explicit nonce is taken as given (nonce guard O1).
//! - ChaCha20-Poly1305 (RFC 7905): `ciphertext ‖ tag` under
//!   `nonce = iv XOR seq`.
//!
//! Both use the 13-byte `seq ‖ type ‖ version ‖ length` AAD.

use rustls::crypto::cipher::{
    make_tls12_aad, AeadKey, InboundOpaqueMessage, InboundPlainMessage, Iv, KeyBlockShape,
    MessageDecrypter, MessageEncrypter, OutboundOpaqueMessage, OutboundPlainMessage,
    Tls12AeadAlgorithm, UnsupportedOperationError,
};
use rustls::{ConnectionTrafficSecrets, Error};
use zeroize::Zeroizing;

use super::record::{AeadChoice, Opener, Sealer, StaticIv};
use super::MAX_FRAGMENT_LEN;
use crate::aead::{Algorithm, NONCE_LEN, TAG_LEN};
use crate::nonce_guard::{OpenGuard, SealGuard};

const SALT_LEN: usize = 4;
const EXPLICIT_LEN: usize = 8;

impl Tls12AeadAlgorithm for AeadChoice {
    fn encrypter(&self, key: AeadKey, iv: &[u8], _extra: &[u8]) -> Box<dyn MessageEncrypter> {
        match self.kind {
            Algorithm::ChaCha20Poly1305 => {
                let iv = StaticIv::new(iv);
                let guard = SealGuard::masked(&iv.nonce(0));
                self.boxed(
                    &key,
                    |key| ChaChaEncrypter {
                        sealer: Sealer { key, guard },
                        iv,
                    },
                    |e| &mut e.sealer.key,
                )
            }
            // The 8 `extra` key-block bytes are unused: we send BE64(seq).
            _ => {
                let salt = salt(iv);
                let guard = SealGuard::salted(&salt);
                self.boxed(
                    &key,
                    |key| GcmEncrypter {
                        sealer: Sealer { key, guard },
                        salt,
                    },
                    |e| &mut e.sealer.key,
                )
            }
        }
    }

    fn decrypter(&self, key: AeadKey, iv: &[u8]) -> Box<dyn MessageDecrypter> {
        let guard = OpenGuard::new();
        match self.kind {
            Algorithm::ChaCha20Poly1305 => {
                let iv = StaticIv::new(iv);
                self.boxed(
                    &key,
                    |key| ChaChaDecrypter {
                        opener: Opener { key, guard },
                        iv,
                    },
                    |e| &mut e.opener.key,
                )
            }
            _ => {
                let salt = salt(iv);
                self.boxed(
                    &key,
                    |key| GcmDecrypter {
                        opener: Opener { key, guard },
                        salt,
                    },
                    |e| &mut e.opener.key,
                )
            }
        }
    }

    fn key_block_shape(&self) -> KeyBlockShape {
        let enc_key_len = self.kind.key_len();
        match self.kind {
            Algorithm::ChaCha20Poly1305 => KeyBlockShape {
                enc_key_len,
                fixed_iv_len: NONCE_LEN,
                explicit_nonce_len: 0,
            },
            _ => KeyBlockShape {
                enc_key_len,
                fixed_iv_len: SALT_LEN,
                explicit_nonce_len: EXPLICIT_LEN,
            },
        }
    }

    fn extract_keys(
        &self,
        key: AeadKey,
        iv: &[u8],
        _explicit: &[u8],
    ) -> Result<ConnectionTrafficSecrets, UnsupportedOperationError> {
        match self.kind {
            Algorithm::ChaCha20Poly1305 => Ok(self.secrets(key, Iv::copy(iv))),
            // The kernel would count explicit nonces on from whatever it is
            // handed, and the sequence number is unknown here: exporting
            // could make it reuse nonces we already sent.
            _ => Err(UnsupportedOperationError),
        }
    }
}

fn salt(iv: &[u8]) -> Zeroizing<[u8; SALT_LEN]> {
    Zeroizing::new(
        iv.try_into()
            .expect("rustls passes fixed_iv_len() IV bytes"),
    )
}

fn gcm_nonce(salt: &[u8; SALT_LEN], explicit: &[u8; EXPLICIT_LEN]) -> [u8; NONCE_LEN] {
    let mut nonce = [0; NONCE_LEN];
    nonce[..SALT_LEN].copy_from_slice(salt);
    nonce[SALT_LEN..].copy_from_slice(explicit);
    nonce
}

/// Fails like the built-in providers when an authentic record is too big.
fn check_fragment_len(plain: &mut [u8]) -> Result<(), Error> {
    if plain.len() > MAX_FRAGMENT_LEN {
        plain.fill(0);
        return Err(Error::PeerSentOversizedRecord);
    }
    Ok(())
}

struct GcmEncrypter {
    sealer: Sealer,
    salt: Zeroizing<[u8; SALT_LEN]>,
}

impl MessageEncrypter for GcmEncrypter {
    fn encrypt(
        &mut self,
        msg: OutboundPlainMessage<'_>,
        seq: u64,
    ) -> Result<OutboundOpaqueMessage, Error> {
        let payload_len = self.encrypted_payload_len(msg.payload.len());
        let explicit = seq.to_be_bytes();
        let nonce = gcm_nonce(&self.salt, &explicit);
        let aad = make_tls12_aad(seq, msg.typ, msg.version, msg.payload.len());
        let payload = self
            .sealer
            .seal(&nonce, &aad, &explicit, &msg.payload, None, payload_len)?;
        Ok(OutboundOpaqueMessage::new(msg.typ, msg.version, payload))
    }

    fn encrypted_payload_len(&self, payload_len: usize) -> usize {
        payload_len + EXPLICIT_LEN + TAG_LEN
    }
}

struct GcmDecrypter {
    opener: Opener,
    salt: Zeroizing<[u8; SALT_LEN]>,
}

impl MessageDecrypter for GcmDecrypter {
    fn decrypt<'a>(
        &mut self,
        mut msg: InboundOpaqueMessage<'a>,
        seq: u64,
    ) -> Result<InboundPlainMessage<'a>, Error> {
        let payload = &mut msg.payload;
        let Some(plain_len) = payload.len().checked_sub(EXPLICIT_LEN + TAG_LEN) else {
            payload.fill(0);
            return Err(Error::DecryptError);
        };
        let (explicit, body) = payload.split_at_mut(EXPLICIT_LEN);
        let nonce = gcm_nonce(&self.salt, (&*explicit).try_into().expect("8 bytes"));
        let aad = make_tls12_aad(seq, msg.typ, msg.version, plain_len);
        if let Err(e) = self.opener.open(seq, &nonce, &aad, body) {
            explicit.fill(0);
            return Err(e);
        }
        check_fragment_len(&mut body[..plain_len])?;
        Ok(msg.into_plain_message_range(EXPLICIT_LEN..EXPLICIT_LEN + plain_len))
    }
}

struct ChaChaEncrypter {
    sealer: Sealer,
    iv: StaticIv,
}

impl MessageEncrypter for ChaChaEncrypter {
    fn encrypt(
        &mut self,
        msg: OutboundPlainMessage<'_>,
        seq: u64,
    ) -> Result<OutboundOpaqueMessage, Error> {
        let payload_len = self.encrypted_payload_len(msg.payload.len());
        let nonce = self.iv.nonce(seq);
        let aad = make_tls12_aad(seq, msg.typ, msg.version, msg.payload.len());
        let payload = self
            .sealer
            .seal(&nonce, &aad, &[], &msg.payload, None, payload_len)?;
        Ok(OutboundOpaqueMessage::new(msg.typ, msg.version, payload))
    }

    fn encrypted_payload_len(&self, payload_len: usize) -> usize {
        payload_len + TAG_LEN
    }
}

struct ChaChaDecrypter {
    opener: Opener,
    iv: StaticIv,
}

impl MessageDecrypter for ChaChaDecrypter {
    fn decrypt<'a>(
        &mut self,
        mut msg: InboundOpaqueMessage<'a>,
        seq: u64,
    ) -> Result<InboundPlainMessage<'a>, Error> {
        let plain_len = msg.payload.len().saturating_sub(TAG_LEN);
        let nonce = self.iv.nonce(seq);
        let aad = make_tls12_aad(seq, msg.typ, msg.version, plain_len);
        self.opener.open(seq, &nonce, &aad, &mut msg.payload)?;
        check_fragment_len(&mut msg.payload[..plain_len])?;
        msg.payload.truncate(plain_len);
        Ok(msg.into_plain_message())
    }
}
