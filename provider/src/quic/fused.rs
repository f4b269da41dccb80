//! The standalone QUIC API: one call per packet (or per batch) for stacks
//! that hold both keys of a direction and epoch.

use core::fmt;

use zeroize::{Zeroize, Zeroizing};

use super::guard::PacketNumberGuard;
use super::header::xor_mask;
use super::limits::Budget;
use super::{nonce, Cipher};
use crate::aead::{sample_of, AnyKey, Backend, BlockKey, Hardening, NONCE_LEN, TAG_LEN};
use crate::nonce_guard::NonceError;

/// Bytes of ciphertext sampled for header protection (RFC 9001 §5.4.2).
pub const SAMPLE_LEN: usize = 16;

/// Packets whose masks one pass computes in a batch.
const MASK_BATCH: usize = 16;

/// Why a QUIC call refused or failed. A refused seal changed nothing; a
/// failed open zeroed the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuicError {
    /// A key, IV or header-protection key of the wrong length.
    KeyLength,
    /// The requested backend does not run on this CPU.
    BackendUnavailable,
    /// The packet is too short for its header, the tag or the
    /// header-protection sample (RFC 9001 §5.4.2).
    PacketTooShort,
    /// The packet-number bytes in the header are not the low bytes of the
    /// packet number being sealed.
    PacketNumberMismatch,
    /// The packet-number guard refused the nonce.
    Nonce(NonceError),
    /// The packet did not authenticate; its payload was zeroed.
    Authentication,
    /// Sealing would pass the packet limit set with
    /// [`Sealer::limit_packets`] (RFC 9001 §6.6's confidentiality limit):
    /// a key update is due. Nothing was sealed.
    ConfidentialityLimit,
    /// The failed-open limit set with [`Opener::limit_failures`] (RFC 9001
    /// §6.6's integrity limit) is reached: the connection must close.
    /// Nothing was opened.
    IntegrityLimit,
}

impl fmt::Display for QuicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::KeyLength => f.write_str("QUIC key of the wrong length"),
            Self::BackendUnavailable => f.write_str("backend not available on this CPU"),
            Self::PacketTooShort => f.write_str("QUIC packet too short"),
            Self::PacketNumberMismatch => {
                f.write_str("header packet-number bytes do not match the packet number")
            }
            Self::Nonce(e) => write!(f, "packet number refused: {e}"),
            Self::Authentication => f.write_str("QUIC packet authentication failed"),
            Self::ConfidentialityLimit => f.write_str("packet limit of this key reached"),
            Self::IntegrityLimit => f.write_str("failed-open limit of this key reached"),
        }
    }
}

impl std::error::Error for QuicError {}

/// A packet to seal in a batch: `packet` is header ‖ payload ‖ 16 bytes
/// for the tag, the packet number (of the length `packet[0]` encodes)
/// at `pn_offset`.
#[derive(Debug)]
pub struct OutPacket<'a> {
    /// The whole packet, tag room included.
    pub packet: &'a mut [u8],
    /// Where the packet-number field starts.
    pub pn_offset: usize,
    /// The full packet number.
    pub pn: u64,
}

/// A received packet whose header protection a batch removes.
#[derive(Debug)]
pub struct InPacket<'a> {
    /// The whole packet, as received.
    pub packet: &'a mut [u8],
    /// Where the packet-number field starts.
    pub pn_offset: usize,
}

/// What removing header protection revealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderInfo {
    /// Length of the packet-number field, 1 to 4.
    pub pn_len: usize,
    /// The packet number as sent (its low `8 * pn_len` bits); the stack
    /// reconstructs the full one (RFC 9000 §A.3).
    pub truncated_pn: u32,
    /// `pn_offset + pn_len`: where the payload starts.
    pub header_len: usize,
}

/// A packet key, its header-protection key and the IV.
type Keys = (AnyKey, Box<BlockKey>, Zeroizing<[u8; NONCE_LEN]>);

fn keys(
    cipher: Cipher,
    key: &[u8],
    iv: &[u8; NONCE_LEN],
    hp: &[u8],
    backend: Option<Backend>,
    hardening: Hardening,
) -> Result<Keys, QuicError> {
    if key.len() != cipher.key_len() || hp.len() != cipher.key_len() {
        return Err(QuicError::KeyLength);
    }
    let aead = AnyKey::new(cipher, key, backend, hardening).ok_or(QuicError::BackendUnavailable)?;
    let hp = BlockKey::boxed(cipher, hp, aead.backend(), hardening);
    Ok((aead, hp, Zeroizing::new(*iv)))
}

/// Where a packet's parts are: header `[..header_len]`, payload
/// `[header_len..len - 16]`, tag `[len - 16..]`, sample at `pn_offset + 4`.
struct Layout {
    header_len: usize,
    /// Offset of the sample within payload ‖ tag.
    sample_at: usize,
}

/// Checks that `packet` holds its header, the tag and the sample, and that
/// its packet-number bytes are the low bytes of `pn`.
fn layout(packet: &[u8], pn_offset: usize, pn: u64) -> Result<Layout, QuicError> {
    let first = *packet.first().ok_or(QuicError::PacketTooShort)?;
    let pn_len = usize::from(first & 3) + 1;
    // Checked sums: `pn_offset` may come from a peer's length fields, and a
    // wrapped sum would pass the length checks below.
    let ends = pn_offset.checked_add(pn_len).and_then(|header_len| {
        Some((
            header_len,
            header_len.checked_add(TAG_LEN)?,
            pn_offset.checked_add(4 + SAMPLE_LEN)?,
        ))
    });
    let Some((header_len, tag_end, sample_end)) = ends else {
        return Err(QuicError::PacketTooShort);
    };
    if pn_offset == 0 || packet.len() < tag_end || packet.len() < sample_end {
        return Err(QuicError::PacketTooShort);
    }
    // The bytes are the low pn_len bytes of BE64(pn). Compared through a
    // fixed four-byte window (the sample check above keeps it in bounds),
    // the bytes past pn_len masked off by a shift: no loop or branch on the
    // length (RFC 9001 §9.5; docs/quic.md).
    let window: [u8; 4] = packet[pn_offset..pn_offset + 4]
        .try_into()
        .expect("4 bytes");
    let shift = 8 * (4 - pn_len as u32);
    let diff = (u32::from_be_bytes(window) ^ ((pn as u32) << shift)) & (u32::MAX << shift);
    if core::hint::black_box(diff) != 0 {
        return Err(QuicError::PacketNumberMismatch);
    }
    Ok(Layout {
        header_len,
        sample_at: pn_offset + 4 - header_len,
    })
}

/// The sealing half of one QUIC direction and epoch: packet key, IV,
/// header-protection key and the packet-number guard.
pub struct Sealer {
    aead: AnyKey,
    /// Boxed: moving a `Sealer` or `Opener` moves a pointer, not round keys.
    hp: Box<BlockKey>,
    iv: Zeroizing<[u8; NONCE_LEN]>,
    guard: PacketNumberGuard,
    sealed: Budget,
}

impl Sealer {
    /// From the packet key, IV and header-protection key (`"quic key"`,
    /// `"quic iv"`, `"quic hp"`), on the best backend this CPU runs.
    // `new` and `with_backend` are always inlined: the keys are built in
    // `with_hardening`, with no frame of ours above it.
    #[inline(always)]
    pub fn new(
        cipher: Cipher,
        key: &[u8],
        iv: &[u8; NONCE_LEN],
        hp: &[u8],
    ) -> Result<Self, QuicError> {
        Self::with_hardening(cipher, key, iv, hp, None, Hardening::NONE)
    }

    /// As [`Self::new`], on `backend`.
    #[inline(always)]
    pub fn with_backend(
        cipher: Cipher,
        key: &[u8],
        iv: &[u8; NONCE_LEN],
        hp: &[u8],
        backend: Backend,
    ) -> Result<Self, QuicError> {
        Self::with_hardening(cipher, key, iv, hp, Some(backend), Hardening::NONE)
    }

    /// As [`Self::new`], on `backend` (`None`: the best this CPU runs),
    /// with opt-in `hardening`.
    pub fn with_hardening(
        cipher: Cipher,
        key: &[u8],
        iv: &[u8; NONCE_LEN],
        hp: &[u8],
        backend: Option<Backend>,
        hardening: Hardening,
    ) -> Result<Self, QuicError> {
        let (aead, hp, iv) = keys(cipher, key, iv, hp, backend, hardening)?;
        let guard = PacketNumberGuard::new(&iv, 0);
        Ok(Self {
            aead,
            hp,
            iv,
            guard,
            sealed: Budget::unlimited(),
        })
    }

    /// Refuses to seal more than `max` packets with this key
    /// ([`QuicError::ConfidentialityLimit`]); RFC 9001 §6.6's limit for the
    /// cipher is [`Cipher::confidentiality_limit`]. Off by default.
    pub fn limit_packets(mut self, max: u64) -> Self {
        self.sealed.set_limit(max);
        self
    }

    /// Packets sealed with this key so far.
    pub fn packets_sealed(&self) -> u64 {
        self.sealed.used()
    }

    /// The backend the packet key runs on.
    pub fn backend(&self) -> Backend {
        self.aead.backend()
    }

    /// The lowest packet number the next packet may use.
    pub fn next_packet_number(&self) -> u64 {
        self.guard.next_packet_number()
    }

    /// Protects one packet in place: `packet` is header ‖ payload ‖ 16
    /// bytes for the tag, with the unprotected first byte and packet number
    /// (of the length the first byte encodes) at `pn_offset`, which must be
    /// the low bytes of `pn`. Checks the nonce with the guard, seals the
    /// payload with the header as AAD, writes the tag and applies header
    /// protection, in one call. A refusal changes nothing.
    pub fn seal_packet(
        &self,
        packet: &mut [u8],
        pn_offset: usize,
        pn: u64,
    ) -> Result<(), QuicError> {
        let at = layout(packet, pn_offset, pn)?;
        let nonce = nonce(&self.iv, 0, pn);
        self.sealed
            .take(1)
            .map_err(|()| QuicError::ConfidentialityLimit)?;
        if let Err(e) = self.guard.check(&nonce) {
            self.sealed.give_back(1);
            return Err(QuicError::Nonce(e));
        }
        let mut mask = self.seal_one(packet, &at, &nonce);
        protect(packet, pn_offset, &mask);
        mask.zeroize();
        Ok(())
    }

    /// Seals and writes the tag; returns the header-protection mask.
    fn seal_one(&self, packet: &mut [u8], at: &Layout, nonce: &[u8; NONCE_LEN]) -> [u8; 5] {
        let (header, rest) = packet.split_at_mut(at.header_len);
        let (payload, tag_room) = rest.split_at_mut(rest.len() - TAG_LEN);
        let (tag, mask) = self
            .aead
            .seal_with_block(nonce, header, payload, &self.hp, at.sample_at);
        tag_room.copy_from_slice(&tag);
        mask
    }

    /// Protects a batch of packets under this key (a GSO batch): their
    /// packet numbers must strictly increase, and are reserved all at once,
    /// or none is (nothing changes). The packets are sealed back to back;
    /// on ChaCha20-Poly1305 the header-protection masks of up to 16 packets
    /// are then computed in one pass, and on the AES-GCM engines each mask
    /// rides in its packet's last AES pass, as in [`Self::seal_packet`].
    pub fn seal_batch(&self, packets: &mut [OutPacket<'_>]) -> Result<(), QuicError> {
        for p in packets.iter() {
            layout(p.packet, p.pn_offset, p.pn)?;
        }
        // The guard checks the nonces of these packet numbers; each seal
        // below makes its nonce from the same number again (`nonce` is a
        // pure function of it), so no list of them is allocated.
        let nonces = packets.iter().map(|p| nonce(&self.iv, 0, p.pn));
        let n = u64::try_from(packets.len()).unwrap_or(u64::MAX);
        self.sealed
            .take(n)
            .map_err(|()| QuicError::ConfidentialityLimit)?;
        if let Err(e) = self.guard.check_batch(nonces) {
            self.sealed.give_back(n);
            return Err(QuicError::Nonce(e));
        }
        if self.aead.fuses_block(&self.hp) {
            // On the AES-GCM engines each packet's mask rides in its own
            // last AES pass, which the seal runs anyway (docs/decisions.md,
            // "QUIC masks on AES-GCM: the fused slot"): each packet sealed
            // and protected in one visit, as `seal_packet` does.
            for p in packets.iter_mut() {
                let at = layout(p.packet, p.pn_offset, p.pn).expect("checked above");
                let mut mask = self.seal_one(p.packet, &at, &nonce(&self.iv, 0, p.pn));
                protect(p.packet, p.pn_offset, &mask);
                mask.zeroize();
            }
            return Ok(());
        }
        // The other engines seal a chunk, then compute its masks in one
        // pass. Samples are ciphertext (public); the masks are wiped after
        // use.
        let mut samples = [[0u8; SAMPLE_LEN]; MASK_BATCH];
        let mut masks = [[0u8; 5]; MASK_BATCH];
        for chunk in packets.chunks_mut(MASK_BATCH) {
            for (p, sample) in chunk.iter_mut().zip(samples.iter_mut()) {
                let at = layout(p.packet, p.pn_offset, p.pn).expect("checked above");
                let (header, rest) = p.packet.split_at_mut(at.header_len);
                let (payload, tag_room) = rest.split_at_mut(rest.len() - TAG_LEN);
                let tag = self
                    .aead
                    .seal_in_place(&nonce(&self.iv, 0, p.pn), header, payload);
                tag_room.copy_from_slice(&tag);
                *sample = sample_of(payload, &tag, at.sample_at);
            }
            let n = chunk.len();
            self.hp.apply(&samples[..n], &mut masks[..n]);
            for (p, mask) in chunk.iter_mut().zip(&masks) {
                protect(p.packet, p.pn_offset, mask);
            }
            masks[..n].iter_mut().for_each(Zeroize::zeroize);
        }
        Ok(())
    }
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("backend", &self.backend())
            .field("next_packet_number", &self.next_packet_number())
            .finish_non_exhaustive()
    }
}

/// The opening half of one QUIC direction and epoch: packet key, IV and
/// header-protection key. It checks no packet number before opening
/// (packets reorder; duplicate suppression follows decryption).
pub struct Opener {
    aead: AnyKey,
    /// Boxed: moving a `Sealer` or `Opener` moves a pointer, not round keys.
    hp: Box<BlockKey>,
    iv: Zeroizing<[u8; NONCE_LEN]>,
    failed: Budget,
}

impl Opener {
    /// From the packet key, IV and header-protection key, on the best
    /// backend this CPU runs.
    #[inline(always)]
    pub fn new(
        cipher: Cipher,
        key: &[u8],
        iv: &[u8; NONCE_LEN],
        hp: &[u8],
    ) -> Result<Self, QuicError> {
        Self::with_hardening(cipher, key, iv, hp, None, Hardening::NONE)
    }

    /// As [`Self::new`], on `backend`.
    #[inline(always)]
    pub fn with_backend(
        cipher: Cipher,
        key: &[u8],
        iv: &[u8; NONCE_LEN],
        hp: &[u8],
        backend: Backend,
    ) -> Result<Self, QuicError> {
        Self::with_hardening(cipher, key, iv, hp, Some(backend), Hardening::NONE)
    }

    /// As [`Self::new`], on `backend` (`None`: the best this CPU runs),
    /// with opt-in `hardening`.
    pub fn with_hardening(
        cipher: Cipher,
        key: &[u8],
        iv: &[u8; NONCE_LEN],
        hp: &[u8],
        backend: Option<Backend>,
        hardening: Hardening,
    ) -> Result<Self, QuicError> {
        let (aead, hp, iv) = keys(cipher, key, iv, hp, backend, hardening)?;
        Ok(Self {
            aead,
            hp,
            iv,
            failed: Budget::unlimited(),
        })
    }

    /// Refuses to open once `max` packets have failed to authenticate
    /// ([`QuicError::IntegrityLimit`]: the connection must close); RFC 9001
    /// §6.6's limit for the cipher is [`Cipher::integrity_limit`]. Off by
    /// default; failures are counted either way.
    pub fn limit_failures(mut self, max: u64) -> Self {
        self.failed.set_limit(max);
        self
    }

    /// Packets that failed to authenticate under this key so far.
    pub fn failed_opens(&self) -> u64 {
        self.failed.used()
    }

    /// The backend the packet key runs on.
    pub fn backend(&self) -> Backend {
        self.aead.backend()
    }

    /// Removes header protection in place (the first byte and the packet
    /// number field; payload bytes are not touched). Fails without touching
    /// anything if the packet is too short to hold the sample.
    pub fn unprotect_header(
        &self,
        packet: &mut [u8],
        pn_offset: usize,
    ) -> Result<HeaderInfo, QuicError> {
        let sample = sample_at(packet, pn_offset)?;
        // The mask stays in registers (`BlockKey::mask`): no slot to wipe.
        Ok(unmask(packet, pn_offset, &self.hp.mask(&sample)))
    }

    /// Removes header protection from a batch of received packets, their
    /// masks computed together (up to 16 per pass). `out[i]` is packet
    /// `i`'s result; a packet too short for its sample is left untouched.
    ///
    /// # Panics
    /// If `out` is shorter than `packets`.
    pub fn unprotect_headers(
        &self,
        packets: &mut [InPacket<'_>],
        out: &mut [Result<HeaderInfo, QuicError>],
    ) {
        assert!(out.len() >= packets.len(), "one result per packet");
        let mut samples = [[0u8; SAMPLE_LEN]; MASK_BATCH];
        let mut masks = [[0u8; 5]; MASK_BATCH];
        for (chunk, out) in packets
            .chunks_mut(MASK_BATCH)
            .zip(out.chunks_mut(MASK_BATCH))
        {
            for ((p, s), o) in chunk.iter().zip(samples.iter_mut()).zip(out.iter_mut()) {
                match sample_at(p.packet, p.pn_offset) {
                    Ok(sample) => {
                        *s = sample;
                        *o = Ok(HeaderInfo {
                            pn_len: 0,
                            truncated_pn: 0,
                            header_len: 0,
                        });
                    }
                    Err(e) => *o = Err(e),
                }
            }
            let n = chunk.len();
            self.hp.apply(&samples[..n], &mut masks[..n]);
            for ((p, mask), o) in chunk.iter_mut().zip(&masks).zip(out.iter_mut()) {
                if o.is_ok() {
                    *o = Ok(unmask(p.packet, p.pn_offset, mask));
                }
            }
            masks[..n].iter_mut().for_each(Zeroize::zeroize);
        }
    }

    /// Opens `packet[header_len..]` (payload ‖ tag) in place with
    /// `packet[..header_len]` as AAD, for the reconstructed packet number
    /// `pn`; returns the plaintext. On failure the payload and tag are
    /// zeroed.
    pub fn open_packet<'a>(
        &self,
        packet: &'a mut [u8],
        header_len: usize,
        pn: u64,
    ) -> Result<&'a mut [u8], QuicError> {
        if self.failed.exhausted() {
            if let Some(rest) = packet.get_mut(header_len..) {
                rest.zeroize();
            }
            return Err(QuicError::IntegrityLimit);
        }
        if header_len
            .checked_add(TAG_LEN)
            .is_none_or(|end| packet.len() < end)
        {
            if let Some(rest) = packet.get_mut(header_len..) {
                rest.zeroize();
            }
            return Err(QuicError::PacketTooShort);
        }
        let (header, rest) = packet.split_at_mut(header_len);
        let ct_len = rest.len() - TAG_LEN;
        let (payload, tag) = rest.split_at_mut(ct_len);
        let tag_bytes: [u8; TAG_LEN] = (&*tag).try_into().expect("16 bytes");
        let nonce = nonce(&self.iv, 0, pn);
        if self.aead.open(&nonce, header, payload, &tag_bytes).is_err() {
            tag.zeroize();
            // Counted, never refused here: the limit applies to later opens.
            self.failed.count_one();
            return Err(QuicError::Authentication);
        }
        Ok(payload)
    }
}

impl fmt::Debug for Opener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opener")
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

/// Applies header protection with `mask`: the first byte's protected bits
/// and the packet-number bytes it encodes, through a fixed four-byte window
/// so that the work does not depend on the packet-number length (RFC 9001
/// §9.5; bytes past it keep their values). The packet holds its sample
/// (`layout` checked), so four bytes follow `pn_offset`.
fn protect(packet: &mut [u8], pn_offset: usize, mask: &[u8; 5]) {
    let (first, rest) = packet.split_at_mut(1);
    xor_mask(
        mask,
        &mut first[0],
        &mut rest[pn_offset - 1..pn_offset + 3],
        true,
    );
}

/// The sample of a received packet (RFC 9001 §5.4.2: at `pn_offset + 4`).
fn sample_at(packet: &[u8], pn_offset: usize) -> Result<[u8; SAMPLE_LEN], QuicError> {
    let sample = pn_offset
        .checked_add(4)
        .and_then(|at| packet.get(at..at.checked_add(SAMPLE_LEN)?));
    match sample {
        Some(s) if pn_offset > 0 => Ok(s.try_into().expect("16 bytes")),
        _ => Err(QuicError::PacketTooShort),
    }
}

/// Removes the mask from a packet that holds its sample (so at least four
/// bytes follow `pn_offset`).
fn unmask(packet: &mut [u8], pn_offset: usize, mask: &[u8; 5]) -> HeaderInfo {
    let (first, rest) = packet.split_at_mut(1);
    let pn = &mut rest[pn_offset - 1..pn_offset + 3];
    let pn_len = xor_mask(mask, &mut first[0], pn, false);
    // The low pn_len bytes, big-endian, without a branch on pn_len.
    let all = u32::from_be_bytes(pn[..4].try_into().expect("4 bytes"));
    let truncated_pn = ((u64::from(all)) >> (8 * (4 - pn_len))) as u32;
    HeaderInfo {
        pn_len,
        truncated_pn,
        header_len: pn_offset + pn_len,
    }
}
