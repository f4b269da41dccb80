//! The ymm engine's steady state as one assembly loop: each iteration is a
//! 256-byte batch of AES-CTR (8 ymm, 16 blocks) with the GHASH of a
//! 256-byte batch (Karatsuba, one reduction, lane by lane) between its
//! rounds. Written as assembly for the reason the zmm loop is
//! (docs/decisions.md, "The ymm batch loop"): compiled from the intrinsics
//! kernel, the open kept AES states and partial products on the stack,
//! since the 16 ymm registers hold exactly what a batch needs and nothing
//! more. Here every value stays in a register and the constants are
//! memory operands.
//!
//! Registers: ymm0-7 the AES states; ymm8 the round key; ymm9 the
//! byte-swap mask; ymm10-12 the sums lo, mi, hi; ymm13-14 temporaries;
//! ymm15 the running GHASH value (lane 0, lane 1 zero). The counters live
//! in `*ctr` between batches (lane `i` of the next register: `c + i`, as
//! `Lanes::counters`).
#![allow(unsafe_code)]

use core::arch::asm;
use core::arch::x86_64::*;

use super::super::kernel::BatchKeys;

/// The GHASH reduction constant in one lane (low qword 1, high qword
/// `0xc2 << 56`), as dwords.
const POLY: [u32; 4] = [1, 0, 0, 0xc200_0000];

/// Two in each lane's low dword (the step between registers' counters),
/// then [`POLY`] in each lane.
#[repr(C, align(32))]
struct Consts([[u32; 4]; 4]);

static CONSTS: Consts = Consts([[2, 0, 0, 0], [2, 0, 0, 0], POLY, POLY]);

/// `GH1 j`: GHASH of register `j` (0-7) of the batch at `{hp}`: its two
/// blocks, byte-swapped (the running value joins block 0 of register 0),
/// times the powers at `{h} + 32j`, added to lo and hi, and through the
/// halves at `{hx} + 32j` to mi. `AR8` is one AES round of the 8 states
/// with ymm8.
macro_rules! lib {
    () => {
        r"
.macro AR8; .irp s,0,1,2,3,4,5,6,7; vaesenc ymm\s, ymm\s, ymm8; .endr; .endm
.macro GH1 j
vmovdqu ymm13, [{hp} + 32*\j]
vpshufb ymm13, ymm13, ymm9
.if \j == 0; vpxor ymm13, ymm13, ymm15; .endif
vpclmulqdq ymm14, ymm13, [{h} + 32*\j], 0x00
vpxor ymm10, ymm10, ymm14
vpclmulqdq ymm14, ymm13, [{h} + 32*\j], 0x11
vpxor ymm12, ymm12, ymm14
vpshufd ymm14, ymm13, 0x4e
vpxor ymm13, ymm13, ymm14
vpclmulqdq ymm13, ymm13, [{hx} + 32*\j], 0x00
vpxor ymm11, ymm11, ymm13
.endm
"
    };
}

/// The loop: counters, one hash step in each of rounds 1-8 (register 7
/// first, so the running value joins last), the remaining rounds, the
/// reduction in each lane and the fold of the lanes (the next batch's
/// running value; docs/decisions.md, "Reduce, then fold"), then the last
/// round with the input XORed into its key and the stores.
macro_rules! body {
    () => {
        r"
vmovdqa xmm15, xmm15
2:
vbroadcasti128 ymm8, [{rk}]
vmovdqu ymm13, [{ctr}]
.irp s,0,1,2,3,4,5,6,7
vpshufb ymm\s, ymm13, ymm9
vpaddd ymm13, ymm13, [{c}]
vpxor ymm\s, ymm\s, ymm8
.endr
vmovdqu [{ctr}], ymm13
vpxor xmm10, xmm10, xmm10
vpxor xmm11, xmm11, xmm11
vpxor xmm12, xmm12, xmm12
.irp r,1,2,3,4,5,6,7,8
vbroadcasti128 ymm8, [{rk} + 16*\r]
AR8
GH1 (8-\r)
.endr
.irp r,9,10,11,12,13
.if \r < {nr}
vbroadcasti128 ymm8, [{rk} + 16*\r]
AR8
.endif
.endr
vpxor ymm11, ymm11, ymm10
vpxor ymm11, ymm11, ymm12
vpclmulqdq ymm13, ymm10, [{c} + 32], 0x10
vpshufd ymm14, ymm10, 0x4e
vpxor ymm11, ymm11, ymm13
vpxor ymm11, ymm11, ymm14
vpclmulqdq ymm13, ymm11, [{c} + 32], 0x10
vpshufd ymm14, ymm11, 0x4e
vpxor ymm12, ymm12, ymm13
vpxor ymm12, ymm12, ymm14
vextracti128 xmm13, ymm12, 1
vpxor xmm15, xmm12, xmm13
vbroadcasti128 ymm8, [{rk} + 16*{nr}]
.irp s,0,1,2,3,4,5,6,7
vpxor ymm13, ymm8, [{src} + 32*\s]
vaesenclast ymm\s, ymm\s, ymm13
vmovdqu [{dst} + 32*\s], ymm\s
.endr
add {src}, 256
add {dst}, 256
add {hp}, 256
dec {n}
jnz 2b
.purgem AR8
.purgem GH1
"
    };
}

/// Runs `n` batches (see `Lanes::batches`; `OPEN` hashes the input, a
/// seal the 256 bytes below the output).
///
/// # Safety
/// The CPU has AVX2, VAES and VPCLMULQDQ; `n >= 1`; `keys` points to
/// `NR + 1` round keys and 256 bytes each of powers and halves; `input` is
/// valid for reads and `output` for writes of `n * 256` bytes (equal, or
/// not overlapping); for a seal the 256 bytes below `output` are readable.
#[inline]
#[target_feature(enable = "avx,avx2,vaes,vpclmulqdq")]
pub(super) unsafe fn batches<const NR: usize, const OPEN: bool>(
    keys: BatchKeys,
    ctr: &mut __m256i,
    acc: &mut __m128i,
    input: *const u8,
    output: *mut u8,
    n: usize,
) {
    debug_assert!(n >= 1 && (NR == 10 || NR == 14));
    let hp = if OPEN {
        input
    } else {
        output.wrapping_sub(256).cast_const()
    };
    let mask = _mm256_broadcastsi128_si256(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    // SAFETY: the instructions are AVX, AVX2, VAES and VPCLMULQDQ, which the CPU has (this fn's
    // contract). Loads: `[rk]` up to `16 * NR + 16` bytes, `[h]` and `[hx]` 256 bytes each,
    // `[c]` the 64 bytes of `CONSTS`, `[ctr]` 32 bytes (also stored, a valid `&mut`), `[hp]` and
    // `[src]` 256 bytes per iteration, advancing by 256, `n` times: within `input` (open) or
    // the previous batch and then `output` (seal). Stores: 256 bytes of `[dst]` per iteration,
    // within `output`. No stack; every register written is an operand or declared clobbered,
    // and the flags are clobbered (no `preserves_flags`).
    unsafe {
        asm!(
            lib!(),
            body!(),
            rk = in(reg) keys.rk,
            h = in(reg) keys.h,
            hx = in(reg) keys.hx,
            c = in(reg) CONSTS.0.as_ptr(),
            ctr = in(reg) core::ptr::from_mut(ctr),
            hp = inout(reg) hp => _,
            src = inout(reg) input => _,
            dst = inout(reg) output => _,
            n = inout(reg) n => _,
            nr = const NR,
            inout("xmm15") *acc,
            in("ymm9") mask,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm10") _, out("ymm11") _, out("ymm12") _,
            out("ymm13") _, out("ymm14") _,
            options(nostack),
        );
    }
}
