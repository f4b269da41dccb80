//! Stack hygiene: what every engine uses to leave no key material, keystream
//! or plaintext in the stack it ran on.
//!
//! The engines wipe the temporaries they name; what the compiler spills
//! (register pressure puts round keys, AES states and ChaCha20 key words on
//! the stack) they cannot name, so each call is followed by a scrub of the
//! stack below the caller: as deep as the engine's frame measured at run
//! time ([`Frame`], the guard every engine's caller takes), or a fixed
//! depth where `tests/stack_residue/`
//! shows one suffices. Key setup on x86-64 writes key material from
//! registers straight into the key's allocation and needs no scrub; where
//! a setup frame does hold some (aarch64), it is marked and scrubbed the
//! same way ([`SetupStack`]). The base provider's own code is scrubbed only where a
//! key opts in (`Hardening::scrub_base_stack`). Every fixed depth is here,
//! with what it covers, and so is the tag comparison ([`ct_eq`]).

pub(crate) use super::stack_pointer::stack_pointer;

/// Overwrites the `N` bytes of stack just below the caller's frame, where
/// the frames of the calls it just made lay: what the compiler spilled
/// there and what the base provider's C code left. Each caller's `N` covers
/// the deepest secret `tests/stack_residue/` finds below it, with room to
/// spare; that test fails if one is left.
#[inline(always)]
pub(crate) fn scrub_stack<const N: usize>() {
    // Two pieces from 2 to 4 KiB; one `memset` below and above (the larger
    // fixed depths are opt-in `Base`'s).
    if N <= SCRUB_PIECE || N > 2 * SCRUB_PIECE {
        zeroed::<N>();
    } else {
        zeroed_in_two::<N>();
    }
}

/// The largest region one `memset` zeroes: glibc's switches from vector
/// stores to `rep stosb` above 2 KiB, which on AMD Zen 5 takes 21.5 ns for
/// 2.5 KiB where 2 KiB and 0.5 KiB in two calls take 11.3
/// (docs/security.md, "What wiping costs").
const SCRUB_PIECE: usize = 2048;

/// Safe code: a zeroed local array of `N` bytes, kept by `black_box` (the
/// stores cannot be elided), in a frame of its own just below the caller's.
#[inline(never)]
fn zeroed<const N: usize>() {
    let mut dead = [0u8; N];
    core::hint::black_box(&mut dead);
}

/// [`zeroed`] of `N` bytes (2 to 4 KiB) by two `memset` calls, the first
/// [`SCRUB_PIECE`] bytes then the rest, straight-line in one frame. (A
/// loop over pieces kept its cursor in more callee-saved registers, which
/// it saved into the scrubbed region, where the stack-residue test found
/// a caller's key bytes under qemu-aarch64; two nested frames left the
/// upper frame's alignment padding unwritten in the middle of the region.)
#[inline(never)]
fn zeroed_in_two<const N: usize>() {
    let mut dead = [const { core::mem::MaybeUninit::<u8>::uninit() }; N];
    let (first, rest) = dead.split_at_mut(SCRUB_PIECE);
    first.fill(core::mem::MaybeUninit::new(0));
    core::hint::black_box(&mut *first);
    rest.fill(core::mem::MaybeUninit::new(0));
    core::hint::black_box(rest);
}

/// [`scrub_stack`] at least `depth` bytes deep, for a depth measured at run
/// time, in constant-size steps (512 bytes apart up to 4 KiB, then 8,
/// 16 and 64 KiB). Optimised engine frames are 1–2.5 KiB (opt-levels 2 and
/// 3); the steps from 8 KiB on are for unoptimised and sanitizer builds
/// (the fuzz targets'), whose frames are far larger. A depth past 64 KiB
/// (no build makes such a frame) gets the 64 KiB scrub: this runs after a
/// record, and an open's failure must still zero its buffer, so it does not
/// panic.
#[inline(always)]
pub(crate) fn scrub_stack_to(depth: usize) {
    match depth {
        0..=512 => zeroed::<512>(),
        513..=1024 => zeroed::<1024>(),
        1025..=1536 => zeroed::<1536>(),
        1537..=2048 => zeroed::<2048>(),
        2049..=2560 => zeroed_in_two::<2560>(),
        2561..=3072 => zeroed_in_two::<3072>(),
        3073..=3584 => zeroed_in_two::<3584>(),
        3585..=4096 => zeroed_in_two::<4096>(),
        4097..=8192 => zeroed::<8192>(),
        8193..=16384 => zeroed::<16384>(),
        _ => zeroed::<65536>(),
    }
}

/// Bytes scrubbed below a measured frame as well: the frames of what it
/// calls (`memset`, `memcpy`; they keep nothing on the stack) and the
/// return addresses.
const SCRUB_MARGIN: usize = 256;

/// Scrubs the stack an entry point used: from `top`, the caller's stack
/// pointer when it called, down to `bottom`, the entry point's frame (see
/// [`stack_pointer`]), and [`SCRUB_MARGIN`] below that. Measured per call,
/// so the depth follows the frame the compiler made at whatever opt-level.
#[inline(always)]
pub(crate) fn scrub_below(top: usize, bottom: usize) {
    scrub_stack_to(measured_depth(top, bottom));
}

/// The depth [`scrub_below`] and [`Frame::reached`] scrub: from `top` down
/// to `bottom`, and [`SCRUB_MARGIN`] below that.
#[inline(always)]
fn measured_depth(top: usize, bottom: usize) -> usize {
    top.saturating_sub(bottom) + SCRUB_MARGIN
}

/// A place aligned to half a page, for the frame that holds it: that frame
/// is then 2048-aligned, and an engine entry point called from it runs
/// inside one half page, where no spill slot (the compiler aligns them only
/// to 16 bytes) can straddle a page boundary and split each of its
/// accesses across two pages (docs/decisions.md, "Engine frames inside one
/// page"). Never written: only its alignment counts.
#[repr(C, align(2048))]
pub(crate) struct HalfPage(core::mem::MaybeUninit<u8>);

impl HalfPage {
    #[inline(always)]
    pub(crate) const fn new() -> Self {
        Self(core::mem::MaybeUninit::uninit())
    }

    /// Its address escapes, so it stays in the frame.
    #[inline(always)]
    pub(crate) fn hold(&self) {
        core::hint::black_box(self);
    }
}

/// The frames of a call into an engine's entry point, scrubbed when this
/// guard drops: taken with one line (`Frame::enter`) just before the call,
/// then told how deep the call went: `reached` with the stack pointer the
/// entry point returns (the measured frame and [`SCRUB_MARGIN`], as
/// [`scrub_below`]), or `at_least` a fixed depth (the constants below).
/// Told nothing (a call that spills nothing), it scrubs nothing. Dropped on
/// every path out of the caller, early returns included.
#[must_use = "the scrub runs when the guard drops"]
pub(crate) struct Frame {
    top: usize,
    depth: usize,
}

impl Frame {
    /// In the caller, just before the call.
    #[inline(always)]
    pub(crate) fn enter() -> Self {
        Self {
            top: stack_pointer(),
            depth: 0,
        }
    }

    /// The call's entry point had its stack pointer at `bottom`.
    #[inline(always)]
    pub(crate) fn reached(&mut self, bottom: usize) {
        #[cfg(feature = "audit")]
        super::audit::note_entry_frame(self.top, bottom);
        self.at_least(measured_depth(self.top, bottom));
    }

    /// Scrub at least `depth` bytes below the caller.
    #[inline(always)]
    pub(crate) fn at_least(&mut self, depth: usize) {
        self.depth = self.depth.max(depth);
    }
}

impl Drop for Frame {
    #[inline(always)]
    fn drop(&mut self) {
        if self.depth > 0 {
            scrub_frame(self.depth);
        }
    }
}

/// [`scrub_stack_to`] out of line: one copy of its steps for every guard,
/// not one inlined at each of a caller's exits. Its own frame (a return
/// address) lies in the region it scrubs.
#[inline(never)]
fn scrub_frame(depth: usize) {
    scrub_stack_to(depth);
}

// Fixed scrub depths, where a call's frames are scrubbed to a constant
// depth rather than as deep as a measured frame ([`scrub_below`]). Each
// covers the deepest secret `tests/stack_residue/` finds below the call
// it follows, at opt-levels 3 and 2, with room to spare; that test fails if
// one falls short. Our engines' depths exist where the engines do.

/// After an AES-GCM seal that hoisted its round keys into registers
/// (`Lanes::HOIST_SEAL_FROM`): its spills lie within 1.9 KiB of the call.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const AES_GCM_HOISTED_SEAL: usize = 2560;
/// After one ChaCha20 block, in general registers (`scalar::block_prefix`,
/// whose frame holds the spilled state) or in vector rows
/// (`chacha20_poly1305::kernel::one_block`, whose frame holds its output
/// block).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const CHACHA20_ONE_BLOCK: usize = 512;
/// After a short ChaCha20-Poly1305 record on xmm (`X86Ssse3`), whose state
/// rows spill; the ymm and zmm short paths leave none, except the ymm
/// four-set calls, scrubbed as a long record's frame (`small_spills`).
#[cfg(target_arch = "x86_64")]
pub(crate) const CHACHA20_SHORT_XMM: usize = 1280;
/// After ChaCha20 header-protection blocks in vertical passes, whose rows
/// spill: xmm, ymm and zmm.
#[cfg(target_arch = "x86_64")]
pub(crate) const CHACHA20_BLOCKS_XMM: usize = 2304;
#[cfg(target_arch = "x86_64")]
pub(crate) const CHACHA20_BLOCKS_YMM: usize = 2816;
#[cfg(target_arch = "x86_64")]
pub(crate) const CHACHA20_BLOCKS_ZMM: usize = 3328;
/// After ChaCha20 header-protection blocks in vertical passes on NEON.
#[cfg(target_arch = "aarch64")]
pub(crate) const CHACHA20_BLOCKS_NEON: usize = 2304;

// `Base`, only where a key opts in (`Hardening::scrub_base_stack`): the
// base provider's own code leaves these, and leaves them without
// rustls-fusion too (aws-lc on x86-64; ring's key setup 4.5 KiB deep).

/// After the base provider's AES-GCM: E(K, J0) and plaintext down to
/// 2.7 KiB below the call.
pub(crate) const BASE_AES_GCM: usize = 2816;
/// After the base provider's ChaCha20-Poly1305: the key, the Poly1305 key
/// and keystream down to 1.2 KiB.
pub(crate) const BASE_CHACHA20_POLY1305: usize = 1280;
/// After the base provider's header-protection block.
pub(crate) const BASE_BLOCK: usize = 1024;
/// After the base provider builds a key (copies of ring's key schedule
/// lay 4.5 KiB deep).
pub(crate) const BASE_KEY_SETUP: usize = 6144;

/// The lowest stack pointer a key setup of ours reached: a setup frame
/// that holds key material (aarch64's AES schedule and products, a
/// ChaCha20 header-protection key's words there) reports its own
/// ([`Self::mark`]), and the scrub after the setup goes that deep
/// ([`Self::scrub`]). On x86-64 no setup frame of ours holds any in an
/// optimised build: the keys are written from registers into their
/// allocation, and none is marked (an unoptimised build, which keeps
/// every local on the stack, marks the AES schedule's frame).
pub(crate) struct SetupStack {
    top: usize,
    low: usize,
}

impl SetupStack {
    /// Before the setup, in the frame that scrubs after it.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        let top = stack_pointer();
        Self { top, low: top }
    }

    /// Called in a setup's deepest frame (the one that expands the key).
    #[inline(always)]
    #[cfg_attr(
        not(any(target_arch = "aarch64", all(target_arch = "x86_64", debug_assertions))),
        allow(dead_code)
    )]
    pub(crate) fn mark(&mut self) {
        self.low = self.low.min(stack_pointer());
    }

    /// Called in the frame that runs the AES key schedule: marks it where
    /// that frame holds key material (aarch64, whose schedule works on
    /// 32-bit words in a stack array; builds with debug assertions, whose
    /// locals all live on the stack). An optimised x86-64 build stores
    /// each round key from registers (`aes_gcm::x86_64::expand_key_into`)
    /// and marks nothing.
    #[inline(always)]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    pub(crate) fn mark_schedule(&mut self) {
        #[cfg(any(not(target_arch = "x86_64"), debug_assertions))]
        self.mark();
    }

    /// Scrubs from the top down to the lowest mark (and the margin); with
    /// no mark (a setup whose frames hold no key material: ChaCha20 words
    /// that go from the caller's key straight into their box, AES round
    /// keys and GHASH powers stored from registers on x86-64), nothing.
    #[inline(always)]
    pub(crate) fn scrub(self) {
        if self.low < self.top {
            scrub_below(self.top, self.low);
        }
    }
}

/// The scrub after building a key on `backend`: as deep as our engine's
/// setup went, or on `Base` (the base provider's code, whose frames we
/// cannot measure) [`BASE_KEY_SETUP`] bytes where `hardening` asks
/// for it and none otherwise, as the base provider itself leaves them.
#[inline(always)]
pub(crate) fn scrub_after_setup(
    stack: SetupStack,
    backend: super::Backend,
    hardening: super::Hardening,
) {
    if backend != super::Backend::Base {
        stack.scrub();
    } else if hardening.scrubs_base_stack() {
        scrub_stack::<BASE_KEY_SETUP>();
    }
}

/// Builds a key and what holds it, up to the allocation it lives in, in a
/// never-inlined frame (`make`, which marks a setup frame that holds key
/// material in the [`SetupStack`] it is given), then scrubs as [`scrub_after_setup`]
/// does. Every copy the compiler makes while moving key data into that
/// allocation lies in frames below the caller's, within the scrub where a
/// frame is marked: for a key kept inline in the object a caller boxes
/// (rustls's header-protection keys), the box must be made inside `make`,
/// not after it returns. Our keys on x86-64 are written where they lie,
/// so no such copy is made and nothing is marked (`tests/stack_residue/`
/// checks both).
#[inline(always)]
pub(crate) fn set_up<T>(
    backend: super::Backend,
    hardening: super::Hardening,
    make: impl FnOnce(&mut SetupStack) -> T,
) -> T {
    #[inline(never)]
    fn in_frame<T>(stack: &mut SetupStack, make: impl FnOnce(&mut SetupStack) -> T) -> T {
        make(stack)
    }
    let mut stack = SetupStack::new();
    let made = in_frame(&mut stack, make);
    scrub_after_setup(stack, backend, hardening);
    made
}

/// Compares two tags in constant time. The result is an open's
/// accept/reject: the one secret-derived value the engines let steer a
/// branch (declassified for the valgrind constant-time check).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) fn ct_eq(a: &[u8; super::TAG_LEN], b: &[u8; super::TAG_LEN]) -> bool {
    #[allow(unused_mut)]
    let mut diff = a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y));
    #[cfg(feature = "audit")]
    super::audit::declassify(core::slice::from_mut(&mut diff));
    core::hint::black_box(diff) == 0
}
