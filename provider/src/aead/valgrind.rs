//! Constant-time checks under valgrind's memcheck, in the manner of
//! BoringSSL's `CONSTTIME_SECRET` / `CONSTTIME_DECLASSIFY`: a test marks
//! keys and plaintext as undefined memory; memcheck then reports every
//! branch and every memory address that depends on them. The engines
//! declassify exactly one value: an open's accept/reject (`ct_eq`).
//!
//! Built only with feature `valgrind` (tests). Outside valgrind a client
//! request is a no-op: the marker instruction sequence leaves every
//! register as it was.
#![allow(unsafe_code)]

const RUNNING_ON_VALGRIND: u64 = 0x1001;
const MAKE_MEM_UNDEFINED: u64 = 0x4d43_0001;
const MAKE_MEM_DEFINED: u64 = 0x4d43_0002;
const COUNT_ERRORS: u64 = 0x1201;

/// One valgrind client request (valgrind.h's
/// `VALGRIND_DO_CLIENT_REQUEST_EXPR` for amd64): `rdi` is rotated by 128
/// bits in all (unchanged), `xchg rbx, rbx` changes nothing, and only
/// valgrind, which recognises the sequence, reads the arguments at `rax`
/// and writes a result to `rdx` (0, the default, outside valgrind).
#[cfg(target_arch = "x86_64")]
fn client_request(request: u64, addr: usize, len: usize) -> u64 {
    let args: [u64; 6] = [request, addr as u64, len as u64, 0, 0, 0];
    let result: u64;
    // SAFETY: the sequence has no effect outside valgrind (the four
    // rotations of rdi sum to 128 bits, and rbx is exchanged with itself);
    // under valgrind it reads the six words at `args`, which live until the
    // block ends, and writes only rdx.
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
            options(nostack, preserves_flags),
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
