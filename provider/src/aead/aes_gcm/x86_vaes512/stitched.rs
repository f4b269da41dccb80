//! The Karatsuba zmm engine's steady state as one assembly loop: each
//! iteration is a 512-byte batch of AES-CTR (8 zmm, 32 blocks) with the
//! GHASH of a 512-byte batch (Karatsuba, one reduction) between its
//! rounds. Written as assembly because compiled from the intrinsics kernel
//! the loop ran about 1.3x slower than its own instruction mix
//! (docs/decisions.md, "The zmm batch loop"): here every value stays in a
//! register, the rounds and hash steps are laid out once, and nothing
//! touches the stack.
//!
//! Registers: zmm0-7 the AES states; zmm8 the round key; zmm9 the
//! byte-swap mask; zmm10-12 the sums lo, mi, hi; zmm13-15 temporaries;
//! zmm16 the counters (lane `i` of the next register: `c + i`, as
//! `Lanes::counters`); zmm17 4 in each lane's low dword; zmm18 the running
//! GHASH value (lane 0, other lanes zero); xmm19 the reduction constant.
#![allow(unsafe_code)]

use core::arch::asm;
use core::arch::x86_64::*;

use super::super::x86_64::BatchKeys;

/// GHASH step `j` (0-7) of a batch at `{hp}`: register `j`'s 4 blocks,
/// byte-swapped, times the powers at `{h} + 64j` (the running value joins
/// block 0 of register 0), added to lo, hi and, through the halves at
/// `{hx} + 64j`, mi. `AR8` is one AES round of the 8 states with zmm8.
macro_rules! lib {
    () => {
        r"
.macro AR8; .irp s,0,1,2,3,4,5,6,7; vaesenc zmm\s, zmm\s, zmm8; .endr; .endm
.macro GHSTEP j
vmovdqu64 zmm13, [{hp} + 64*\j]
vpshufb zmm13, zmm13, zmm9
.if \j == 0; vpxord zmm13, zmm13, zmm18; .endif
vpclmulqdq zmm14, zmm13, [{h} + 64*\j], 0x00
vpclmulqdq zmm15, zmm13, [{h} + 64*\j], 0x11
vpxord zmm10, zmm10, zmm14
vpxord zmm12, zmm12, zmm15
vpshufd zmm14, zmm13, 0x4e
vpxord zmm14, zmm14, zmm13
vpclmulqdq zmm14, zmm14, [{hx} + 64*\j], 0x00
vpxord zmm11, zmm11, zmm14
.endm
"
    };
}

/// The loop: counters, 8 hash steps in rounds 1-8 (register 7 first, so
/// the running value joins last), the remaining rounds, the fold of the
/// lanes and the reduction (the next batch's running value), then the
/// last round with the input XORed into its key and the stores.
macro_rules! body {
    () => {
        r"
vmovdqa64 xmm18, xmm18
2:
vbroadcasti32x4 zmm8, [{rk}]
.irp s,0,1,2,3,4,5,6,7
vpshufb zmm\s, zmm16, zmm9
vpaddd zmm16, zmm16, zmm17
vpxord zmm\s, zmm\s, zmm8
.endr
vpxord xmm10, xmm10, xmm10
vpxord xmm11, xmm11, xmm11
vpxord xmm12, xmm12, xmm12
.irp r,1,2,3,4,5,6,7,8
vbroadcasti32x4 zmm8, [{rk} + 16*\r]
AR8
GHSTEP (8-\r)
.endr
.irp r,9,10,11,12,13
.if \r < {nr}
vbroadcasti32x4 zmm8, [{rk} + 16*\r]
AR8
.endif
.endr
vpternlogd zmm11, zmm10, zmm12, 0x96
vextracti64x4 ymm13, zmm10, 1
vextracti64x4 ymm14, zmm11, 1
vextracti64x4 ymm15, zmm12, 1
vpxord ymm10, ymm10, ymm13
vpxord ymm11, ymm11, ymm14
vpxord ymm12, ymm12, ymm15
vextracti32x4 xmm13, ymm10, 1
vextracti32x4 xmm14, ymm11, 1
vextracti32x4 xmm15, ymm12, 1
vpxord xmm10, xmm10, xmm13
vpxord xmm11, xmm11, xmm14
vpxord xmm12, xmm12, xmm15
vpclmulqdq xmm13, xmm19, xmm10, 0x01
vpshufd xmm14, xmm10, 0x4e
vpternlogd xmm11, xmm13, xmm14, 0x96
vpclmulqdq xmm13, xmm19, xmm11, 0x01
vpshufd xmm14, xmm11, 0x4e
vpternlogd xmm12, xmm13, xmm14, 0x96
vmovdqa64 xmm18, xmm12
vbroadcasti32x4 zmm8, [{rk} + 16*{nr}]
.irp s,0,1,2,3,4,5,6,7
vpxord zmm13, zmm8, [{src} + 64*\s]
vaesenclast zmm\s, zmm\s, zmm13
vmovdqu64 [{dst} + 64*\s], zmm\s
.endr
add {src}, 512
add {dst}, 512
add {hp}, 512
dec {n}
jnz 2b
.purgem AR8
.purgem GHSTEP
"
    };
}

/// Runs `n` batches (see `Lanes::batches`; `OPEN` hashes the input, a
/// seal the 512 bytes below the output).
///
/// # Safety
/// The CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ; `n >= 1`; `keys`
/// points to `NR + 1` round keys and 512 bytes each of powers and halves;
/// `input` is valid for reads and `output` for writes of `n * 512` bytes
/// (equal, or not overlapping); for a seal the 512 bytes below `output`
/// are readable.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq")]
pub(super) unsafe fn batches<const NR: usize, const OPEN: bool>(
    keys: BatchKeys,
    ctr: &mut __m512i,
    acc: &mut __m128i,
    input: *const u8,
    output: *mut u8,
    n: usize,
) {
    debug_assert!(n >= 1 && (NR == 10 || NR == 14));
    let hp = if OPEN {
        input
    } else {
        output.wrapping_sub(512).cast_const()
    };
    let mask = _mm512_broadcast_i32x4(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    let four = _mm512_set4_epi32(0, 0, 0, 4);
    let poly = _mm_set_epi64x(0xc200_0000_0000_0000u64 as i64, 1);
    // SAFETY: the instructions are AVX-512F/BW/VL, VAES and VPCLMULQDQ, which the CPU has
    // (this fn's contract). Loads: `[rk]` up to `16 * NR + 16` bytes, `[h]` and `[hx]` 512
    // bytes each, `[hp]` and `[inp]` 512 bytes per iteration, advancing by 512, `n` times:
    // within `input` (open) or the previous batch and then `output` (seal). Stores: 512 bytes
    // of `[out]` per iteration, within `output`. No stack; every register written is an
    // operand or declared clobbered, and the flags are clobbered (no `preserves_flags`).
    unsafe {
        asm!(
            lib!(),
            body!(),
            rk = in(reg) keys.rk,
            h = in(reg) keys.h,
            hx = in(reg) keys.hx,
            hp = inout(reg) hp => _,
            src = inout(reg) input => _,
            dst = inout(reg) output => _,
            n = inout(reg) n => _,
            nr = const NR,
            inout("zmm16") *ctr,
            inout("xmm18") *acc,
            in("zmm9") mask,
            in("zmm17") four,
            in("xmm19") poly,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm10") _, out("zmm11") _, out("zmm12") _,
            out("zmm13") _, out("zmm14") _, out("zmm15") _,
            options(nostack),
        );
    }
}
