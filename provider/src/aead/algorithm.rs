//! The three algorithms by one name ([`Algorithm`]: key length, block
//! function, limits), and one key of any of them ([`AnyKey`]): what the
//! TLS record layer and QUIC build per traffic key.

use super::{
    secret, Aes128Gcm, Aes256Gcm, Backend, Base, BlockKey, ChaCha20Poly1305, Hardening, OpenError,
    NONCE_LEN, TAG_LEN,
};

/// An AEAD algorithm, with the block function that goes with it in QUIC
/// header protection (RFC 9001 §5.4.3, §5.4.4): AES-128 or AES-256 (one
/// ECB block) for AES-GCM, ChaCha20 (one block) for ChaCha20-Poly1305.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// AES-128-GCM, AES-128 blocks (16-byte keys).
    Aes128Gcm,
    /// AES-256-GCM, AES-256 blocks (32-byte keys).
    Aes256Gcm,
    /// ChaCha20-Poly1305, ChaCha20 blocks (32-byte keys).
    ChaCha20Poly1305,
}

impl Algorithm {
    /// Length of the AEAD key and of the block function's key.
    pub const fn key_len(self) -> usize {
        match self {
            Self::Aes128Gcm => Aes128Gcm::KEY_LEN,
            Self::Aes256Gcm => Aes256Gcm::KEY_LEN,
            Self::ChaCha20Poly1305 => ChaCha20Poly1305::KEY_LEN,
        }
    }

    /// The backend detection picks for this algorithm.
    pub(crate) fn best_backend(self) -> Backend {
        match self {
            Self::Aes128Gcm => Aes128Gcm::best(),
            Self::Aes256Gcm => Aes256Gcm::best(),
            Self::ChaCha20Poly1305 => ChaCha20Poly1305::best(),
        }
    }

    /// Packets per key before a key update is due (RFC 9001 §6.6), for
    /// [`Sealer::limit_packets`](crate::quic::Sealer::limit_packets)
    /// (`u64::MAX`: none for ChaCha20-Poly1305).
    pub fn confidentiality_limit(self) -> u64 {
        match self {
            Self::Aes128Gcm | Self::Aes256Gcm => 1 << 23,
            Self::ChaCha20Poly1305 => u64::MAX,
        }
    }

    /// Failed opens per key before the connection must close (RFC 9001
    /// §6.6), for [`Opener::limit_failures`](crate::quic::Opener::limit_failures).
    pub fn integrity_limit(self) -> u64 {
        match self {
            Self::Aes128Gcm | Self::Aes256Gcm => 1 << 52,
            Self::ChaCha20Poly1305 => 1 << 36,
        }
    }
}

/// One key of any [`Algorithm`] on one engine.
pub(crate) enum AnyKey {
    Aes128Gcm(Aes128Gcm),
    Aes256Gcm(Aes256Gcm),
    ChaCha20Poly1305(ChaCha20Poly1305),
    /// Any algorithm on [`Backend::Base`], held here rather than inside an
    /// engine enum: one match reaches the base provider's call, and the
    /// record layer seals in its shape (docs/decisions.md, "The record
    /// layer on `Base`"). [`Self::new`] and [`Self::boxed_in`] build every
    /// `Base` key as this variant; the other variants hold our engines
    /// (the engine enums keep a `Base` variant for the public AEAD types).
    Base(Base),
}

impl AnyKey {
    /// The key on `backend`, or on the best this CPU runs where it is
    /// `None`; `None` if `backend` cannot run here for `alg`.
    ///
    /// # Panics
    /// If `key` is not `alg.key_len()` bytes.
    pub(crate) fn new(
        alg: Algorithm,
        key: &[u8],
        backend: Option<Backend>,
        hardening: Hardening,
    ) -> Option<Self> {
        const LEN: &str = "key length matches the algorithm";
        // Resolved once, as in `boxed_in`.
        let backend = backend.unwrap_or_else(|| alg.best_backend());
        if backend == Backend::Base {
            return Some(secret::set_up(Backend::Base, hardening, |_| {
                Self::Base(Base::hardened(alg, key, hardening))
            }));
        }
        Some(match alg {
            Algorithm::Aes128Gcm => Self::Aes128Gcm(Aes128Gcm::with_hardening(
                key.try_into().expect(LEN),
                backend,
                hardening,
            )?),
            Algorithm::Aes256Gcm => Self::Aes256Gcm(Aes256Gcm::with_hardening(
                key.try_into().expect(LEN),
                backend,
                hardening,
            )?),
            Algorithm::ChaCha20Poly1305 => Self::ChaCha20Poly1305(
                ChaCha20Poly1305::with_hardening(key.try_into().expect(LEN), backend, hardening)?,
            ),
        })
    }

    /// `wrap` of the key on `backend` (or on the best this CPU runs where
    /// it is `None`), boxed; `key_of` finds the key in the holder. One
    /// allocation for holder and key:
    /// - AES-GCM (and `Base`): the box is allocated first, then key and
    ///   holder are made and written into it in one setup frame
    ///   ([`secret::set_up`]), scrubbed after where a frame holds key
    ///   material (aarch64; on x86-64 the AES-GCM key data is written from
    ///   registers into its own allocation and the holder holds none).
    /// - ChaCha20-Poly1305 on our engines: key (its words inline and still
    ///   zero) and holder are made and boxed with no key material, then
    ///   the words are written where they lie (`ChaCha20Poly1305::key_in_place`):
    ///   no frame holds them, so no scrub follows.
    ///
    /// `None` if `backend` cannot run here for `alg`.
    ///
    /// # Panics
    /// If `key` is not `alg.key_len()` bytes.
    #[inline(always)]
    pub(crate) fn boxed_in<T>(
        alg: Algorithm,
        key: &[u8],
        backend: Option<Backend>,
        hardening: Hardening,
        wrap: impl FnOnce(Self) -> T,
        key_of: impl FnOnce(&mut T) -> &mut Self,
    ) -> Option<Box<T>> {
        const LEN: &str = "key length matches the algorithm";
        let backend = backend.unwrap_or_else(|| alg.best_backend());
        if alg == Algorithm::ChaCha20Poly1305 && backend != Backend::Base {
            let key: &[u8; 32] = key.try_into().expect(LEN);
            let unkeyed = ChaCha20Poly1305::unkeyed(backend, hardening)?;
            let mut boxed = Box::new(wrap(Self::ChaCha20Poly1305(unkeyed)));
            // The key read through an opaque copy of its address, made after
            // the allocation: no load of it is hoisted above `malloc`, where a
            // live key word would be saved across the call.
            let key = core::hint::black_box(key);
            // A holder whose `key_of` missed the key would keep zero words:
            // a panic, never a zero key.
            let Self::ChaCha20Poly1305(k) = key_of(&mut boxed) else {
                unreachable!("key_of finds the key wrap was given");
            };
            k.key_in_place(key);
            return Some(boxed);
        }
        secret::set_up(backend, hardening, |stack| {
            let slot = Box::<T>::new_uninit();
            let made = match alg {
                _ if backend == Backend::Base => Self::Base(Base::hardened(alg, key, hardening)),
                Algorithm::Aes128Gcm => Self::Aes128Gcm(Aes128Gcm::build(
                    key.try_into().expect(LEN),
                    backend,
                    hardening,
                    stack,
                )?),
                Algorithm::Aes256Gcm => Self::Aes256Gcm(Aes256Gcm::build(
                    key.try_into().expect(LEN),
                    backend,
                    hardening,
                    stack,
                )?),
                Algorithm::ChaCha20Poly1305 => Self::ChaCha20Poly1305(ChaCha20Poly1305::build(
                    key.try_into().expect(LEN),
                    backend,
                    hardening,
                    stack,
                )?),
            };
            Some(Box::write(slot, wrap(made)))
        })
    }

    pub(crate) fn backend(&self) -> Backend {
        match self {
            Self::Aes128Gcm(k) => k.backend(),
            Self::Aes256Gcm(k) => k.backend(),
            Self::ChaCha20Poly1305(k) => k.backend(),
            Self::Base(_) => Backend::Base,
        }
    }

    /// Seals `prefix` followed by `buf[prefix.len()..]` into `buf`.
    #[inline]
    pub(crate) fn seal_split(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        prefix: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        match self {
            Self::Aes128Gcm(k) => k.seal_split(nonce, aad, prefix, buf),
            Self::Aes256Gcm(k) => k.seal_split(nonce, aad, prefix, buf),
            Self::ChaCha20Poly1305(k) => k.seal_split(nonce, aad, prefix, buf),
            Self::Base(k) => k.seal(nonce, aad, prefix, buf),
        }
    }

    /// Seals `buf` in place.
    #[inline]
    pub(crate) fn seal_in_place(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        self.seal_split(nonce, aad, &[], buf)
    }

    /// Opens `buf` in place; on failure `buf` is all zeros.
    #[inline]
    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        match self {
            Self::Aes128Gcm(k) => k.open_in_place(nonce, aad, buf, tag),
            Self::Aes256Gcm(k) => k.open_in_place(nonce, aad, buf, tag),
            Self::ChaCha20Poly1305(k) => k.open_in_place(nonce, aad, buf, tag),
            Self::Base(k) => k.open(nonce, aad, buf, tag),
        }
    }

    /// Whether [`Self::seal_with_block`] runs `block` inside the seal (our
    /// AES-GCM engines with our AES block key) rather than after it.
    pub(crate) fn fuses_block(&self, block: &BlockKey) -> bool {
        // The AES-GCM variants hold our engines (`Self::Base` holds `Base`).
        match self {
            Self::Aes128Gcm(_) | Self::Aes256Gcm(_) => !matches!(block, BlockKey::Base(..)),
            Self::ChaCha20Poly1305(_) | Self::Base(_) => false,
        }
    }

    /// Seals `buf` in place and applies `block` to the 16 bytes at `at` of
    /// ciphertext ‖ tag: in one call where both run on our AES engines
    /// (`fuses_block`), seal then block otherwise. Returns the tag and the
    /// block's first 5 bytes.
    ///
    /// # Panics
    /// If `at + 16` is beyond ciphertext ‖ tag.
    pub(crate) fn seal_with_block(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        block: &BlockKey,
        at: usize,
    ) -> ([u8; TAG_LEN], [u8; 5]) {
        assert!(
            at.checked_add(16)
                .is_some_and(|end| end <= buf.len() + TAG_LEN),
            "block beyond the tag"
        );
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        if let Some(keys) = block.extra_keys() {
            let fused = match self {
                Self::Aes128Gcm(k) => k.seal_fused(nonce, aad, buf, keys, at),
                Self::Aes256Gcm(k) => k.seal_fused(nonce, aad, buf, keys, at),
                Self::ChaCha20Poly1305(_) | Self::Base(_) => None,
            };
            if let Some((tag, out)) = fused {
                let mut five = [0u8; 5];
                five.copy_from_slice(&out[..5]);
                return (tag, five);
            }
        }
        let tag = self.seal_in_place(nonce, aad, buf);
        (tag, block.mask(&super::sample_of(buf, &tag, at)))
    }
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::super::block::BlockKey;
    use super::*;

    /// Every AES-GCM engine that `fuses_block` reports as fusing does run
    /// the block inside its seal: a backend missing from `seal_fused`
    /// would fall back to seal-then-mask with the same bytes, so only this
    /// test sees it.
    #[test]
    fn every_fusing_engine_fuses() {
        for alg in [Algorithm::Aes128Gcm, Algorithm::Aes256Gcm] {
            let key = vec![7u8; alg.key_len()];
            for backend in Aes128Gcm::backends() {
                let aead = AnyKey::new(alg, &key, Some(backend), Hardening::NONE)
                    .expect("a listed backend runs");
                let block = BlockKey::boxed(alg, &key, backend, Hardening::NONE);
                if !aead.fuses_block(&block) {
                    continue;
                }
                let keys = block.extra_keys().expect("our AES block key");
                let mut buf = [0u8; 100];
                let fused = match &aead {
                    AnyKey::Aes128Gcm(k) => k.seal_fused(&[0; NONCE_LEN], b"", &mut buf, keys, 4),
                    AnyKey::Aes256Gcm(k) => k.seal_fused(&[0; NONCE_LEN], b"", &mut buf, keys, 4),
                    AnyKey::ChaCha20Poly1305(_) | AnyKey::Base(_) => unreachable!("our AES-GCM"),
                };
                assert!(fused.is_some(), "{alg:?} on {backend} does not fuse");
            }
        }
    }
}
