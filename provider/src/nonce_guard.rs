//! The nonce guard: NIST SP 800-38D nonce-construction checks on every
//! sealed record, and replay/ordering checks on every opened one.
//!
//! rustls already derives nonces correctly; the guard makes that a checked
//! property of this crate instead of an assumption, the way FIPS modules
//! check inside the AEAD. A TLS nonce is a 32-bit fixed field followed by a
//! 64-bit invocation field, masked by the static IV:
//!
//! | suite | fixed field | mask | nonce for record `seq` |
//! |---|---|---|---|
//! | TLS 1.2 AES-GCM | write salt | 0 | `salt ‖ BE64(seq)` |
//! | TLS 1.3, ChaCha20-Poly1305 | `iv[0..4]` | `BE64(iv[4..12])` | `iv XOR (0³² ‖ BE64(seq))` |
//!
//! [`SealGuard::check`] unmasks the counter from the exact nonce bytes about
//! to be used and accepts it only if the fixed field matches, the counter is
//! not exhausted (2⁶⁴−1 is reserved), never goes back and starts at zero.
//! Gaps are allowed. The rule numbers (G4…, O2…) refer to
//! `docs/nonce-guard.md`.

use core::fmt;

use zeroize::Zeroize;

use crate::aead::NONCE_LEN;

/// Why the guard refused a nonce. No state changed and nothing was sealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonceError {
    /// G4: the fixed field (first 4 bytes) differs from the key's.
    FixedFieldMismatch,
    /// G5: the counter is 2⁶⁴−1, which is never used. (Once 2⁶⁴−2 has been
    /// sealed, G11, every other counter is below the floor and is refused
    /// as [`Repeated`](Self::Repeated) or [`Decreased`](Self::Decreased).)
    Exhausted,
    /// G6: the counter was used by the previous record.
    Repeated,
    /// G6: the counter is below one already used.
    Decreased,
    /// G7: the first record under a key must use counter 0.
    NotStartedAtZero,
}

impl fmt::Display for NonceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::FixedFieldMismatch => "nonce fixed field does not match the key's",
            Self::Exhausted => "nonce counter exhausted",
            Self::Repeated => "nonce counter repeated",
            Self::Decreased => "nonce counter decreased",
            Self::NotStartedAtZero => "first nonce counter is not zero",
        })
    }
}

impl std::error::Error for NonceError {}

/// Seal-side guard for one traffic key (G13: one per encrypter, not `Clone`).
#[derive(Debug)]
pub struct SealGuard {
    fixed: [u8; 4],
    mask: u64,
    /// The lowest counter still allowed.
    next: u64,
    started: bool,
}

impl SealGuard {
    /// Guard for `nonce = iv XOR (0³² ‖ BE64(seq))`: TLS 1.3 (all suites) and
    /// TLS 1.2 ChaCha20-Poly1305.
    pub fn masked(iv: &[u8; NONCE_LEN]) -> Self {
        let (fixed, mask) = split(iv);
        Self {
            fixed,
            mask,
            next: 0,
            started: false,
        }
    }

    /// Guard for TLS 1.2 AES-GCM: `nonce = salt ‖ BE64(seq)`.
    pub fn salted(salt: &[u8; 4]) -> Self {
        Self {
            fixed: *salt,
            mask: 0,
            next: 0,
            started: false,
        }
    }

    /// Checks the exact nonce about to be used (G1) and, if it is allowed,
    /// consumes its counter (G9). A rejection changes nothing (G10).
    pub fn check(&mut self, nonce: &[u8; NONCE_LEN]) -> Result<(), NonceError> {
        let (fixed, raw) = split(nonce);
        if fixed != self.fixed {
            return Err(NonceError::FixedFieldMismatch);
        }
        let counter = raw ^ self.mask;
        if counter == u64::MAX {
            return Err(NonceError::Exhausted);
        }
        if counter < self.next {
            return Err(if counter + 1 == self.next {
                NonceError::Repeated
            } else {
                NonceError::Decreased
            });
        }
        if !self.started && counter != 0 {
            return Err(NonceError::NotStartedAtZero);
        }
        // counter < u64::MAX, so this cannot overflow. After 2⁶⁴−2 is sealed
        // `next` is u64::MAX and every later counter is refused (G11).
        self.next = counter + 1;
        self.started = true;
        Ok(())
    }

    /// The lowest counter the next record may use.
    pub fn next_counter(&self) -> u64 {
        self.next
    }
}

impl Drop for SealGuard {
    fn drop(&mut self) {
        self.fixed.zeroize();
        self.mask.zeroize();
    }
}

/// Why the open-side guard refused a record before any decryption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// O2: the sequence number is below one already opened.
    Replayed,
    /// O4: sequence number 2⁶⁴−1 is never valid.
    Exhausted,
}

/// Open-side guard for one traffic key.
///
/// The peer's TLS 1.2 explicit nonce is never constrained (O1); what is
/// checked is rustls's read sequence number.
#[derive(Debug, Default)]
pub struct OpenGuard {
    next: u64,
}

impl OpenGuard {
    /// A guard for a fresh key: sequence numbers start at 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// O2, O4: may a record with read sequence number `seq` be opened?
    pub fn check(&self, seq: u64) -> Result<(), ReplayError> {
        if seq == u64::MAX {
            Err(ReplayError::Exhausted)
        } else if seq < self.next {
            Err(ReplayError::Replayed)
        } else {
            Ok(())
        }
    }

    /// O3: record `seq` opened successfully. Only then does the floor move,
    /// since rustls retries a sequence number during 0-RTT trial decryption.
    ///
    /// Checked in every build: a `seq` that [`check`](Self::check) refuses
    /// changes nothing and returns that error, so the floor never moves
    /// backwards and 2⁶⁴−1 never wraps it to 0.
    pub fn opened(&mut self, seq: u64) -> Result<(), ReplayError> {
        self.check(seq)?;
        self.next = seq + 1;
        Ok(())
    }
}

/// Splits a nonce or IV into its fixed field and big-endian invocation field.
fn split(nonce: &[u8; NONCE_LEN]) -> ([u8; 4], u64) {
    let (fixed, invocation) = nonce.split_at(4);
    (
        fixed.try_into().expect("4 bytes"),
        u64::from_be_bytes(invocation.try_into().expect("8 bytes")),
    )
}
