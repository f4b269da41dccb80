//! The QUIC nonce guard: the TLS guard's seal rules with QUIC's changes
//! (`docs/quic.md`, from RFC 9001 §5.3 and RFC 9000 §12.3):
//!
//! - Q-G1 the counter checked is the one in the exact nonce bytes about to
//!   be used: `c = BE64(N[4..12]) XOR BE64(iv[4..12])`, after the fixed
//!   field `N[0..4]` is checked against `iv[0..4]` (XOR `BE32(path_id)` for
//!   a multipath key's path);
//! - Q-G2 per key and path, packet numbers strictly increase; gaps are
//!   allowed (quinn skips packet numbers on purpose);
//! - Q-G3 no start-at-zero rule: packet numbers continue across key updates,
//!   and 0-RTT and 1-RTT share a number space;
//! - Q-G4 a packet number above 2⁶²−2 is refused, and after 2⁶²−2 every
//!   later one is too (a sender must close before 2⁶²−1);
//! - Q-G5 the state is one atomic, shared by every thread sealing with the
//!   key (rustls's traits take `&self`); a refusal changes nothing;
//! - Q-G6 a batch is a strictly increasing list of packet numbers, reserved
//!   all at once or not at all.
//!
//! The open side checks no packet number before the AEAD: packets reorder,
//! and duplicate suppression is the stack's job after decryption.

use core::sync::atomic::{AtomicU64, Ordering};

use zeroize::Zeroize;

use crate::aead::NONCE_LEN;
use crate::nonce_guard::NonceError;

/// The largest packet number a sender may protect (RFC 9000 §12.3: at
/// 2⁶²−1 it must close the connection instead).
pub const MAX_PACKET_NUMBER: u64 = (1 << 62) - 2;

/// Seal-side guard for one QUIC packet key on one path. Its IV-derived
/// fields are wiped when it is dropped and left out of `Debug`, as the TLS
/// guard's are.
pub struct PacketNumberGuard {
    fixed: [u8; 4],
    mask: u64,
    /// The lowest packet number still allowed.
    next: AtomicU64,
}

impl PacketNumberGuard {
    /// Guard for `nonce = iv XOR (BE32(path_id) ‖ BE64(pn))`; path 0 is the
    /// plain `iv XOR (0³² ‖ BE64(pn))` of RFC 9001 §5.3.
    pub fn new(iv: &[u8; NONCE_LEN], path_id: u32) -> Self {
        let mut fixed: [u8; 4] = iv[..4].try_into().expect("4 bytes");
        for (f, p) in fixed.iter_mut().zip(path_id.to_be_bytes()) {
            *f ^= p;
        }
        Self {
            fixed,
            mask: u64::from_be_bytes(iv[4..].try_into().expect("8 bytes")),
            next: AtomicU64::new(0),
        }
    }

    /// The counter in `nonce`, if its fixed field is this key's (Q-G1).
    fn counter(&self, nonce: &[u8; NONCE_LEN]) -> Result<u64, NonceError> {
        if nonce[..4] != self.fixed {
            return Err(NonceError::FixedFieldMismatch);
        }
        let c = u64::from_be_bytes(nonce[4..].try_into().expect("8 bytes")) ^ self.mask;
        if c > MAX_PACKET_NUMBER {
            return Err(NonceError::Exhausted);
        }
        Ok(c)
    }

    /// Checks the exact nonce about to be used and, if allowed, consumes its
    /// packet number (Q-G1, Q-G2, Q-G4, Q-G5). A refusal changes nothing.
    pub fn check(&self, nonce: &[u8; NONCE_LEN]) -> Result<(), NonceError> {
        let c = self.counter(nonce)?;
        // `next` becomes max(next, c + 1) in one step; `c + 1` cannot
        // overflow (c ≤ 2⁶²−2). If `next` was already above `c`, it stays.
        let prev = self.next.fetch_max(c + 1, Ordering::AcqRel);
        if prev > c {
            return Err(if prev == c + 1 {
                NonceError::Repeated
            } else {
                NonceError::Decreased
            });
        }
        Ok(())
    }

    /// Checks a batch of nonces, in order: every fixed field matches, the
    /// packet numbers strictly increase from at least the next allowed one,
    /// and the last is at most [`MAX_PACKET_NUMBER`]; then reserves them all
    /// at once (Q-G6). A refusal changes nothing. An empty batch is
    /// accepted and changes nothing.
    pub fn check_batch(
        &self,
        nonces: impl IntoIterator<Item = [u8; NONCE_LEN]>,
    ) -> Result<(), NonceError> {
        let mut first = None;
        let mut last: Option<u64> = None;
        for nonce in nonces {
            let c = self.counter(&nonce)?;
            if let Some(l) = last {
                if c <= l {
                    return Err(if c == l {
                        NonceError::Repeated
                    } else {
                        NonceError::Decreased
                    });
                }
            }
            first.get_or_insert(c);
            last = Some(c);
        }
        let (Some(first), Some(last)) = (first, last) else {
            return Ok(());
        };
        let mut next = self.next.load(Ordering::Acquire);
        loop {
            if first < next {
                return Err(if first + 1 == next {
                    NonceError::Repeated
                } else {
                    NonceError::Decreased
                });
            }
            match self.next.compare_exchange_weak(
                next,
                last + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => next = now,
            }
        }
    }

    /// The lowest packet number the next packet may use.
    pub fn next_packet_number(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }
}

impl Drop for PacketNumberGuard {
    fn drop(&mut self) {
        self.fixed.zeroize();
        self.mask.zeroize();
    }
}

impl core::fmt::Debug for PacketNumberGuard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PacketNumberGuard")
            .field("next_packet_number", &self.next_packet_number())
            .finish_non_exhaustive()
    }
}
