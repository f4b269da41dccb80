//! `rustls::quic` for the TLS 1.3 suites: packet keys and header-protection
//! keys on this crate's engines, behind the packet-number guard.

use std::collections::BTreeMap;
use std::sync::RwLock;

use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::quic::{self, Tag};
use rustls::Error;
use zeroize::{Zeroize, Zeroizing};

use super::guard::PacketNumberGuard;
use super::header::xor_mask;
use super::{nonce, Cipher, SAMPLE_LEN};
use crate::aead::{AnyKey, Backend, BlockKey, Hardening, NONCE_LEN, TAG_LEN};

/// A suite's `rustls::quic::Algorithm`: which cipher, which backend
/// (`None`: the best this CPU runs) and the opt-in hardening.
#[derive(Debug)]
pub(crate) struct QuicAlgorithm {
    pub(crate) cipher: Cipher,
    pub(crate) backend: Option<Backend>,
    pub(crate) hardening: Hardening,
}

impl quic::Algorithm for QuicAlgorithm {
    fn packet_key(&self, key: AeadKey, iv: Iv) -> Box<dyn quic::PacketKey> {
        let iv: [u8; NONCE_LEN] = iv.as_ref().try_into().expect("rustls passes 12-byte IVs");
        let guard = PacketNumberGuard::new(&iv, 0);
        let iv = Zeroizing::new(iv);
        let cipher = self.cipher;
        // One box for the packet key and its AEAD key (`AnyKey::boxed_in`).
        AnyKey::boxed_in(
            cipher,
            key.as_ref(),
            self.backend,
            self.hardening,
            |aead| PacketKey {
                aead,
                iv,
                guard,
                paths: RwLock::new(None),
                cipher,
            },
            |k| &mut k.aead,
        )
        .expect("forced backend was checked at provider setup")
    }

    fn header_protection_key(&self, key: AeadKey) -> Box<dyn quic::HeaderProtectionKey> {
        // The engine family of the packet keys this suite makes.
        let backend = self.backend.unwrap_or_else(|| self.cipher.best_backend());
        BlockKey::boxed(self.cipher, key.as_ref(), backend, self.hardening)
    }

    fn aead_key_len(&self) -> usize {
        self.cipher.key_len()
    }
}

/// A QUIC packet key: the engine key made once, the IV, and one guard per
/// path (path 0 is also the plain, non-multipath nonce).
struct PacketKey {
    aead: AnyKey,
    iv: Zeroizing<[u8; NONCE_LEN]>,
    guard: PacketNumberGuard,
    /// Guards of multipath paths other than 0, made on first use (a B-tree:
    /// path IDs come from the peer, and it needs no random hash state, which
    /// costs every key a few nanoseconds to make), the map itself too (an
    /// empty map's drop still walks it).
    paths: RwLock<Option<BTreeMap<u32, PacketNumberGuard>>>,
    cipher: Cipher,
}

impl PacketKey {
    fn seal(&self, path_id: u32, pn: u64, header: &[u8], payload: &mut [u8]) -> Result<Tag, Error> {
        let nonce = nonce(&self.iv, path_id, pn);
        let checked = if path_id == 0 {
            self.guard.check(&nonce)
        } else {
            let known = self
                .paths
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .and_then(|paths| paths.get(&path_id))
                .map(|g| g.check(&nonce));
            match known {
                Some(result) => result,
                None => self
                    .paths
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(BTreeMap::new)
                    .entry(path_id)
                    .or_insert_with(|| PacketNumberGuard::new(&self.iv, path_id))
                    .check(&nonce),
            }
        };
        checked.map_err(|_| Error::EncryptError)?;
        Ok(Tag::from(
            &self.aead.seal_in_place(&nonce, header, payload)[..],
        ))
    }

    fn open<'a>(
        &self,
        path_id: u32,
        pn: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], Error> {
        let Some(ct_len) = payload.len().checked_sub(TAG_LEN) else {
            payload.zeroize();
            return Err(Error::DecryptError);
        };
        let (ciphertext, tag) = payload.split_at_mut(ct_len);
        let tag: [u8; TAG_LEN] = (&*tag).try_into().expect("16 bytes");
        let nonce = nonce(&self.iv, path_id, pn);
        if self.aead.open(&nonce, header, ciphertext, &tag).is_err() {
            // The engine zeroed the ciphertext; the tag goes too.
            payload.zeroize();
            return Err(Error::DecryptError);
        }
        Ok(&payload[..ct_len])
    }
}

impl quic::PacketKey for PacketKey {
    fn encrypt_in_place(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, Error> {
        self.seal(0, packet_number, header, payload)
    }

    fn encrypt_in_place_for_path(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, Error> {
        self.seal(path_id, packet_number, header, payload)
    }

    fn decrypt_in_place<'a>(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], Error> {
        self.open(0, packet_number, header, payload)
    }

    fn decrypt_in_place_for_path<'a>(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], Error> {
        self.open(path_id, packet_number, header, payload)
    }

    fn tag_len(&self) -> usize {
        TAG_LEN
    }

    fn confidentiality_limit(&self) -> u64 {
        self.cipher.confidentiality_limit()
    }

    fn integrity_limit(&self) -> u64 {
        self.cipher.integrity_limit()
    }
}

/// Applies or removes header protection with `key`. A QUIC
/// header-protection key (kept across key updates, RFC 9001 §5.4) is the
/// block key itself, in the one box rustls holds.
fn xor(
    key: &BlockKey,
    sample: &[u8],
    first: &mut u8,
    pn: &mut [u8],
    protect: bool,
) -> Result<(), Error> {
    let sample: &[u8; SAMPLE_LEN] = sample
        .try_into()
        .map_err(|_| Error::General("sample of invalid length".into()))?;
    if pn.len() > 4 {
        return Err(Error::General("packet number too long".into()));
    }
    // The mask stays in registers (`BlockKey::mask`): no slot to wipe.
    xor_mask(&key.mask(sample), first, pn, protect);
    Ok(())
}

impl quic::HeaderProtectionKey for BlockKey {
    fn encrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), Error> {
        xor(self, sample, first, packet_number, true)
    }

    fn decrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), Error> {
        xor(self, sample, first, packet_number, false)
    }

    fn sample_len(&self) -> usize {
        SAMPLE_LEN
    }
}
