//! QUIC packet and header protection (RFC 9001 §5) on this crate's engines.
//!
//! Two ways in:
//!
//! - **Through rustls.** The TLS 1.3 suites carry `quic: Some(..)`, so
//!   quinn's `QuicClientConfig::try_from` / `QuicServerConfig::try_from`
//!   (and anything else built on `rustls::quic`) accept
//!   `default_provider()` as it is. rustls derives the keys; each packet is
//!   sealed (behind the [packet-number guard](PacketNumberGuard)) and its
//!   header protected in two calls, the way rustls's traits are shaped.
//! - **Standalone, for stacks that hold their own keys**: a [`Sealer`] and
//!   an [`Opener`] built from the packet key, IV and header-protection key
//!   bytes. [`Sealer::seal_packet`] guards, seals, writes the tag and
//!   protects the header in one call (on the AES-GCM engines the
//!   header-protection block rides in the packet's last AES pass when its
//!   sample is already written ciphertext); [`Sealer::seal_batch`] does a
//!   GSO batch of packets under one key, their packet numbers reserved at
//!   once (on ChaCha20-Poly1305 with every mask computed in one pass, on
//!   the AES-GCM engines each in its packet's seal); [`Opener`] removes
//!   header protection (one packet or a batch) and opens.
//!
//! ```
//! use rustls_fusion::quic::{Cipher, Opener, Sealer};
//!
//! // RFC 9001 A.5: ChaCha20-Poly1305, a short header with a 3-byte packet number.
//! let key = [0xc6, 0xd9, 0x8f, 0xf3, 0x44, 0x1c, 0x3f, 0xe1, 0xb2, 0x18, 0x20, 0x94, 0xf6,
//!     0x9c, 0xaa, 0x2e, 0xd4, 0xb7, 0x16, 0xb6, 0x54, 0x88, 0x96, 0x0a, 0x7a, 0x98, 0x49,
//!     0x79, 0xfb, 0x23, 0xe1, 0xc8];
//! let iv = [0xe0, 0x45, 0x9b, 0x34, 0x74, 0xbd, 0xd0, 0xe4, 0x4a, 0x41, 0xc1, 0x44];
//! let hp = [0x25, 0xa2, 0x82, 0xb9, 0xe8, 0x2f, 0x06, 0xf2, 0x1f, 0x48, 0x89, 0x17, 0xa4,
//!     0xfc, 0x8f, 0x1b, 0x73, 0x57, 0x36, 0x85, 0x60, 0x85, 0x97, 0xd0, 0xef, 0xcb, 0x07,
//!     0x6b, 0x0a, 0xb7, 0xa7, 0xa4];
//! let sealer = Sealer::new(Cipher::ChaCha20Poly1305, &key, &iv, &hp).unwrap();
//! // header (first byte, packet number 0xbff4 on 3 bytes: pn_offset 1) ‖ payload ‖ room for the tag
//! let mut packet = [0x42, 0x00, 0xbf, 0xf4, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
//! sealer.seal_packet(&mut packet, 1, 654360564).unwrap();
//! assert_eq!(packet[..4], [0x4c, 0xfe, 0x41, 0x89]);
//!
//! let opener = Opener::new(Cipher::ChaCha20Poly1305, &key, &iv, &hp).unwrap();
//! let header = opener.unprotect_header(&mut packet, 1).unwrap();
//! assert_eq!((header.pn_len, header.truncated_pn), (3, 0xbff4));
//! let payload = opener.open_packet(&mut packet, header.header_len, 654360564).unwrap();
//! assert_eq!(payload, [0x01]);
//! ```

mod fused;
mod guard;
mod header;
mod limits;
mod rustls;

pub use self::fused::{HeaderInfo, InPacket, Opener, OutPacket, QuicError, Sealer, SAMPLE_LEN};
pub use self::guard::{PacketNumberGuard, MAX_PACKET_NUMBER};
pub(crate) use self::rustls::QuicAlgorithm;
/// A QUIC packet-protection algorithm: the AEAD of a TLS 1.3 suite and its
/// header-protection function (RFC 9001 §5.4.3, §5.4.4); the crate's one
/// name for the three algorithms, [`aead::Algorithm`](crate::aead::Algorithm).
pub use crate::aead::Algorithm as Cipher;

use crate::aead::NONCE_LEN;

/// RFC 9001 §5.3 (and the multipath draft): `iv XOR (BE32(path_id) ‖
/// BE64(pn))`.
fn nonce(iv: &[u8; NONCE_LEN], path_id: u32, pn: u64) -> [u8; NONCE_LEN] {
    let mut n = *iv;
    for (b, p) in n
        .iter_mut()
        .zip(path_id.to_be_bytes().into_iter().chain(pn.to_be_bytes()))
    {
        *b ^= p;
    }
    n
}
