//! TLS 1.3 records (RFC 8446 §5.2): `E(plaintext ‖ type) ‖ tag` under
//! `nonce = iv XOR seq`, with the 5-byte record header as AAD.

use rustls::crypto::cipher::{
    make_tls13_aad, AeadKey, InboundOpaqueMessage, InboundPlainMessage, Iv, MessageDecrypter,
    MessageEncrypter, OutboundOpaqueMessage, OutboundPlainMessage, Tls13AeadAlgorithm,
    UnsupportedOperationError,
};
use rustls::{ConnectionTrafficSecrets, ContentType, Error, ProtocolVersion};

use super::record::{AeadChoice, Opener, Sealer, StaticIv};
use crate::aead::TAG_LEN;
use crate::nonce_guard::{OpenGuard, SealGuard};

impl Tls13AeadAlgorithm for AeadChoice {
    fn encrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageEncrypter> {
        let iv = StaticIv::new(iv.as_ref());
        let guard = SealGuard::masked(&iv.nonce(0));
        self.boxed(
            &key,
            |key| Tls13Encrypter {
                sealer: Sealer { key, guard },
                iv,
            },
            |e| &mut e.sealer.key,
        )
    }

    fn decrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageDecrypter> {
        let iv = StaticIv::new(iv.as_ref());
        self.boxed(
            &key,
            |key| Tls13Decrypter {
                opener: Opener {
                    key,
                    guard: OpenGuard::new(),
                },
                iv,
            },
            |e| &mut e.opener.key,
        )
    }

    fn key_len(&self) -> usize {
        self.kind.key_len()
    }

    fn extract_keys(
        &self,
        key: AeadKey,
        iv: Iv,
    ) -> Result<ConnectionTrafficSecrets, UnsupportedOperationError> {
        Ok(self.secrets(key, iv))
    }
}

struct Tls13Encrypter {
    sealer: Sealer,
    iv: StaticIv,
}

impl MessageEncrypter for Tls13Encrypter {
    fn encrypt(
        &mut self,
        msg: OutboundPlainMessage<'_>,
        seq: u64,
    ) -> Result<OutboundOpaqueMessage, Error> {
        let payload_len = self.encrypted_payload_len(msg.payload.len());
        let nonce = self.iv.nonce(seq);
        let aad = make_tls13_aad(payload_len);
        let payload = self.sealer.seal(
            &nonce,
            &aad,
            &[],
            &msg.payload,
            Some(msg.typ.into()),
            payload_len,
        )?;
        Ok(OutboundOpaqueMessage::new(
            ContentType::ApplicationData,
            ProtocolVersion::TLSv1_2,
            payload,
        ))
    }

    fn encrypted_payload_len(&self, payload_len: usize) -> usize {
        payload_len + 1 + TAG_LEN
    }
}

struct Tls13Decrypter {
    opener: Opener,
    iv: StaticIv,
}

impl MessageDecrypter for Tls13Decrypter {
    fn decrypt<'a>(
        &mut self,
        mut msg: InboundOpaqueMessage<'a>,
        seq: u64,
    ) -> Result<InboundPlainMessage<'a>, Error> {
        let nonce = self.iv.nonce(seq);
        let aad = make_tls13_aad(msg.payload.len());
        let plain_len = self.opener.open(seq, &nonce, &aad, &mut msg.payload)?;
        msg.payload.truncate(plain_len);
        // Strips padding and the inner type, enforces the 2^14 limit.
        msg.into_tls13_unpadded_message()
    }
}
