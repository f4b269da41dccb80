//! The macros that implement [`Entry`](super::Entry) for a backend:
//! `backend!` (the backend's entry points, detection and scrub depths, and
//! its `Key` type) and `record_entries!` (its record entry points on a
//! lane type).

/// Implements [`Entry`](super::Entry) for a new backend type `Entry` (which has no
/// values) and names its key type `Key`: the trampolines into the kernels
/// with lane type `$lanes`, compiled with `$features`, detected by
/// `Features::$detected`; `$ifma`: serial Poly1305 runs take the IFMA
/// Poly1305 (`padded_serial`; `$detected` includes IFMA and `$features`
/// enables it); `$scrub_small` and `$scrub_blocks`: the fixed depths
/// after a short record (0: none) and after header-protection blocks;
/// optionally `$mid` and `$mid_fn`: the lane type of the records for
/// which `$mid_fn(dir, n, split)` holds (`Entry::MidLanes`, `Entry::mid`), whose
/// features `$features` must include (without them: `$lanes`, never).
macro_rules! backend {
    (
        features = $features:literal,
        lanes = $lanes:ty,
        detected = $detected:ident,
        ifma = $ifma:literal,
        scrub_small = $scrub_small:expr,
        scrub_blocks = $scrub_blocks:expr
    ) => {
        $crate::aead::chacha20_poly1305::kernel::backend!(
            features = $features,
            lanes = $lanes,
            detected = $detected,
            ifma = $ifma,
            scrub_small = $scrub_small,
            scrub_blocks = $scrub_blocks,
            mid_lanes = $lanes,
            mid = |_, _, _| false
        );
    };
    (
        features = $features:literal,
        lanes = $lanes:ty,
        detected = $detected:ident,
        ifma = $ifma:literal,
        scrub_small = $scrub_small:expr,
        scrub_blocks = $scrub_blocks:expr,
        mid_lanes = $mid:ty,
        mid = $mid_fn:expr
    ) => {
        /// This backend, as the key type's parameter.
        pub(crate) enum Entry {}

        /// A ChaCha20-Poly1305 key on this backend.
        pub(crate) type Key = $crate::aead::chacha20_poly1305::kernel::Key<Entry>;

        /// The ChaCha20 block function on this backend.
        pub(crate) type Blocks = $crate::aead::chacha20_poly1305::kernel::Blocks<Entry>;

        // SAFETY: every entry point enables `$features`, which include `$lanes`'s and `$mid`'s
        // features (and IFMA where `$ifma`), and `detected` is the detection of exactly those
        // features.
        unsafe impl $crate::aead::chacha20_poly1305::kernel::Entry for Entry {
            type Lanes = $lanes;
            type Scratch = $crate::aead::chacha20_poly1305::kernel::Scratch<
                { $crate::aead::chacha20_poly1305::kernel::scratch_len::<$lanes>() },
            >;
            type SealScratch = $crate::aead::chacha20_poly1305::kernel::Scratch<
                { $crate::aead::chacha20_poly1305::kernel::seal_scratch_len::<$lanes>() },
            >;
            type MidLanes = $mid;
            type MidScratch = $crate::aead::chacha20_poly1305::kernel::Scratch<
                { $crate::aead::chacha20_poly1305::kernel::scratch_len::<$mid>() },
            >;
            type MidSealScratch = $crate::aead::chacha20_poly1305::kernel::Scratch<
                { $crate::aead::chacha20_poly1305::kernel::seal_scratch_len::<$mid>() },
            >;
            #[inline(always)]
            fn mid(dir: $crate::aead::Direction, n: usize, split: bool) -> bool {
                let mid: fn($crate::aead::Direction, usize, bool) -> bool = $mid_fn;
                mid(dir, n, split)
            }

            #[inline(always)]
            fn detected() -> bool {
                $crate::cpu::Features::get().$detected
            }

            #[inline(always)]
            fn scrub_small() {
                if $scrub_small > 0 {
                    $crate::aead::secret::scrub_stack::<{ $scrub_small }>();
                }
            }

            #[inline(always)]
            fn scrub_blocks() {
                $crate::aead::secret::scrub_stack::<{ $scrub_blocks }>();
            }

            $crate::aead::chacha20_poly1305::kernel::record_entries!(
                features = $features,
                lanes = $lanes,
                ifma = $ifma,
                seal = seal,
                open = open
            );

            #[target_feature(enable = $features)]
            unsafe fn small(
                key: &[u32; 8],
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                src: &[u8],
                buf: &mut [u8],
                dir: $crate::aead::Direction,
                fused: bool,
            ) -> ([u8; $crate::aead::TAG_LEN], usize) {
                use $crate::aead::chacha20_poly1305::kernel;
                // This frame's bottom, for the scrub after the call.
                let bottom = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`; the kernel's `small` asserts the lengths it relies on.
                let tag = unsafe { kernel::small::<$lanes>(key, nonce, aad, src, buf, dir, fused) };
                (tag, bottom)
            }

            #[target_feature(enable = $features)]
            unsafe fn one_block<const B: usize>(key: &[u32; 8], input: &[u8; 16]) -> [u8; B] {
                // SAFETY: as for `seal`.
                unsafe {
                    $crate::aead::chacha20_poly1305::kernel::one_block::<$lanes, B>(key, input)
                }
            }

            #[target_feature(enable = $features)]
            unsafe fn blocks<const B: usize>(
                key: &[u32; 8],
                inputs: &[[u8; 16]],
                out: &mut [[u8; B]],
            ) {
                // SAFETY: as for `seal`; `independent_blocks` bounds its slices itself.
                unsafe {
                    $crate::aead::chacha20_poly1305::kernel::independent_blocks::<$lanes, B>(
                        key, inputs, out,
                    )
                }
            }

            // Scalar Poly1305 runs: the IFMA runs and phases are tuned for zmm.
            $crate::aead::chacha20_poly1305::kernel::record_entries!(
                features = $features,
                lanes = $mid,
                ifma = false,
                seal = seal_mid,
                open = open_mid
            );

            #[target_feature(enable = $features)]
            unsafe fn small_mid(
                key: &[u32; 8],
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
            ) -> ([u8; $crate::aead::TAG_LEN], usize) {
                use $crate::aead::chacha20_poly1305::kernel;
                let bottom = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`: `$features` include `$mid`'s as well as `$lanes`'s; the
                // kernel's `small` asserts the lengths it relies on.
                let tag = unsafe {
                    kernel::small::<$mid>(key, nonce, aad, &[], buf, kernel::Direction::Open, false)
                };
                (tag, bottom)
            }
        }
    };
}
pub(crate) use backend;

/// A backend's two record entry points, `$seal` and `$open`, into the
/// kernel on lane type `$lanes` (`$ifma`: serial Poly1305 runs on IFMA),
/// compiled with `$features`, which must include `$lanes`'s (and IFMA's
/// where `$ifma`; `zmm_split`: the key's `Features::zmm_split`, which
/// `crypt` reads with IFMA): `backend!` makes `seal`/`open` on its lanes and
/// `seal_mid`/`open_mid` on its mid-size lanes with it. Each returns the
/// tag and its frame's bottom, for the scrub after the call.
macro_rules! record_entries {
    (
        features = $features:literal,
        lanes = $lanes:ty,
        ifma = $ifma:literal,
        seal = $seal:ident,
        open = $open:ident
    ) => {
        #[target_feature(enable = $features)]
        unsafe fn $seal(
            key: &[u32; 8],
            ks: &mut [u8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            src: &[u8],
            buf: &mut [u8],
            zmm_split: bool,
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::kernel;
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
                    zmm_split,
                )
            };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn $open(
            key: &[u32; 8],
            ks: &mut [u8],
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            buf: &mut [u8],
            zmm_split: bool,
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            use $crate::aead::chacha20_poly1305::kernel;
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `$seal`.
            let tag = unsafe {
                kernel::crypt::<$lanes, $ifma>(
                    key,
                    ks,
                    nonce,
                    aad,
                    &[],
                    buf,
                    kernel::Direction::Open,
                    zmm_split,
                )
            };
            (tag, bottom)
        }
    };
}
pub(crate) use record_entries;
