//! A backend: its `#[target_feature]` entry points ([`Entry`], which
//! `backend!` implements for each backend) and the key type over them,
//! written once ([`Key`]).

use zeroize::Zeroizing;

use super::{check, key_words, le_words, small_max, small_spills, Direction, Lanes};
use crate::aead::secret::{self, Frame};
use crate::aead::{OpenError, NONCE_LEN, TAG_LEN};

/// Keystream scratch of a size a backend's lane type sets (an array type
/// in the backend's own, non-generic code).
pub(crate) trait ScratchBuf {
    fn zeroed() -> Self;
    fn bytes(&mut self) -> &mut [u8];
}

impl<const N: usize> ScratchBuf for super::Scratch<N> {
    #[inline(always)]
    fn zeroed() -> Self {
        Self([0; N])
    }

    #[inline(always)]
    fn bytes(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

/// A backend's `#[target_feature]` entry points into the kernels, and the
/// sizes its lane type fixes. The record entry points return, beside the
/// tag, their frame's stack pointer, for the scrub after the call.
///
/// The compiler spills ChaCha20 state the code cannot wipe, so each call
/// is followed by a stack scrub: after a record longer than the short
/// path, as deep as the kernel's frame measured at run time
/// (`secret::Frame`); after a short record, that too where the call
/// spills (`small_spills`: ymm's four-set calls, which the zmm engines'
/// mid-size opens run), else `scrub_small` (nothing on the zmm engines,
/// whose own short path leaves no secret on the stack);
/// after header-protection blocks, `scrub_blocks` (a lone block:
/// `secret::CHACHA20_ONE_BLOCK`): the fixed depths in
/// `secret.rs`, which `tests/stack_residue/` checks at opt-levels 3
/// and 2.
///
/// # Safety
/// Implementing: every function enables the features of `Self::Lanes`
/// and of `Self::MidLanes` (and AVX-512 IFMA where the kernel is
/// instantiated with IFMA), and
/// `detected` returns true only on a CPU with all of them (`backend!`
/// does both). Calling: the `unsafe` functions only after `detected`
/// returned true.
pub(crate) unsafe trait Entry {
    type Lanes: Lanes;
    /// Keystream scratch of `scratch_len::<Self::Lanes>()` bytes (open).
    type Scratch: ScratchBuf;
    /// Keystream scratch of `seal_scratch_len::<Self::Lanes>()` bytes.
    type SealScratch: ScratchBuf;
    fn detected() -> bool;
    fn scrub_small();
    fn scrub_blocks();
    /// `zmm_split`: the key's `Features::zmm_split` (`kernel::crypt`).
    unsafe fn seal(
        key: &[u32; 8],
        ks: &mut [u8],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
        zmm_split: bool,
    ) -> ([u8; TAG_LEN], usize);
    unsafe fn open(
        key: &[u32; 8],
        ks: &mut [u8],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        zmm_split: bool,
    ) -> ([u8; TAG_LEN], usize);
    /// `fused`: the key's choice of the fused 2-block call ([`Key`]).
    unsafe fn small(
        key: &[u32; 8],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
        dir: Direction,
        fused: bool,
    ) -> ([u8; TAG_LEN], usize);
    unsafe fn blocks<const B: usize>(key: &[u32; 8], inputs: &[[u8; 16]], out: &mut [[u8; B]]);
    /// One block in `Lanes`'s rows (`kernel::one_block`).
    unsafe fn one_block<const B: usize>(key: &[u32; 8], input: &[u8; 16]) -> [u8; B];

    /// The lane type of mid-size records, those over `SMALL` bytes for
    /// which `mid` holds (an engine without one: `Lanes`, `mid` never).
    /// On zmm, records up to about 1.6 KiB run faster on ymm's 8-block
    /// passes and short calls than on 16-block passes (docs/decisions.md,
    /// "ChaCha20-Poly1305 mid-size records on zmm").
    type MidLanes: Lanes;
    /// Open and seal scratch for `MidLanes`, as `Scratch` and `SealScratch`.
    type MidScratch: ScratchBuf;
    type MidSealScratch: ScratchBuf;
    /// Whether a record of `n > SMALL` bytes takes `MidLanes`.
    /// `split`: the key's CPU runs zmm instructions as two halves
    /// (`Features::zmm_split`).
    fn mid(dir: Direction, n: usize, split: bool) -> bool;
    /// `seal`, `open` and `small` on `MidLanes`, the Poly1305 runs scalar
    /// (the IFMA runs and phases are tuned for zmm).
    unsafe fn seal_mid(
        key: &[u32; 8],
        ks: &mut [u8],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
        zmm_split: bool,
    ) -> ([u8; TAG_LEN], usize);
    unsafe fn open_mid(
        key: &[u32; 8],
        ks: &mut [u8],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        zmm_split: bool,
    ) -> ([u8; TAG_LEN], usize);
    unsafe fn small_mid(
        key: &[u32; 8],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
    ) -> ([u8; TAG_LEN], usize);
}

/// Where a key's eight ChaCha20 words live.
pub(crate) enum Words {
    /// In a box of their own: a standalone key, whose moves then move a
    /// pointer, not key words.
    Boxed(Box<Zeroizing<[u32; 8]>>),
    /// Inline: a key that lives only inside its holder's box, made
    /// unkeyed and keyed there (`AnyKey::boxed_in`).
    Inline(Zeroizing<[u32; 8]>),
}

impl Words {
    #[inline(always)]
    fn get(&self) -> &[u32; 8] {
        match self {
            Self::Boxed(w) => w,
            Self::Inline(w) => w,
        }
    }
}

/// This CPU's x86-64 `Features` flag `$f` (false off x86-64), for the
/// per-key choices below.
macro_rules! x86_flag {
    ($f:ident) => {{
        #[cfg(target_arch = "x86_64")]
        let flag = crate::cpu::Features::get().$f;
        #[cfg(not(target_arch = "x86_64"))]
        let flag = false;
        flag
    }};
}

/// A ChaCha20-Poly1305 key on backend `E`, zeroized on drop. Exists only
/// where `E` was detected. `fused`: whether its records of up to 64 bytes
/// run the fused 2-block call, chosen once here for this CPU
/// ([`fuses`]).
pub(crate) struct Key<E: Entry> {
    words: Words,
    fused: bool,
    /// This CPU's `Features::zmm_split`, for `Entry::mid` and the IFMA
    /// engine's phases (`kernel::crypt`).
    zmm_split: bool,
    backend: core::marker::PhantomData<E>,
}

/// Whether keys on `E` fuse their 2-block call: where its lane type can
/// (`Lanes::FUSED_PAIR`) and this CPU's rotations are slower than its
/// XORs (`Features::rotate_slow`; docs/decisions.md, "ChaCha20 rotations
/// off the chain").
fn fuses<E: Entry>() -> bool {
    <E::Lanes as Lanes>::FUSED_PAIR && x86_flag!(rotate_slow)
}

/// `Features::zmm_split` (false off x86-64).
fn zmm_split() -> bool {
    x86_flag!(zmm_split)
}

impl<E: Entry> Key<E> {
    /// `None` unless this CPU has the backend's features. The words in a
    /// box of their own ([`Words::Boxed`]): a standalone key.
    #[inline]
    pub(crate) fn new(key: &[u8; 32]) -> Option<Self> {
        if !E::detected() {
            return None;
        }
        Some(Self {
            words: Words::Boxed(key_words(key)),
            fused: fuses::<E>(),
            zmm_split: zmm_split(),
            backend: core::marker::PhantomData,
        })
    }

    /// This key with the fused 2-block call on or off, where its lane type
    /// has one: the tests run both on every CPU.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn with_fused(mut self, fused: bool) -> Self {
        self.fused = fused && <E::Lanes as Lanes>::FUSED_PAIR;
        self
    }

    /// This key with either routing of mid-size records (`Entry::mid`):
    /// the tests run both on every CPU.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn with_zmm_split(mut self, split: bool) -> Self {
        self.zmm_split = split;
        self
    }

    /// A key whose words are inline and still zero: made with no key
    /// material, moved into its holder's box, then keyed where it lies
    /// ([`Key::key_in_place`]). `None` unless this CPU has the backend's
    /// features.
    pub(crate) fn unkeyed() -> Option<Self> {
        if !E::detected() {
            return None;
        }
        Some(Self {
            words: Words::Inline(Zeroizing::new([0; 8])),
            fused: fuses::<E>(),
            zmm_split: zmm_split(),
            backend: core::marker::PhantomData,
        })
    }

    /// Writes `key`'s words over this key's where it lies (in its holder's
    /// box): from the caller's key straight to their place, through no
    /// stack temporary, so no setup frame holds them and none is scrubbed
    /// (`tests/stack_residue/` checks it).
    #[inline(always)]
    pub(crate) fn key_in_place(&mut self, key: &[u8; 32]) {
        let words: &mut [u32; 8] = match &mut self.words {
            Words::Boxed(w) => w,
            Words::Inline(w) => w,
        };
        *words = le_words(key);
    }

    /// Scrubs the stack after a short record of `n` bytes: the frame the
    /// call used (its entry point reached `bottom`) where it spills
    /// (`small_spills`), else the backend's fixed depth.
    #[inline(always)]
    fn scrub_small<L: Lanes>(frame: &mut Frame, dir: Direction, n: usize, bottom: usize) {
        if small_spills::<L>(dir, n) {
            frame.reached(bottom);
        } else {
            // `E::Lanes`'s fixed depth: `MidLanes` reaches here only where
            // its short call spills (ymm opens of 449–576 bytes), above.
            E::scrub_small();
        }
    }

    pub(crate) fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        let (key, split) = (self.words.get(), self.zmm_split);
        // Short records run in a smaller frame of their own, so they pay
        // for scrubbing only that, if anything.
        if buf.len() <= small_max::<E::Lanes>(Direction::Seal) {
            let mut frame = Frame::enter();
            let dir = Direction::Seal;
            // SAFETY: a `Key` exists only where `new` detected the features.
            let (tag, bottom) = unsafe { E::small(key, nonce, aad, src, buf, dir, self.fused) };
            Self::scrub_small::<E::Lanes>(&mut frame, Direction::Seal, buf.len(), bottom);
            return tag;
        }
        if E::mid(Direction::Seal, buf.len(), split) {
            let mut ks = E::MidSealScratch::zeroed();
            let mut frame = Frame::enter();
            // SAFETY: as above.
            let (tag, bottom) =
                unsafe { E::seal_mid(key, ks.bytes(), nonce, aad, src, buf, split) };
            frame.reached(bottom);
            return tag;
        }
        // The scratch lives in this frame, above the kernel's, so the
        // scrub need not cover it (the kernel wipes it).
        let mut ks = E::SealScratch::zeroed();
        let mut frame = Frame::enter();
        // SAFETY: as above.
        let (tag, bottom) = unsafe { E::seal(key, ks.bytes(), nonce, aad, src, buf, split) };
        frame.reached(bottom);
        tag
    }

    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        let (key, split) = (self.words.get(), self.zmm_split);
        let expected = if buf.len() <= small_max::<E::Lanes>(Direction::Open) {
            let mut frame = Frame::enter();
            let dir = Direction::Open;
            // SAFETY: as for `seal`.
            let (t, bottom) = unsafe { E::small(key, nonce, aad, &[], buf, dir, self.fused) };
            Self::scrub_small::<E::Lanes>(&mut frame, Direction::Open, buf.len(), bottom);
            t
        } else if E::mid(Direction::Open, buf.len(), split)
            && buf.len() <= small_max::<E::MidLanes>(Direction::Open)
        {
            let mut frame = Frame::enter();
            // SAFETY: as for `seal`.
            let (t, bottom) = unsafe { E::small_mid(key, nonce, aad, buf) };
            Self::scrub_small::<E::MidLanes>(&mut frame, Direction::Open, buf.len(), bottom);
            t
        } else if E::mid(Direction::Open, buf.len(), split) {
            let mut ks = E::MidScratch::zeroed();
            let mut frame = Frame::enter();
            // SAFETY: as for `seal`.
            let (t, bottom) = unsafe { E::open_mid(key, ks.bytes(), nonce, aad, buf, split) };
            frame.reached(bottom);
            t
        } else {
            let mut ks = E::Scratch::zeroed();
            let mut frame = Frame::enter();
            // SAFETY: as for `seal`.
            let (t, bottom) = unsafe { E::open(key, ks.bytes(), nonce, aad, buf, split) };
            frame.reached(bottom);
            t
        };
        check(expected, tag, buf)
    }
}

/// ChaCha20's block function alone (QUIC header protection) on backend
/// `E`: the key words inline, so it lives in its holder's allocation
/// (built inside the holder's setup frame, whose scrub covers its moves:
/// `aead::secret::set_up`), zeroized on drop. Exists only where `E` was
/// detected. `rows`: whether a lone input runs in vector rows rather than
/// general registers, chosen once here for this CPU ([`one_block_rows`]).
pub(crate) struct Blocks<E: Entry> {
    words: Zeroizing<[u32; 8]>,
    rows: bool,
    backend: core::marker::PhantomData<E>,
}

/// Whether `E`'s lone blocks run in its rows: where its lane type has them
/// (`Lanes::ONE_BLOCK_ROWS`) and every vector step of this CPU takes one
/// cycle (`Features::vector_one_cycle`).
fn one_block_rows<E: Entry>() -> bool {
    <E::Lanes as Lanes>::ONE_BLOCK_ROWS && x86_flag!(vector_one_cycle)
}

impl<E: Entry> Blocks<E> {
    /// `None` unless this CPU has the backend's features. Inlined into the
    /// holder's setup frame, the words go from the key straight into the
    /// holder's box on x86-64, where no frame holds them and no scrub
    /// follows; on aarch64 the holder's setup frame is scrubbed
    /// (`aead::block`; `tests/stack_residue/` checks both).
    #[inline(always)]
    pub(crate) fn new(key: &[u8; 32]) -> Option<Self> {
        if !E::detected() {
            return None;
        }
        Some(Self {
            words: Zeroizing::new(le_words(key)),
            rows: one_block_rows::<E>(),
            backend: core::marker::PhantomData,
        })
    }

    /// Whether a lone input runs in rows.
    #[cfg(test)]
    pub(crate) fn rows(&self) -> bool {
        self.rows
    }

    /// This key with lone blocks in rows or in general registers, where
    /// its lane type has the rows: the tests run both on every CPU with
    /// AVX2.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn with_rows(mut self, rows: bool) -> Self {
        self.rows = rows && <E::Lanes as Lanes>::ONE_BLOCK_ROWS;
        self
    }

    /// The first `B` bytes of the ChaCha20 block of each 16-byte
    /// `counter ‖ nonce` input (RFC 8439 §2.3).
    ///
    /// # Panics
    /// If the lengths differ, or `B > 16`.
    pub(crate) fn apply<const B: usize>(&self, inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
        // SAFETY: a `Blocks` exists only where `new` detected the features.
        unsafe { blocks::<E, B>(&self.words, self.rows, inputs, out) }
    }
}

/// The first `B` bytes of the ChaCha20 block of each input under `key`;
/// a lone input in `E`'s rows if `rows`, else in general registers.
///
/// # Safety
/// `E::detected()` returned true.
///
/// # Panics
/// If the lengths differ, or `B > 16`.
unsafe fn blocks<E: Entry, const B: usize>(
    key: &[u32; 8],
    rows: bool,
    inputs: &[[u8; 16]],
    out: &mut [[u8; B]],
) {
    assert!(inputs.len() == out.len() && B <= 16, "one output per input");
    if let ([input], [o]) = (inputs, &mut *out) {
        if <E::Lanes as Lanes>::ONE_BLOCK_ROWS && rows {
            // A `#[target_feature]` entry, never inlined here: its frame
            // lies below this one, where the scrub below reaches.
            // SAFETY: `E` was detected (this fn's contract).
            *o = unsafe { E::one_block(key, input) };
        } else {
            // In general registers (`scalar.rs`), in a frame of its own
            // whose spills the scrub reaches.
            #[inline(never)]
            fn one<const B: usize>(key: &[u32; 8], input: &[u8; 16], o: &mut [u8; B]) {
                *o = super::super::scalar::block_prefix(key, input);
            }
            one(key, input, o);
        }
        secret::scrub_stack::<{ secret::CHACHA20_ONE_BLOCK }>();
        return;
    }
    // SAFETY: `E` was detected (this fn's contract).
    unsafe { E::blocks(key, inputs, out) };
    // Several inputs are vertical passes, whose rows spill.
    E::scrub_blocks();
}
