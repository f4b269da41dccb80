//! The macro that defines a backend: its key type and `#[target_feature]`
//! entry points around the generic kernel.

/// Defines a backend's key type (which exists only where `$detected`
/// holds) and its `#[target_feature]` entry points, instantiating the
/// kernel with lane type `$lanes`, `$powers` powers of H per key and `$hx`
/// stored Karatsuba halves (`$powers` or 0; see [`KeyData`]).
macro_rules! x86_backend {
    (
        features = $features:literal,
        lanes = $lanes:ty,
        powers = $powers:literal,
        hx = $hx:literal,
        detected = $detected:ident
    ) => {
        type KeyData<const NR: usize> =
            $crate::aead::aes_gcm::x86_64::KeyData<$lanes, NR, $powers, $hx>;

        /// An AES-GCM key on this backend; `NR` is the number of AES rounds
        /// (10 for 16-byte keys, 14 for 32-byte keys).
        pub(crate) struct Key<const NR: usize>(Box<KeyData<NR>>);

        impl<const NR: usize> Key<NR> {
            /// `None` unless this CPU has the backend's features.
            ///
            /// # Panics
            /// If `key` is not the length `NR` implies.
            pub(crate) fn new(
                key: &[u8],
                stack: &mut $crate::aead::secret::SetupStack,
            ) -> Option<Self> {
                assert_eq!(key.len(), if NR == 10 { 16 } else { 32 }, "AES key length");
                if !$crate::cpu::Features::get().$detected {
                    return None;
                }
                let mut data = KeyData::<NR>::uninit();
                // SAFETY: a `Key` is made only where `new` detected the
                // features; the key length was checked above. `expand`
                // writes every field, so `data` is initialised after it.
                unsafe {
                    expand(&mut data, key, stack);
                    Some(Self(data.assume_init()))
                }
            }

            pub(crate) fn seal(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                src: &[u8],
                buf: &mut [u8],
            ) -> [u8; $crate::aead::TAG_LEN] {
                let hoisted =
                    buf.len() >= <$lanes as $crate::aead::aes_gcm::x86_64::Lanes>::HOIST_SEAL_FROM;
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: a `Key` exists only where `new` detected the features.
                let (tag, bottom) = unsafe { seal(&self.0, nonce, aad, src, buf) };
                if hoisted {
                    $crate::aead::secret::scrub_stack::<
                        { $crate::aead::secret::AES_GCM_HOISTED_SEAL },
                    >();
                } else {
                    $crate::aead::aes_gcm::x86_64::scrub_batches(buf.len(), top, bottom);
                }
                tag
            }

            pub(crate) fn open(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; $crate::aead::TAG_LEN],
            ) -> Result<(), $crate::aead::OpenError> {
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`.
                let (ok, bottom) = unsafe { open(&self.0, nonce, aad, buf, tag) };
                $crate::aead::aes_gcm::x86_64::scrub_batches(buf.len(), top, bottom);
                ok.then_some(()).ok_or($crate::aead::OpenError)
            }

            /// Seals in place and encrypts the 16 bytes at `at` of
            /// ciphertext ‖ tag under `rk` in the same call.
            ///
            /// # Panics
            /// If `at + 16` is beyond ciphertext ‖ tag.
            pub(crate) fn seal_with_block(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                rk: &$crate::aead::aes_gcm::x86_64::RoundKeys<NR>,
                at: usize,
            ) -> ([u8; $crate::aead::TAG_LEN], [u8; 16]) {
                assert!(
                    at.checked_add(16)
                        .is_some_and(|end| end <= buf.len() + $crate::aead::TAG_LEN),
                    "block beyond the tag"
                );
                let extra = $crate::aead::aes_gcm::x86_64::Extra { rk: rk.keys(), at };
                let hoisted =
                    buf.len() >= <$lanes as $crate::aead::aes_gcm::x86_64::Lanes>::HOIST_SEAL_FROM;
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`.
                let (out, bottom) = unsafe { seal_with_block(&self.0, nonce, aad, buf, extra) };
                if hoisted {
                    $crate::aead::secret::scrub_stack::<
                        { $crate::aead::secret::AES_GCM_HOISTED_SEAL },
                    >();
                } else {
                    $crate::aead::aes_gcm::x86_64::scrub_batches(buf.len(), top, bottom);
                }
                out
            }

            /// Seals from an arbitrary pre-counter block J0 (tests only).
            #[cfg(test)]
            pub(crate) fn seal_with_j0(
                &self,
                j0: &[u8; 16],
                aad: &[u8],
                buf: &mut [u8],
            ) -> [u8; $crate::aead::TAG_LEN] {
                // SAFETY: as for `seal`.
                unsafe { seal_with_j0(&self.0, j0, aad, buf) }
            }
        }

        /// The key setup with this backend's features (its lanes compute
        /// the hash-key powers); marks its frame in `stack`.
        #[target_feature(enable = $features)]
        unsafe fn expand<const NR: usize>(
            data: &mut core::mem::MaybeUninit<KeyData<NR>>,
            key: &[u8],
            stack: &mut $crate::aead::secret::SetupStack,
        ) {
            // SAFETY: this entry point enables the backend's features, which include
            // `expand`'s (AES-NI, PCLMULQDQ, SSSE3 and the lane type's), and it is
            // reached only through `Key::new` after detection, which checked the key length.
            unsafe { $crate::aead::aes_gcm::x86_64::expand(data, key, stack) }
        }

        #[target_feature(enable = $features)]
        unsafe fn seal<const NR: usize>(
            key: &KeyData<NR>,
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            src: &[u8],
            buf: &mut [u8],
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            // This frame's bottom, for the scrub after the call.
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: this entry point enables the backend's features, which include
            // the kernel's (AES-NI, PCLMULQDQ, SSSE3 and the lane type's), and it is
            // reached only through a `Key`, which exists only after detection.
            let tag = unsafe { $crate::aead::aes_gcm::x86_64::seal(key, nonce, aad, src, buf) };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn open<const NR: usize>(
            key: &KeyData<NR>,
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            buf: &mut [u8],
            tag: &[u8; $crate::aead::TAG_LEN],
        ) -> (bool, usize) {
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`.
            let ok = unsafe { $crate::aead::aes_gcm::x86_64::open(key, nonce, aad, buf, tag) };
            (ok, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn seal_with_block<const NR: usize>(
            key: &KeyData<NR>,
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            buf: &mut [u8],
            extra: $crate::aead::aes_gcm::x86_64::Extra<'_>,
        ) -> (([u8; $crate::aead::TAG_LEN], [u8; 16]), usize) {
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`.
            let out = unsafe {
                $crate::aead::aes_gcm::x86_64::seal_with_block(key, nonce, aad, buf, extra)
            };
            (out, bottom)
        }

        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn seal_with_j0<const NR: usize>(
            key: &KeyData<NR>,
            j0: &[u8; 16],
            aad: &[u8],
            buf: &mut [u8],
        ) -> [u8; $crate::aead::TAG_LEN] {
            // SAFETY: as for `seal`.
            unsafe { $crate::aead::aes_gcm::x86_64::seal_with_j0(key, j0, aad, buf) }
        }
    };
}
pub(in crate::aead::aes_gcm) use x86_backend;
