//! The AVX build's steady state as one assembly loop: each iteration is a
//! 128-byte batch of AES-CTR (8 xmm, 8 blocks) with the GHASH of a
//! 128-byte batch (Karatsuba, one reduction) between its rounds, as the
//! ymm and zmm loops do (docs/decisions.md, "The xmm batch loop"):
//! compiled from the intrinsics, the AES-256 batch kept a third of its
//! instructions on the stack; here every value stays in a register and the
//! constants are memory operands.
//!
//! Registers: xmm0-7 the AES states; xmm8 the round key; xmm9 the
//! byte-swap mask; xmm10-12 the sums lo, mi, hi; xmm13-14 temporaries;
//! xmm15 the running GHASH value. The counter lives in `*ctr` between
//! batches (as `Lanes::counters`).
#![allow(unsafe_code)]

use core::arch::asm;
use core::arch::x86_64::*;

use super::super::kernel::BatchKeys;

/// One in the low dword (the step between blocks' counters), then the
/// GHASH reduction constant (low qword 1, high qword `0xc2 << 56`).
#[repr(C, align(16))]
struct Consts([u32; 8]);

static CONSTS: Consts = Consts([1, 0, 0, 0, 1, 0, 0, 0xc200_0000]);

/// `GH1 j`: GHASH of block `j` (0-7) of the batch at `{hp}`, byte-swapped
/// (the running value joins block 0), times the power at `{h} + 16j`,
/// added to lo and hi, and through the half at `{hx} + 16j` to mi. `AR8`
/// is one AES round of the 8 states with xmm8.
macro_rules! lib {
    () => {
        r"
.macro AR8; .irp s,0,1,2,3,4,5,6,7; vaesenc xmm\s, xmm\s, xmm8; .endr; .endm
.macro GH1 j
vmovdqu xmm13, [{hp} + 16*\j]
vpshufb xmm13, xmm13, xmm9
.if \j == 0; vpxor xmm13, xmm13, xmm15; .endif
vpclmulqdq xmm14, xmm13, [{h} + 16*\j], 0x00
vpxor xmm10, xmm10, xmm14
vpclmulqdq xmm14, xmm13, [{h} + 16*\j], 0x11
vpxor xmm12, xmm12, xmm14
vpshufd xmm14, xmm13, 0x4e
vpxor xmm13, xmm13, xmm14
vpclmulqdq xmm13, xmm13, [{hx} + 16*\j], 0x00
vpxor xmm11, xmm11, xmm13
.endm
"
    };
}

/// The loop: counters, one hash step in each of rounds 1-8 (block 7
/// first, so the running value joins last), the remaining rounds, the
/// reduction (the next batch's running value), then the last round with
/// the input XORed into its key and the stores. In every inlined copy
/// (both key sizes, seal and open) the loop's first instruction sits 47
/// bytes into a 64-byte line wherever the function lands; the padding
/// before it runs once per call (docs/decisions.md, "The xmm batch loop":
/// measured placement).
macro_rules! body {
    () => {
        r"
.p2align 6
.nops 47
2:
vmovdqu xmm8, [{rk}]
vmovdqu xmm13, [{ctr}]
.irp s,0,1,2,3,4,5,6,7
vpshufb xmm\s, xmm13, xmm9
vpaddd xmm13, xmm13, [{c}]
vpxor xmm\s, xmm\s, xmm8
.endr
vmovdqu [{ctr}], xmm13
vpxor xmm10, xmm10, xmm10
vpxor xmm11, xmm11, xmm11
vpxor xmm12, xmm12, xmm12
.irp r,1,2,3,4,5,6,7,8
vmovdqu xmm8, [{rk} + 16*\r]
AR8
GH1 (8-\r)
.endr
.irp r,9,10,11,12,13
.if \r < {nr}
vmovdqu xmm8, [{rk} + 16*\r]
AR8
.endif
.endr
vpxor xmm11, xmm11, xmm10
vpxor xmm11, xmm11, xmm12
vpclmulqdq xmm13, xmm10, [{c} + 16], 0x10
vpshufd xmm14, xmm10, 0x4e
vpxor xmm11, xmm11, xmm13
vpxor xmm11, xmm11, xmm14
vpclmulqdq xmm13, xmm11, [{c} + 16], 0x10
vpshufd xmm14, xmm11, 0x4e
vpxor xmm12, xmm12, xmm13
vpxor xmm15, xmm12, xmm14
vmovdqu xmm8, [{rk} + 16*{nr}]
.irp s,0,1,2,3,4,5,6,7
vpxor xmm13, xmm8, [{src} + 16*\s]
vaesenclast xmm\s, xmm\s, xmm13
vmovdqu [{dst} + 16*\s], xmm\s
.endr
add {src}, 128
add {dst}, 128
add {hp}, 128
dec {n}
jnz 2b
.purgem AR8
.purgem GH1
"
    };
}

/// Runs `n` batches (see `Lanes::batches`; `OPEN` hashes the input, a
/// seal the 128 bytes below the output).
///
/// # Safety
/// The CPU has AVX, AES-NI, PCLMULQDQ and SSSE3; `n >= 1`; `keys` points
/// to `NR + 1` round keys and 128 bytes each of powers and halves; `input`
/// is valid for reads and `output` for writes of `n * 128` bytes (equal,
/// or not overlapping); for a seal the 128 bytes below `output` are
/// readable.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,avx")]
pub(super) unsafe fn batches<const NR: usize, const OPEN: bool>(
    keys: BatchKeys,
    ctr: &mut __m128i,
    acc: &mut __m128i,
    input: *const u8,
    output: *mut u8,
    n: usize,
) {
    debug_assert!(n >= 1 && (NR == 10 || NR == 14));
    let hp = if OPEN {
        input
    } else {
        output.wrapping_sub(128).cast_const()
    };
    let mask = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // SAFETY: the instructions are AVX (VEX-encoded SSE2, SSSE3, AES-NI and PCLMULQDQ), which
    // the CPU has (this fn's contract). Loads: `[rk]` up to `16 * NR + 16` bytes, `[h]` and
    // `[hx]` 128 bytes each, `[c]` the 32 bytes of `CONSTS`, `[ctr]` 16 bytes (also stored, a
    // valid `&mut`), `[hp]` and `[src]` 128 bytes per iteration, advancing by 128, `n` times:
    // within `input` (open) or the previous batch and then `output` (seal). Stores: 128 bytes
    // of `[dst]` per iteration, within `output`. No stack; every register written is an
    // operand or declared clobbered, and the flags are clobbered (no `preserves_flags`).
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
            in("xmm9") mask,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm10") _, out("xmm11") _, out("xmm12") _,
            out("xmm13") _, out("xmm14") _,
            options(nostack),
        );
    }
}
