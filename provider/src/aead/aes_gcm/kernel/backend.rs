//! A backend: its `#[target_feature]` entry points ([`Entry`], which
//! `backend!` implements for each backend) and the key type over them,
//! written once ([`Key`]).

use super::{
    open_loop, scrub_batches, seal_loop, short, Extra, KeyBox, Lanes, Loops, RoundKeys, ALWAYS,
    BY_LENGTH, LAST, LOOP, NEVER,
};
use crate::aead::secret::{self, Frame, SetupStack};
use crate::aead::{Direction, OpenError, NONCE_LEN, TAG_LEN};

/// A backend's `#[target_feature]` entry points into the kernel for keys
/// of `NR` AES rounds. Each returns, beside its result, its frame's stack
/// pointer, for the scrub after the call.
///
/// # Safety
/// Implementing: `Data` is `KeyData<Self::Lanes, NR, _, _>` and every
/// function enables the kernel's features for `Self::Lanes` (the block
/// features and the lane type's); `detected` returns true only on
/// a CPU with all of them (`backend!` does both). Calling: the
/// functions only after `detected` returned true, `expand` with a key of
/// `NR`'s length.
pub(crate) unsafe trait Entry<const NR: usize> {
    type Lanes: Lanes;
    type Data;
    fn detected() -> bool;
    fn uninit() -> KeyBox<core::mem::MaybeUninit<Self::Data>>;
    unsafe fn expand(
        data: &mut core::mem::MaybeUninit<Self::Data>,
        key: &[u8],
        stack: &mut SetupStack,
    );
    /// A seal compiled with one batch loop (`HOIST`, `record.rs`'s
    /// `seal_loop`): `ALWAYS` from `Lanes::HOIST_SEAL_FROM` bytes, `LOOP`
    /// from the key's `Loops::seal`, below both `LAST` where the remainder
    /// is over half a batch and `NEVER` otherwise, each instance a frame of
    /// its own, so that the shorter seals' frame (scrubbed after each
    /// record) holds none of the other paths' spill slots and arrays.
    unsafe fn seal<const HOIST: u8>(
        key: &Self::Data,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> ([u8; TAG_LEN], usize);
    /// An open compiled with the lane type's own loop (`LOOP`, from the
    /// key's `Loops::open` bytes), without it (`NEVER`), or with it
    /// chosen by length (`BY_LENGTH`, one instance for every open where
    /// the lane type does not set `Lanes::SPLIT_OPEN`).
    unsafe fn open<const HOIST: u8>(
        key: &Self::Data,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> (bool, usize);
    /// A seal and a block in one call, split by `HOIST` as `seal` is.
    unsafe fn seal_with_block<const HOIST: u8>(
        key: &Self::Data,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        extra: Extra<'_>,
    ) -> (([u8; TAG_LEN], [u8; 16]), usize);
    #[cfg(test)]
    unsafe fn seal_with_j0(
        key: &Self::Data,
        j0: &[u8; 16],
        aad: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN];
}

/// `$placed`: `$here` called from a frame aligned to half a page (it holds
/// a [`secret::HalfPage`]); `#[inline(never)]`, so the alignment is that
/// frame's alone.
macro_rules! placed {
    ($placed:ident => $here:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        #[inline(never)]
        fn $placed(&self, $($arg: $ty),*) -> $ret {
            let place = secret::HalfPage::new();
            place.hold();
            self.$here($($arg),*)
        }
    };
}

/// An AES-GCM key on backend `E`; `NR` is the number of AES rounds (10 for
/// 16-byte keys, 14 for 32-byte keys). Exists only where `E` was detected.
/// The second field: from how many bytes its seals and opens take the
/// `LOOP` instance on this CPU (`Lanes::loops_here`).
pub(crate) struct Key<E: Entry<NR>, const NR: usize>(KeyBox<E::Data>, Loops);

impl<E: Entry<NR>, const NR: usize> Key<E, NR> {
    /// `None` unless this CPU has the backend's features.
    ///
    /// # Panics
    /// If `key` is not the length `NR` implies.
    pub(crate) fn new(key: &[u8], stack: &mut SetupStack) -> Option<Self> {
        assert_eq!(key.len(), if NR == 10 { 16 } else { 32 }, "AES key length");
        if !E::detected() {
            return None;
        }
        let mut data = E::uninit();
        // SAFETY: detection passed and the key length was checked above (`Entry`'s contract).
        // `expand` writes every field, so `data` is initialised after it.
        unsafe {
            E::expand(&mut data, key, stack);
            Some(Self(
                data.assume_init(),
                <E::Lanes as Lanes>::loops_here(NR),
            ))
        }
    }

    /// The address of the key's data, how far into its allocation it lies
    /// ([`KeyBox`]) and the alignment its type asks: the tests make keys at
    /// every offset.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn placement(&self) -> (usize, usize, usize) {
        let data = &*self.0;
        (
            core::ptr::from_ref(data) as usize,
            self.0.lead(),
            core::mem::align_of_val(data),
        )
    }

    /// This key with another CPU's `LOOP` lengths: the tests run each
    /// CPU's on every CPU.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn with_loops(mut self, loops: Loops) -> Self {
        self.1 = loops;
        self
    }

    /// What to scrub after a seal of `n` bytes whose entry point reached
    /// `bottom`.
    #[inline(always)]
    fn scrub_seal(frame: &mut Frame, n: usize, aad_len: usize, bottom: usize) {
        if <E::Lanes as Lanes>::HOIST_SPILLS_BELOW_FRAME
            && n >= <E::Lanes as Lanes>::HOIST_SEAL_FROM
        {
            // Hoisted keys spill beyond the measured frame.
            frame.at_least(secret::AES_GCM_HOISTED_SEAL);
        } else {
            scrub_batches::<E::Lanes, NR>(frame, Direction::Seal, n, aad_len, bottom);
        }
    }

    /// A record past the short path (which, with the zmm one pass of the
    /// same lengths, spills nothing) is sealed from
    /// a frame aligned to half a page ([`secret::HalfPage`]); a short one
    /// skips that call, which costs about a nanosecond.
    pub(crate) fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        if short(buf.len(), aad.len()) {
            self.seal_here(nonce, aad, src, buf)
        } else {
            self.seal_placed(nonce, aad, src, buf)
        }
    }

    placed!(seal_placed => seal_here(
        nonce: &[u8; NONCE_LEN], aad: &[u8], src: &[u8], buf: &mut [u8]
    ) -> [u8; TAG_LEN]);

    #[inline(always)]
    fn seal_here(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        let mut frame = Frame::enter();
        // SAFETY: a `Key` exists only where `new` detected the features.
        let (tag, bottom) = unsafe {
            match seal_loop::<E::Lanes, NR>(buf.len(), self.1.seal) {
                ALWAYS => E::seal::<ALWAYS>(&self.0, nonce, aad, src, buf),
                LOOP => E::seal::<LOOP>(&self.0, nonce, aad, src, buf),
                LAST => E::seal::<LAST>(&self.0, nonce, aad, src, buf),
                _ => E::seal::<NEVER>(&self.0, nonce, aad, src, buf),
            }
        };
        Self::scrub_seal(&mut frame, buf.len(), aad.len(), bottom);
        tag
    }

    /// As `seal`: past the short path, from a half-page-aligned frame.
    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        if short(buf.len(), aad.len()) {
            self.open_here(nonce, aad, buf, tag)
        } else {
            self.open_placed(nonce, aad, buf, tag)
        }
    }

    placed!(open_placed => open_here(
        nonce: &[u8; NONCE_LEN], aad: &[u8], buf: &mut [u8], tag: &[u8; TAG_LEN]
    ) -> Result<(), OpenError>);

    #[inline(always)]
    fn open_here(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        let mut frame = Frame::enter();
        // SAFETY: as for `seal`.
        let (ok, bottom) = unsafe {
            match open_loop::<E::Lanes, NR>(buf.len(), self.1.open) {
                LOOP => E::open::<LOOP>(&self.0, nonce, aad, buf, tag),
                NEVER => E::open::<NEVER>(&self.0, nonce, aad, buf, tag),
                _ => E::open::<BY_LENGTH>(&self.0, nonce, aad, buf, tag),
            }
        };
        scrub_batches::<E::Lanes, NR>(&mut frame, Direction::Open, buf.len(), aad.len(), bottom);
        ok.then_some(()).ok_or(OpenError)
    }

    /// Seals in place and encrypts the 16 bytes at `at` of
    /// ciphertext ‖ tag under `rk` in the same call.
    ///
    /// # Panics
    /// If `at + 16` is beyond ciphertext ‖ tag.
    pub(crate) fn seal_with_block(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        rk: &RoundKeys<NR>,
        at: usize,
    ) -> ([u8; TAG_LEN], [u8; 16]) {
        assert!(
            at.checked_add(16)
                .is_some_and(|end| end <= buf.len() + TAG_LEN),
            "block beyond the tag"
        );
        let extra = Extra { rk: rk.keys(), at };
        if short(buf.len(), aad.len()) {
            self.seal_with_block_here(nonce, aad, buf, extra)
        } else {
            self.seal_with_block_placed(nonce, aad, buf, extra)
        }
    }

    placed!(seal_with_block_placed => seal_with_block_here(
        nonce: &[u8; NONCE_LEN], aad: &[u8], buf: &mut [u8], extra: Extra<'_>
    ) -> ([u8; TAG_LEN], [u8; 16]));

    #[inline(always)]
    fn seal_with_block_here(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        extra: Extra<'_>,
    ) -> ([u8; TAG_LEN], [u8; 16]) {
        let mut frame = Frame::enter();
        // SAFETY: as for `seal`.
        let (out, bottom) = unsafe {
            match seal_loop::<E::Lanes, NR>(buf.len(), self.1.seal) {
                ALWAYS => E::seal_with_block::<ALWAYS>(&self.0, nonce, aad, buf, extra),
                LOOP => E::seal_with_block::<LOOP>(&self.0, nonce, aad, buf, extra),
                LAST => E::seal_with_block::<LAST>(&self.0, nonce, aad, buf, extra),
                _ => E::seal_with_block::<NEVER>(&self.0, nonce, aad, buf, extra),
            }
        };
        Self::scrub_seal(&mut frame, buf.len(), aad.len(), bottom);
        out
    }

    /// Seals from an arbitrary pre-counter block J0 (tests only).
    #[cfg(test)]
    pub(crate) fn seal_with_j0(&self, j0: &[u8; 16], aad: &[u8], buf: &mut [u8]) -> [u8; TAG_LEN] {
        // SAFETY: as for `seal`.
        unsafe { E::seal_with_j0(&self.0, j0, aad, buf) }
    }
}

/// Implements [`Entry`] for a new backend type `Entry` (which has no
/// values) and names its key type `Key<NR>`: the trampolines into the
/// kernel with lane type `$lanes`, `$powers` powers of H per key and `$hx`
/// stored Karatsuba halves (`$powers` or 0; see [`KeyData`]), compiled
/// with `$features`, detected by `Features::$detected`.
macro_rules! backend {
    (
        features = $features:literal,
        lanes = $lanes:ty,
        powers = $powers:literal,
        hx = $hx:literal,
        detected = $detected:ident
    ) => {
        /// This backend, as the key type's parameter.
        pub(crate) enum Entry {}

        /// An AES-GCM key on this backend.
        pub(crate) type Key<const NR: usize> = $crate::aead::aes_gcm::kernel::Key<Entry, NR>;

        type KeyData<const NR: usize> =
            $crate::aead::aes_gcm::kernel::KeyData<$lanes, NR, $powers, $hx>;

        // SAFETY: `Data` is the kernel's key data for `$lanes`; every entry point enables
        // `$features`, which include the kernel's features for `$lanes`, and `detected` is the
        // detection of exactly those features.
        unsafe impl<const NR: usize> $crate::aead::aes_gcm::kernel::Entry<NR> for Entry {
            type Lanes = $lanes;
            type Data = KeyData<NR>;

            #[inline(always)]
            fn detected() -> bool {
                $crate::cpu::Features::get().$detected
            }

            #[inline(always)]
            fn uninit() -> $crate::aead::aes_gcm::kernel::KeyBox<core::mem::MaybeUninit<KeyData<NR>>> {
                KeyData::<NR>::uninit()
            }

            #[target_feature(enable = $features)]
            unsafe fn expand(
                data: &mut core::mem::MaybeUninit<KeyData<NR>>,
                key: &[u8],
                stack: &mut $crate::aead::secret::SetupStack,
            ) {
                // SAFETY: this entry point enables the backend's features, which include
                // `expand`'s (the block features and the lane type's); the caller
                // detected them and checked the key length (`Entry`'s contract).
                unsafe { $crate::aead::aes_gcm::kernel::expand(data, key, stack) }
            }

            #[target_feature(enable = $features)]
            unsafe fn seal<const HOIST: u8>(
                key: &KeyData<NR>,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                src: &[u8],
                buf: &mut [u8],
            ) -> ([u8; $crate::aead::TAG_LEN], usize) {
                // This frame's bottom, for the scrub after the call.
                let bottom = $crate::aead::secret::stack_pointer();
                // SAFETY: this entry point enables the kernel's features (the block
                // features and the lane type's), and the caller detected them.
                let tag = unsafe {
                    $crate::aead::aes_gcm::kernel::seal::<_, NR, $powers, $hx, HOIST>(
                        key, nonce, aad, src, buf,
                    )
                };
                (tag, bottom)
            }

            #[target_feature(enable = $features)]
            unsafe fn open<const HOIST: u8>(
                key: &KeyData<NR>,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; $crate::aead::TAG_LEN],
            ) -> (bool, usize) {
                let bottom = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`.
                let ok = unsafe {
                    $crate::aead::aes_gcm::kernel::open::<_, NR, $powers, $hx, HOIST>(
                        key, nonce, aad, buf, tag,
                    )
                };
                (ok, bottom)
            }

            #[target_feature(enable = $features)]
            unsafe fn seal_with_block<const HOIST: u8>(
                key: &KeyData<NR>,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                extra: $crate::aead::aes_gcm::kernel::Extra<'_>,
            ) -> (([u8; $crate::aead::TAG_LEN], [u8; 16]), usize) {
                let bottom = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`.
                let out = unsafe {
                    $crate::aead::aes_gcm::kernel::seal_with_block::<_, NR, $powers, $hx, HOIST>(
                        key, nonce, aad, buf, extra,
                    )
                };
                (out, bottom)
            }

            #[cfg(test)]
            #[target_feature(enable = $features)]
            unsafe fn seal_with_j0(
                key: &KeyData<NR>,
                j0: &[u8; 16],
                aad: &[u8],
                buf: &mut [u8],
            ) -> [u8; $crate::aead::TAG_LEN] {
                // SAFETY: as for `seal`.
                unsafe { $crate::aead::aes_gcm::kernel::seal_with_j0(key, j0, aad, buf) }
            }
        }
    };
}
pub(crate) use backend;
