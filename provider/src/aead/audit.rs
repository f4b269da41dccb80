//! Hooks for the assurance tests, built only with feature `audit`.
//!
//! - Constant time under valgrind's memcheck, in the manner of BoringSSL's
//!   `CONSTTIME_SECRET` / `CONSTTIME_DECLASSIFY`: a test marks keys and
//!   plaintext as undefined memory ([`secret`]); memcheck then reports
//!   every branch and every memory address that depends on them. The
//!   engines declassify exactly two kinds of value: an open's accept/reject
//!   (`ct_eq`) and QUIC header-protection samples (ciphertext). Outside
//!   valgrind a client request is a no-op: the marker instruction sequence
//!   leaves every register as it was.
//! - Secrets left behind: [`dead_stack`] copies the stack just below the
//!   caller's frame, where the frames of the calls it just made lay, so a
//!   test can search it for key bytes.
//! - Frame placement: [`take_entry_frame`], where the last engine entry
//!   point's frame lay.
#![allow(unsafe_code)]

const RUNNING_ON_VALGRIND: u64 = 0x1001;
const MAKE_MEM_UNDEFINED: u64 = 0x4d43_0001;
const MAKE_MEM_DEFINED: u64 = 0x4d43_0002;
const COUNT_ERRORS: u64 = 0x1201;

/// One valgrind client request (valgrind.h's
/// `VALGRIND_DO_CLIENT_REQUEST_EXPR` for amd64): `rdi` is rotated by 128
/// bits in all, `xchg rbx, rbx` changes nothing, and only valgrind, which
/// recognises the sequence, reads the arguments at `rax` and writes a
/// result to `rdx` (0, the default, outside valgrind). The rotations set
/// the carry and overflow flags, so the flags are clobbered (as valgrind.h
/// declares them).
#[cfg(target_arch = "x86_64")]
fn client_request(request: u64, addr: usize, len: usize) -> u64 {
    let args: [u64; 6] = [request, addr as u64, len as u64, 0, 0, 0];
    let result: u64;
    // SAFETY: outside valgrind the sequence changes only rdi (declared as
    // clobbered; rotated, it holds a rotation of whatever it held) and the
    // flags (not declared preserved); rbx is exchanged with itself. Under
    // valgrind it also reads the six words at `args`, which live until the
    // block ends, and writes only rdx. No stack is used.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") 0u64 => result,
            out("rdi") _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn client_request(_: u64, _: usize, _: usize) -> u64 {
    0
}

/// Whether the process runs under valgrind.
pub fn running_on_valgrind() -> bool {
    client_request(RUNNING_ON_VALGRIND, 0, 0) != 0
}

/// Errors memcheck has reported so far (0 outside valgrind).
pub fn error_count() -> u64 {
    client_request(COUNT_ERRORS, 0, 0)
}

/// Marks `bytes` as secret: undefined for memcheck. Takes `&mut` so the
/// compiler reloads the bytes from memory afterwards rather than reusing a
/// register copy whose definedness valgrind did not change.
pub fn secret(bytes: &mut [u8]) {
    let _ = client_request(MAKE_MEM_UNDEFINED, bytes.as_mut_ptr() as usize, bytes.len());
}

/// Marks `bytes` as public again: defined for memcheck (`&mut` as for
/// [`secret`]).
pub fn declassify(bytes: &mut [u8]) {
    let _ = client_request(MAKE_MEM_DEFINED, bytes.as_mut_ptr() as usize, bytes.len());
}

/// Copies the `out.len()` bytes just below the caller's stack pointer (the
/// frames of calls that have returned, dead memory nothing owns) into
/// `out`. Inlined, so "the caller" is the function that calls this.
///
/// # Safety
/// The calling thread's stack must be mapped for at least `out.len()`
/// bytes below the caller's frame (tests run this on a thread they spawn
/// with a stack far larger than `out`).
///
/// # Panics
/// If `out` is empty.
#[inline(always)]
pub unsafe fn dead_stack(out: &mut [u8]) {
    assert!(!out.is_empty(), "nothing to copy");
    let below = stack_pointer() - out.len();
    // SAFETY: the source is this thread's stack below its live frames,
    // mapped for `out.len()` bytes (this fn's contract).
    unsafe { copy_plain(below as *const u8, out) };
}

/// The caller's stack pointer (inlined: "the caller" is the function that
/// calls this), for a test that searches only the dead stack below one of
/// its own frames: the frames of what that function called.
#[inline(always)]
pub fn stack_pointer() -> usize {
    super::stack_pointer::stack_pointer()
}

/// Where the last measured engine entry point's frame lay: from `bottom`,
/// its stack pointer, up to `top`, its caller's (the `Key` frame's) when
/// it called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryFrame {
    pub top: usize,
    pub bottom: usize,
}

std::thread_local! {
    static ENTRY_FRAME: core::cell::Cell<Option<EntryFrame>> = const { core::cell::Cell::new(None) };
}

/// Notes the stack the last measured engine call used below its caller
/// (`Frame::reached`).
pub(crate) fn note_entry_frame(top: usize, bottom: usize) {
    ENTRY_FRAME.with(|f| f.set(Some(EntryFrame { top, bottom })));
}

/// The frame of the last measured engine call on this thread, `None` if
/// none was measured since the last call of this: an entry point of our
/// engines that spills runs inside one half page (docs/decisions.md,
/// "Engine frames inside one page"; `tests/frame_placement.rs`).
pub fn take_entry_frame() -> Option<EntryFrame> {
    ENTRY_FRAME.with(|f| f.take())
}

/// The bytes of `value`'s representation, padding and unused variant space
/// included (read by inline assembly as plain memory): for a test that
/// checks that a key object, which its owner moves freely, holds no key
/// material inline.
pub fn object_bytes<T>(value: &T) -> Vec<u8> {
    let mut out = vec![0u8; core::mem::size_of::<T>()];
    if !out.is_empty() {
        // SAFETY: `value` is valid for reads of `size_of::<T>()` bytes.
        unsafe { copy_plain((value as *const T).cast::<u8>(), &mut out) };
    }
    out
}

/// Copies `out.len()` (non-zero) bytes from `src` into `out` by inline
/// assembly, which reads them as plain memory whatever Rust knows of them
/// (dead stack, padding); zeros on other targets.
///
/// # Safety
/// `src` is valid for reads of `out.len()` bytes.
#[inline(always)]
unsafe fn copy_plain(src: *const u8, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rep movsb` copies `out.len()` bytes from `src` (readable for
    // that length: this fn's contract) into `out`, writable for it. The
    // direction flag is clear at every call boundary (System V ABI), and
    // nothing is pushed.
    unsafe {
        core::arch::asm!(
            "rep movsb",
            inout("rsi") src => _,
            inout("rdi") out.as_mut_ptr() => _,
            inout("rcx") out.len() => _,
            options(nostack, preserves_flags),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above; the loop copies the `out.len()` (non-zero) bytes
    // one at a time, and `subs` changes only the flags, not preserved.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldrb {tmp:w}, [{src}], #1",
            "strb {tmp:w}, [{dst}], #1",
            "subs {len}, {len}, #1",
            "b.ne 2b",
            src = inout(reg) src => _,
            tmp = out(reg) _,
            dst = inout(reg) out.as_mut_ptr() => _,
            len = inout(reg) out.len() => _,
            options(nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = src;
        out.fill(0);
    }
}
