//! The macro that defines a backend: its key type and `#[target_feature]`
//! entry points around the generic record logic.

/// Defines a backend's key type (which exists only where `$detected`
/// holds) and its `#[target_feature]` entry points, instantiating the
/// engine with lane type `$lanes`. The compiler spills ChaCha20 state the
/// code cannot wipe, so each call is followed by a stack scrub: after a
/// record longer than `SMALL`, as deep as the kernel's frame measured at
/// run time ([`scrub_below`]); after a short record, `$scrub_small` bytes
/// (0: none); after header-protection blocks, `$scrub_blocks`. Those
/// constants are the depths `tests/stack_residue.rs` needs at opt-levels 3
/// and 2, with room to spare (the zmm short path leaves no secret on the
/// stack, the xmm one does; the ymm one only in its four-set calls, which
/// `small_spills` names and whose frame is scrubbed as a long record's).
/// `$ifma`: the CPU has AVX-512 IFMA
/// (`$detected` includes it and `$features` enables it), and serial
/// Poly1305 runs take the IFMA Poly1305 ([`padded_serial`]).
macro_rules! x86_backend {
    (
        features = $features:literal,
        lanes = $lanes:ty,
        detected = $detected:ident,
        ifma = $ifma:literal,
        scrub_small = $scrub_small:expr,
        scrub_blocks = $scrub_blocks:expr
    ) => {
        /// A ChaCha20-Poly1305 key on this backend, boxed (moving the key
        /// object moves a pointer, not key words) and zeroized on drop.
        pub(crate) struct Key(Box<zeroize::Zeroizing<[u32; 8]>>);

        impl Key {
            /// `None` unless this CPU has the backend's features.
            pub(crate) fn new(
                key: &[u8; 32],
                stack: &mut $crate::aead::secret::SetupStack,
            ) -> Option<Self> {
                if !$crate::cpu::Features::get().$detected {
                    return None;
                }
                Some(Self($crate::aead::chacha20_poly1305::x86_64::key_words(
                    key, stack,
                )))
            }

            pub(crate) fn seal(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                src: &[u8],
                buf: &mut [u8],
            ) -> [u8; $crate::aead::TAG_LEN] {
                use $crate::aead::chacha20_poly1305::x86_64::{small_max, Direction};
                // Short records run in a smaller frame of their own, so
                // they pay for scrubbing only that, if anything (after each
                // call, the stack its frames used is scrubbed: see
                // `scrub_stack`).
                if buf.len() <= small_max::<$lanes>(Direction::Seal) {
                    let top = $crate::aead::secret::stack_pointer();
                    let dir = Direction::Seal;
                    // SAFETY: a `Key` exists only where `new` detected the
                    // features.
                    let (tag, bottom) = unsafe { small(&self.0, nonce, aad, src, buf, dir) };
                    scrub_small(Direction::Seal, buf.len(), top, bottom);
                    return tag;
                }
                let mut ks = $crate::aead::chacha20_poly1305::x86_64::Scratch(
                    [0u8; $crate::aead::chacha20_poly1305::x86_64::seal_scratch_len::<$lanes>()],
                );
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: as above.
                let (tag, bottom) = unsafe { seal(&self.0, &mut ks.0, nonce, aad, src, buf) };
                $crate::aead::secret::scrub_below(top, bottom);
                tag
            }

            pub(crate) fn open(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; $crate::aead::TAG_LEN],
            ) -> Result<(), $crate::aead::OpenError> {
                use $crate::aead::chacha20_poly1305::x86_64::{check, small_max, Direction};
                let expected = if buf.len() <= small_max::<$lanes>(Direction::Open) {
                    let top = $crate::aead::secret::stack_pointer();
                    let dir = Direction::Open;
                    // SAFETY: as for `seal`.
                    let (t, bottom) = unsafe { small(&self.0, nonce, aad, &[], buf, dir) };
                    scrub_small(Direction::Open, buf.len(), top, bottom);
                    t
                } else {
                    let mut ks = $crate::aead::chacha20_poly1305::x86_64::Scratch(
                        [0u8; $crate::aead::chacha20_poly1305::x86_64::scratch_len::<$lanes>()],
                    );
                    let top = $crate::aead::secret::stack_pointer();
                    // SAFETY: as for `seal`.
                    let (t, bottom) = unsafe { open(&self.0, &mut ks.0, nonce, aad, buf) };
                    $crate::aead::secret::scrub_below(top, bottom);
                    t
                };
                check(expected, tag, buf)
            }

            /// The first `B` bytes of the ChaCha20 block of each 16-byte
            /// `counter ‖ nonce` input (RFC 8439 §2.3).
            ///
            /// # Panics
            /// If the lengths differ, or `B > 16`.
            pub(crate) fn blocks<const B: usize>(&self, inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
                assert!(inputs.len() == out.len() && B <= 16, "one output per input");
                if let ([input], [o]) = (inputs, &mut *out) {
                    // One input: in general registers (`scalar.rs`), in a
                    // frame of its own whose spills the scrub reaches.
                    #[inline(never)]
                    fn one<const B: usize>(key: &[u32; 8], input: &[u8; 16], o: &mut [u8; B]) {
                        *o = $crate::aead::chacha20_poly1305::scalar::block_prefix(key, input);
                    }
                    one(&self.0, input, o);
                    $crate::aead::secret::scrub_stack::<
                        { $crate::aead::secret::CHACHA20_ONE_BLOCK },
                    >();
                    return;
                }
                // SAFETY: as for `seal`.
                unsafe { blocks(&self.0, inputs, out) };
                // Several inputs are vertical passes, whose rows spill.
                $crate::aead::secret::scrub_stack::<{ $scrub_blocks }>();
            }
        }

        /// Scrubs the stack after a short record of `n` bytes: the frame
        /// the call used (from `top` down to `bottom`) where it spills
        /// (`small_spills`), else `$scrub_small` bytes.
        #[inline(always)]
        fn scrub_small(
            dir: $crate::aead::chacha20_poly1305::x86_64::Direction,
            n: usize,
            top: usize,
            bottom: usize,
        ) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            if kernel::small_spills::<$lanes>(dir, n) {
                $crate::aead::secret::scrub_below(top, bottom);
            } else if $scrub_small > 0 {
                $crate::aead::secret::scrub_stack::<{ $scrub_small }>();
            }
        }

        #[target_feature(enable = $features)]
        unsafe fn seal(
            key: &[u32; 8],
            ks: &mut [u8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            src: &[u8],
            buf: &mut [u8],
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            // This frame's bottom, for the scrub after the call.
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: the kernel needs only CPU features: this entry point's
            // `#[target_feature]` list provides the lane type's, and IFMA where `$ifma`
            // (reached only through a detected `Key`), and `crypt` checks every length it
            // relies on.
            let tag = unsafe {
                kernel::crypt::<$lanes, $ifma>(
                    key,
                    ks,
                    nonce,
                    aad,
                    src,
                    buf,
                    kernel::Direction::Seal,
                )
            };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn open(
            key: &[u32; 8],
            ks: &mut [u8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            buf: &mut [u8],
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`.
            let tag = unsafe {
                kernel::crypt::<$lanes, $ifma>(
                    key,
                    ks,
                    nonce,
                    aad,
                    &[],
                    buf,
                    kernel::Direction::Open,
                )
            };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn small(
            key: &[u32; 8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            src: &[u8],
            buf: &mut [u8],
            dir: $crate::aead::chacha20_poly1305::x86_64::Direction,
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::x86_64 as kernel;
            // This frame's bottom, for the scrub after the call.
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`; the kernel's `small` asserts the lengths it relies on.
            let tag = unsafe { kernel::small::<$lanes>(key, nonce, aad, src, buf, dir) };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn blocks<const B: usize>(key: &[u32; 8], inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
            // SAFETY: as for `seal`; `independent_blocks` bounds its slices itself.
            unsafe {
                $crate::aead::chacha20_poly1305::x86_64::independent_blocks::<$lanes, B>(
                    key, inputs, out,
                )
            }
        }
    };
}
pub(in crate::aead::chacha20_poly1305) use x86_backend;
