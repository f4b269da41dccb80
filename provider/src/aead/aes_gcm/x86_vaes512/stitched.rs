//! The Karatsuba zmm engine's steady state as one assembly loop: each
//! iteration is a 512-byte batch of AES-CTR (8 zmm, 32 blocks) with the
//! GHASH of a 512-byte batch (Karatsuba, one reduction, lane by lane)
//! between its rounds. Written as assembly because compiled from the
//! intrinsics kernel the loop ran about 1.3x slower than its own
//! instruction mix (docs/decisions.md, "The zmm batch loop"): here every
//! value stays in a register, the rounds and hash steps are laid out once,
//! and nothing is spilled (the one stack write is a seal's copy of its last
//! batch to the caller's `keep`).
//!
//! Registers: zmm0-7 the AES states; zmm8 the round key (and, in an open,
//! a temporary of the hash between a round's `vaesenc`s and the next
//! round's key); zmm9 the
//! byte-swap mask; zmm10-12 the sums lo, mi, hi; zmm13-15 and zmm30-31
//! temporaries; zmm16 the counters (lane `i` of the next register: `c + i`,
//! as `Lanes::counters`); zmm17 32 in each lane's low dword; zmm18 the
//! running GHASH value (lane 0, other lanes zero); zmm19 the reduction
//! constant in every lane; zmm20 and zmm21 4 and 8 in each lane's top
//! byte, added to byte-swapped counters; zmm22-29 the batch being hashed,
//! register `j` in zmm`22+j`: a seal keeps the ciphertext it stored in the
//! iteration before (reloaded, the stores that had not yet completed
//! stalled the loads, most when split across cache lines:
//! docs/decisions.md, "The zmm batch loop"), and after the last iteration
//! writes them to `keep` where that is not null; an open loads its input there
//! and XORs it into the last round from there, one load per block ("Loads
//! in the zmm loop").
#![allow(unsafe_code)]

use core::arch::asm;
use core::arch::x86_64::*;

use super::super::kernel::BatchKeys;

/// `GH2 j, k, cj, ck`: GHASH of registers `j` and `k` (0-7) of the batch,
/// held in zmm`cj` and zmm`ck` (a seal byte-swaps them in place; an open
/// loads them from `{hp}` and byte-swaps them into zmm13 and zmm8, keeping
/// the ciphertext for `LAST`): `GHP` multiplies their blocks by the powers
/// at `{h} + 64j` and `+ 64k`, each loaded once for its two products (the
/// running value joins block 0 of register 0), adds them to lo, hi and,
/// through the halves at `{hx} + 64j` and `+ 64k`, mi, two products per
/// three-way XOR. `AR8` is one AES round of the 8 states with zmm8.
macro_rules! lib {
    () => {
        r"
.macro AR8; .irp s,0,1,2,3,4,5,6,7; vaesenc zmm\s, zmm\s, zmm8; .endr; .endm
.macro LAST s, c
.if {open}
vpxord zmm13, zmm8, zmm\c
.else
vpxord zmm13, zmm8, [{src} + 64*\s]
.endif
vaesenclast zmm\c, zmm\s, zmm13
vmovdqu64 [{dst} + 64*\s], zmm\c
.endm
.macro GH2 j, k, cj, ck
.if {open}
vmovdqu64 zmm\cj, [{hp} + 64*\j]
vmovdqu64 zmm\ck, [{hp} + 64*\k]
vpshufb zmm13, zmm\cj, zmm9
vpshufb zmm8, zmm\ck, zmm9
.if \k == 0; vpxord zmm8, zmm8, zmm18; .endif
GHP 13, 8, \j, \k
.else
vpshufb zmm\cj, zmm\cj, zmm9
vpshufb zmm\ck, zmm\ck, zmm9
.if \k == 0; vpxord zmm\ck, zmm\ck, zmm18; .endif
GHP \cj, \ck, \j, \k
.endif
.endm
.macro GHP a, b, j, k
vmovdqu64 zmm14, [{h} + 64*\j]
vpclmulqdq zmm15, zmm\a, zmm14, 0x00
vpclmulqdq zmm14, zmm\a, zmm14, 0x11
vmovdqu64 zmm30, [{h} + 64*\k]
vpclmulqdq zmm31, zmm\b, zmm30, 0x00
vpclmulqdq zmm30, zmm\b, zmm30, 0x11
vpternlogd zmm10, zmm15, zmm31, 0x96
vpternlogd zmm12, zmm14, zmm30, 0x96
vpshufd zmm14, zmm\a, 0x4e
vpshufd zmm30, zmm\b, 0x4e
vpxord zmm14, zmm14, zmm\a
vpxord zmm30, zmm30, zmm\b
vpclmulqdq zmm14, zmm14, [{hx} + 64*\j], 0x00
vpclmulqdq zmm30, zmm30, [{hx} + 64*\k], 0x00
vpternlogd zmm11, zmm14, zmm30, 0x96
.endm
"
    };
}

/// The loop: counters, 4 pairs of hash steps in rounds 1, 3, 5 and 7
/// (registers 1 and 0 first: the running value, reduced before the last
/// round of the iteration before, is ready then), the remaining rounds, the
/// reduction in each lane and the fold of the lanes (the next batch's
/// running value; docs/decisions.md, "Reduce, then fold"), then the last
/// round with the input XORed into its key and the stores.
macro_rules! body {
    () => {
        r"
vmovdqa64 xmm18, xmm18
vpaddd zmm21, zmm20, zmm20
.if {open} == 0
vmovdqu64 zmm22, [{hp}]
vmovdqu64 zmm23, [{hp} + 64]
vmovdqu64 zmm24, [{hp} + 128]
vmovdqu64 zmm25, [{hp} + 192]
vmovdqu64 zmm26, [{hp} + 256]
vmovdqu64 zmm27, [{hp} + 320]
vmovdqu64 zmm28, [{hp} + 384]
vmovdqu64 zmm29, [{hp} + 448]
.endif
2:
vbroadcasti32x4 zmm8, [{rk}]
vmovd {t:e}, xmm16
and {t:e}, 0xff
cmp {t:e}, 224
ja 3f
vpshufb zmm0, zmm16, zmm9
vpaddd zmm16, zmm16, zmm17
vpaddd zmm1, zmm0, zmm20
vpaddd zmm2, zmm0, zmm21
vpaddd zmm3, zmm1, zmm21
vpaddd zmm4, zmm2, zmm21
vpaddd zmm5, zmm3, zmm21
vpaddd zmm6, zmm4, zmm21
vpaddd zmm7, zmm5, zmm21
.irp s,0,1,2,3,4,5,6,7
vpxord zmm\s, zmm\s, zmm8
.endr
jmp 4f
3:
vpsrld zmm13, zmm17, 3
.irp s,0,1,2,3,4,5,6,7
vpshufb zmm\s, zmm16, zmm9
vpaddd zmm16, zmm16, zmm13
vpxord zmm\s, zmm\s, zmm8
.endr
4:
vpxord xmm10, xmm10, xmm10
vpxord xmm11, xmm11, xmm11
vpxord xmm12, xmm12, xmm12
.irp r,1,2,3,4,5,6,7,8
vbroadcasti32x4 zmm8, [{rk} + 16*\r]
AR8
.if \r == 1; GH2 1, 0, 23, 22; .endif
.if \r == 3; GH2 3, 2, 25, 24; .endif
.if \r == 5; GH2 5, 4, 27, 26; .endif
.if \r == 7; GH2 7, 6, 29, 28; .endif
.endr
.irp r,9,10,11,12,13
.if \r < {nr}
vbroadcasti32x4 zmm8, [{rk} + 16*\r]
AR8
.endif
.endr
vpternlogd zmm11, zmm10, zmm12, 0x96
vpclmulqdq zmm13, zmm19, zmm10, 0x01
vpshufd zmm14, zmm10, 0x4e
vpternlogd zmm11, zmm13, zmm14, 0x96
vpclmulqdq zmm13, zmm19, zmm11, 0x01
vpshufd zmm14, zmm11, 0x4e
vpternlogd zmm12, zmm13, zmm14, 0x96
vextracti64x4 ymm13, zmm12, 1
vpxord ymm12, ymm12, ymm13
vextracti32x4 xmm13, ymm12, 1
vpxord xmm18, xmm12, xmm13
vbroadcasti32x4 zmm8, [{rk} + 16*{nr}]
LAST 0, 22
LAST 1, 23
LAST 2, 24
LAST 3, 25
LAST 4, 26
LAST 5, 27
LAST 6, 28
LAST 7, 29
add {src}, 512
add {dst}, 512
add {hp}, 512
dec {n}
jnz 2b
.if {open} == 0
test {keep}, {keep}
jz 5f
vmovdqa64 [{keep}], zmm22
vmovdqa64 [{keep} + 64], zmm23
vmovdqa64 [{keep} + 128], zmm24
vmovdqa64 [{keep} + 192], zmm25
vmovdqa64 [{keep} + 256], zmm26
vmovdqa64 [{keep} + 320], zmm27
vmovdqa64 [{keep} + 384], zmm28
vmovdqa64 [{keep} + 448], zmm29
5:
.endif
.purgem AR8
.purgem LAST
.purgem GH2
.purgem GHP
"
    };
}

/// Runs `n` batches (see `Lanes::batches`; `OPEN` hashes the input, a
/// seal the 512 bytes below the output). A seal then writes its last
/// batch's ciphertext, which it holds in zmm22-29, to `keep` too unless
/// that is null: the hash after the loop reads it there
/// (`Lanes::KEEP_LAST`).
///
/// # Safety
/// The CPU has AVX-512F/BW/VL, VAES and VPCLMULQDQ; `n >= 1`; `keys`
/// points to `NR + 1` round keys and 512 bytes each of powers and halves;
/// `input` is valid for reads and `output` for writes of `n * 512` bytes
/// (equal, or not overlapping); for a seal the 512 bytes below `output`
/// are readable and `keep` is null or valid for writes of 512 bytes,
/// 64-byte aligned (unused in an open).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq")]
pub(super) unsafe fn batches<const NR: usize, const OPEN: bool>(
    keys: BatchKeys,
    ctr: &mut __m512i,
    acc: &mut __m128i,
    input: *const u8,
    output: *mut u8,
    n: usize,
    keep: *mut u8,
) {
    debug_assert!(n >= 1 && (NR == 10 || NR == 14));
    debug_assert!(OPEN || (keep as usize).is_multiple_of(64));
    let hp = if OPEN {
        input
    } else {
        output.wrapping_sub(512).cast_const()
    };
    let mask = _mm512_broadcast_i32x4(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    // The counters of a batch whose 32 blocks do not carry out of the
    // counter's last byte (its low byte at most 224, 7 batches in 8) are
    // one byte-swap and 7 additions to that byte (4 blocks apart, `step`):
    // 7 fewer shuffles, which share `vaesenc`'s pipes on Zen 5. The others
    // swap each register's counters (4 apart: `thirty_two` shifted right by 3).
    let thirty_two = _mm512_set4_epi32(0, 0, 0, 32);
    let step = _mm512_set4_epi32(4 << 24, 0, 0, 0);
    let poly = _mm512_broadcast_i32x4(_mm_set_epi64x(0xc200_0000_0000_0000u64 as i64, 1));
    // SAFETY: the instructions are AVX-512F/BW/VL, VAES and VPCLMULQDQ, which the CPU has
    // (this fn's contract). Loads: `[rk]` up to `16 * NR + 16` bytes, `[h]` and `[hx]` 512
    // bytes each; `[hp]` 512 bytes per iteration, advancing by 512, `n` times, within
    // `input` (open), or 512 bytes once, the batch below `output` (seal); `[src]` (seal
    // only) 512 bytes per iteration likewise within `input`. Stores: 512 bytes of `[dst]`
    // per iteration, within `output`, and (seal only, `keep` not null) 512 aligned bytes
    // of `[keep]` once, after the loop. No push or red zone (`nostack`): the only
    // stack memory written is the caller's `keep`; every register written is an
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
            keep = in(reg) keep,
            nr = const NR,
            open = const OPEN as u8,
            inout("zmm16") *ctr,
            inout("xmm18") *acc,
            t = out(reg) _,
            in("zmm9") mask,
            in("zmm17") thirty_two,
            in("zmm20") step,
            in("zmm19") poly,
            out("zmm21") _, out("zmm22") _, out("zmm23") _, out("zmm24") _,
            out("zmm25") _, out("zmm26") _, out("zmm27") _, out("zmm28") _,
            out("zmm29") _, out("zmm30") _, out("zmm31") _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm10") _, out("zmm11") _, out("zmm12") _,
            out("zmm13") _, out("zmm14") _, out("zmm15") _,
            options(nostack),
        );
    }
}
