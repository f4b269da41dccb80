//! The CPU's own limits: on whatever x86-64 CPU it runs, the floor in
//! cycles per byte (and GB/s) of each engine's instruction mix on one core.
//!
//! ```text
//! taskset -c 1 cargo bench -p rustls-fusion-benches --bench limits [-- only=<name>]
//! ```
//! `only=<name>` times only the rows whose name contains `<name>` (an
//! instruction such as `vaesenc`, an engine such as `X86Vaes512`, an
//! algorithm such as `AES-256`); a bound that needs an instruction not
//! timed prints `?`.
//!
//! 1. Clock: a chain of dependent register-register `add`s (one per cycle
//!    on every x86-64 core; Intel's cores from Golden Cove (Sapphire
//!    Rapids) fold `add reg, imm` at rename, several per cycle, so the
//!    chain has no immediates) timed with `Instant` gives the core clock;
//!    every cycle below is seconds × that clock, never TSC ticks. A
//!    dependent `imul` chain (3 cycles on current cores) checks it.
//! 2. Instructions: throughput (per cycle) of each instruction the engines
//!    lean on, at each width the CPU has, in asm loops of 11-12 independent
//!    register chains; latency (cycles) of one dependent chain, including
//!    one Poly1305 step on 64-bit limbs (the `PB` macro below). Two rows
//!    pair 8 chains of `vaesenc` with 8 of `vpshufb` (zmm), which on Intel
//!    issue on different ports: both at once, then with the shuffle's
//!    operand from memory, what full-width loads beside a full pair of
//!    ports cost (docs/decisions.md, "Loads in the zmm loop").
//! 3. Engines: one asm loop body per batch of each engine, with the
//!    batch's instruction mix and dependencies (seal; open has the same
//!    mix). AES-GCM: 8 registers of counter blocks through all rounds, data
//!    XOR, loads and stores in L1, Karatsuba GHASH of the previous batch's
//!    ciphertext (3 `vpclmulqdq` per register) with one reduction and the
//!    fold of the lanes (on zmm each lane reduced, then one register
//!    folded, as the zmm loop does); the reduced hash feeds the next
//!    batch's first multiply through one XOR, the only dependency between
//!    batches.
//!    ChaCha20-Poly1305: 16 vertical state registers through 10 double
//!    rounds, the final addition, the transpose, data XOR, loads and
//!    stores, with Poly1305 of the same bytes in the same loop: on general
//!    registers in two Horner chains (as the real kernels run long
//!    records), or on 8 IFMA zmm lanes (radix 2^44). The GHASH and Poly1305
//!    arithmetic has the real shape but is not checked: only the mix and
//!    its dependencies count here.
//!
//! Each figure is the best (least time) of 7 runs of about 60 ms, after a
//! warm-up that sizes them. `bound by` names the unit that the instruction
//! counts and the measured throughputs and latencies say should dominate,
//! with its cycles per batch: `vector ALU` is every vector instruction at
//! `vpaddd`'s rate, `shuffles` the shuffles, byte shifts and lane extracts
//! at `vpshufb`'s, `Poly1305 chain` the Horner steps of one chain × the
//! step's latency, `ChaCha chain` the dependent levels of a double round
//! (add, xor, rotate) × their latencies. It sums nothing across units, so
//! where units share pipes (on Zen 5 `vaesenc` and the shuffles do) the
//! measured floor is above it.
//!
//! How to read it: an engine's `cycles` here is the floor of its mix on
//! this core: what the execution units need for it, with its dependencies,
//! leaving out the front end and any memory effect beyond L1 (and key
//! setup, tags and short records). No implementation of that mix beats it
//! on one core; the real engine within 1.15× of it (in c/B on long
//! records, at the same clock) is the target. On CPUs that lower their
//! clock under wide vectors, the cycles are at the clock of scalar code.

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    println!("limits: x86-64 only");
}

#[cfg(target_arch = "x86_64")]
fn main() {
    x86::main();
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::{asm, is_x86_feature_detected as has};
    use std::time::Instant;

    /// `n` iterations of an asm loop over the scratch at `p`.
    type Kernel = unsafe fn(u64, *mut u8);

    /// The kernels' memory (in L1), at `rdi`: 0 data in, 2048 data out,
    /// 4096 AES round keys (64 B apart), 5120 H powers, 5632 their halves'
    /// XOR, 6144 byte-reflect mask, 6208 GHASH polynomial, 6336 counter,
    /// 6400 ChaCha20 state rows (32 B each), 6912 counter steps, 7200 and
    /// 7232 rotate masks, 7424 and 7488 spilled ChaCha20 rows, 7680 row
    /// spill, 8192 Poly1305 r0 r1 s1, 8256 IFMA powers (64 B each), 8640 IFMA
    /// masks. Values do not matter (no instruction here is data-dependent).
    #[repr(C, align(64))]
    struct Scratch([u8; 16384]);

    /// Assembler macros of the engine mixes (defined and purged in each asm
    /// block, so a block may be duplicated).
    macro_rules! lib {
        () => {
            r"
.macro AR8 w, k; .irp r,0,1,2,3,4,5,6,7; vaesenc \w\r, \w\r, \k; .endr; .endm
.macro ACC d, first; .if \first; vpxord zmm\d, zmm26, zmm27; .else; vpternlogd zmm\d, zmm26, zmm27, 0x96; .endif; .endm
.macro GH2 a, b, first
vpclmulqdq zmm26, zmm\a, zmm21, 0; vpclmulqdq zmm27, zmm\b, zmm21, 0; ACC 23, \first
vpclmulqdq zmm26, zmm\a, zmm21, 0x11; vpclmulqdq zmm27, zmm\b, zmm21, 0x11; ACC 24, \first
vpshufd zmm26, zmm\a, 0x4e; vpshufd zmm27, zmm\b, 0x4e; vpxord zmm26, zmm26, zmm\a; vpxord zmm27, zmm27, zmm\b
vpclmulqdq zmm26, zmm26, zmm22, 0; vpclmulqdq zmm27, zmm27, zmm22, 0; ACC 25, \first
.endm
.macro GCMZ extra
vpaddd zmm19, zmm19, zmm20
.irp r,0,1,2,3,4,5,6,7; vpaddd zmm\r, zmm19, zmm20; vpxord zmm\r, zmm\r, zmm16; .endr
vpxord zmm8, zmm8, zmm23; AR8 zmm, zmm17; GH2 8, 9, 1; AR8 zmm, zmm17
AR8 zmm, zmm17; GH2 10, 11, 0; AR8 zmm, zmm17; AR8 zmm, zmm17; GH2 12, 13, 0; AR8 zmm, zmm17
AR8 zmm, zmm17; GH2 14, 15, 0; AR8 zmm, zmm17; .rept 1 + \extra; AR8 zmm, zmm17; .endr
vpternlogd zmm25, zmm23, zmm24, 0x96
vpclmulqdq zmm26, zmm23, zmm31, 0x10; vpshufd zmm27, zmm23, 0x4e; vpternlogd zmm25, zmm26, zmm27, 0x96
vpclmulqdq zmm26, zmm25, zmm31, 0x10; vpshufd zmm27, zmm25, 0x4e; vpternlogd zmm24, zmm26, zmm27, 0x96
vextracti64x4 ymm26, zmm24, 1; vpxord ymm24, ymm24, ymm26
vextracti32x4 xmm26, ymm24, 1; vpxord xmm23, xmm24, xmm26
.irp r,0,1,2,3,4,5,6,7
vaesenclast zmm\r, zmm\r, zmm17; vpxord zmm\r, zmm\r, [rdi + 64*\r]; vmovdqu64 [rdi + 2048 + 64*\r], zmm\r
.endr
vpshufb zmm8, zmm0, zmm18; vpshufb zmm9, zmm1, zmm18; vpshufb zmm10, zmm2, zmm18; vpshufb zmm11, zmm3, zmm18
vpshufb zmm12, zmm4, zmm18; vpshufb zmm13, zmm5, zmm18; vpshufb zmm14, zmm6, zmm18; vpshufb zmm15, zmm7, zmm18
.endm
.macro GHP w, d, r, src, imm, base, sz
.if \r; vpclmulqdq \w\()9, \src, [rdi + \base + \sz*\r], \imm; vpxor \w\d, \w\d, \w\()9
.else; vpclmulqdq \w\d, \src, [rdi + \base + \sz*\r], \imm; .endif
.endm
.macro GHM w, sz, r
vmovdqu \w\()8, [rdi + 2048 + \sz*\r]; vpshufb \w\()8, \w\()8, [rdi + 6144]
.if \r == 0; vpxor \w\()8, \w\()8, \w\()10; .endif
GHP \w, 12, \r, \w\()8, 0, 5120, \sz; GHP \w, 13, \r, \w\()8, 0x11, 5120, \sz
vpshufd \w\()11, \w\()8, 0x4e; vpxor \w\()11, \w\()11, \w\()8; GHP \w, 14, \r, \w\()11, 0, 5632, \sz
.endm
.macro GCMV w, sz, fold, extra
vmovdqu \w\()11, [rdi + 6336]; vpaddd \w\()11, \w\()11, [rdi + 6912]; vmovdqu [rdi + 6336], \w\()11
vmovdqu \w\()15, [rdi + 4096]
.irp r,0,1,2,3,4,5,6,7; vpaddd \w\r, \w\()11, [rdi + 6912 + \sz*\r]; vpxor \w\r, \w\r, \w\()15; .endr
.irp r,0,1,2,3,4,5,6,7; vmovdqu \w\()15, [rdi + 4160 + 64*\r]; AR8 \w, \w\()15; GHM \w, \sz, \r; .endr
.rept 1 + \extra; vmovdqu \w\()15, [rdi + 4672]; AR8 \w, \w\()15; .endr
vpxor \w\()14, \w\()14, \w\()12; vpxor \w\()14, \w\()14, \w\()13; vpslldq \w\()9, \w\()14, 8; vpsrldq \w\()14, \w\()14, 8
vpxor \w\()12, \w\()12, \w\()9; vpxor \w\()13, \w\()13, \w\()14
.if \fold; vextracti128 xmm9, ymm12, 1; vextracti128 xmm11, ymm13, 1; vpxor xmm12, xmm12, xmm9; vpxor xmm13, xmm13, xmm11; .endif
vpclmulqdq xmm9, xmm12, [rdi + 6208], 0x10; vpshufd xmm12, xmm12, 0x4e; vpxor xmm12, xmm12, xmm9
vpclmulqdq xmm9, xmm12, [rdi + 6208], 0x10; vpshufd xmm12, xmm12, 0x4e; vpxor xmm12, xmm12, xmm9; vpxor xmm10, xmm12, xmm13
vmovdqu \w\()15, [rdi + 5056]
.irp r,0,1,2,3,4,5,6,7
vaesenclast \w\r, \w\r, \w\()15; vpxor \w\r, \w\r, [rdi + \sz*\r]; vmovdqu [rdi + 2048 + \sz*\r], \w\r
.endr
.endm
.macro PB h0, h1, h2, off
add \h0, [rdi + \off]; adc \h1, [rdi + \off + 8]; adc \h2, 1
mov rdx, \h0; mulx rsi, rax, [rdi + 8192]; mulx r15, r14, [rdi + 8200]
mov rdx, \h1; mulx \h1, \h0, [rdi + 8208]; add rax, \h0; adc rsi, \h1
mulx \h1, \h0, [rdi + 8192]; add r14, \h0; adc r15, \h1
mov \h0, \h2; imul \h0, [rdi + 8208]; imul \h2, [rdi + 8192]; add r14, \h0; adc r15, \h2
add r14, rsi; adc r15, 0; mov \h0, rax; mov \h1, r14; mov \h2, r15; and \h2, 3
mov rax, r15; shr rax, 2; and r15, -4; add r15, rax; add \h0, r15; adc \h1, 0; adc \h2, 0
.endm
.macro PS2; PB r8, r9, r10, 0; PB r11, r12, r13, 16; .endm
.macro MA lo, hi, h, r; vpmadd52luq zmm\lo, zmm\h, [rdi + \r]; vpmadd52huq zmm\hi, zmm\h, [rdi + \r]; .endm
.macro VS
vmovdqu64 zmm17, [rdi]; vmovdqu64 zmm18, [rdi + 64]; vpunpcklqdq zmm19, zmm17, zmm18; vpunpckhqdq zmm20, zmm17, zmm18
vpandq zmm21, zmm19, qword ptr [rdi + 8640]{{1to8}}; vpsrlq zmm22, zmm19, 44; vpsllq zmm23, zmm20, 20
vpternlogq zmm22, zmm23, qword ptr [rdi + 8640]{{1to8}}, 0xa8; vpsrlq zmm23, zmm20, 24
vporq zmm23, zmm23, qword ptr [rdi + 8656]{{1to8}}; vpaddq zmm29, zmm29, zmm21; vpaddq zmm30, zmm30, zmm22; vpaddq zmm31, zmm31, zmm23
.irp r,17,18,19,20,21,22; vpxord zmm\r, zmm\r, zmm\r; .endr
MA 17, 18, 29, 8256; MA 17, 18, 30, 8512; MA 17, 18, 31, 8448
MA 19, 20, 29, 8320; MA 19, 20, 30, 8256; MA 19, 20, 31, 8512
MA 21, 22, 29, 8384; MA 21, 22, 30, 8320; MA 21, 22, 31, 8256
vpsllq zmm18, zmm18, 8; vpsllq zmm20, zmm20, 8; vpsllq zmm22, zmm22, 10; vpaddq zmm19, zmm19, zmm18; vpaddq zmm21, zmm21, zmm20
vpsllq zmm23, zmm22, 2; vpaddq zmm22, zmm22, zmm23; vpaddq zmm17, zmm17, zmm22
vpsrlq zmm23, zmm17, 44; vpandq zmm29, zmm17, qword ptr [rdi + 8640]{{1to8}}; vpaddq zmm19, zmm19, zmm23
vpsrlq zmm23, zmm19, 44; vpandq zmm30, zmm19, qword ptr [rdi + 8640]{{1to8}}; vpaddq zmm21, zmm21, zmm23
vpsrlq zmm23, zmm21, 42; vpandq zmm31, zmm21, qword ptr [rdi + 8648]{{1to8}}
vpsllq zmm24, zmm23, 2; vpaddq zmm23, zmm23, zmm24; vpaddq zmm29, zmm29, zmm23
.endm
.macro STZ x0,y0,z0,x1,y1,z1,x2,y2,z2,x3,y3,z3,n
vpaddd zmm\x0, zmm\x0, zmm\y0; vpaddd zmm\x1, zmm\x1, zmm\y1; vpaddd zmm\x2, zmm\x2, zmm\y2; vpaddd zmm\x3, zmm\x3, zmm\y3
vpxord zmm\z0, zmm\z0, zmm\x0; vpxord zmm\z1, zmm\z1, zmm\x1; vpxord zmm\z2, zmm\z2, zmm\x2; vpxord zmm\z3, zmm\z3, zmm\x3
vprold zmm\z0, zmm\z0, \n; vprold zmm\z1, zmm\z1, \n; vprold zmm\z2, zmm\z2, \n; vprold zmm\z3, zmm\z3, \n
.endm
.macro COL n, m; STZ 0,4,12, 1,5,13, 2,6,14, 3,7,15, \n; STZ 8,12,4, 9,13,5, 10,14,6, 11,15,7, \m; .endm
.macro DIA n, m; STZ 0,5,15, 1,6,12, 2,7,13, 3,4,14, \n; STZ 10,15,5, 11,12,6, 8,13,7, 9,14,4, \m; .endm
.macro DRZ s, v
COL 16, 12; .if \s; PS2; .endif; COL 8, 7; .if \s; PS2; .endif; .if \v; VS; .endif
DIA 16, 12; .if \s; PS2; .endif; DIA 8, 7
.endm
.macro X2 w, opl, oph, il, ih, a, b, t
.ifb \il; \oph \w\t, \w\a, \w\b; \opl \w\a, \w\a, \w\b
.else; \oph \w\t, \w\a, \w\b, \ih; \opl \w\a, \w\a, \w\b, \il; .endif
.endm
.macro X4 w, opl, oph, il, ih, a0,b0,t0, a1,b1,t1, a2,b2,t2, a3,b3,t3
X2 \w, \opl, \oph, \il, \ih, \a0, \b0, \t0; X2 \w, \opl, \oph, \il, \ih, \a1, \b1, \t1
X2 \w, \opl, \oph, \il, \ih, \a2, \b2, \t2; X2 \w, \opl, \oph, \il, \ih, \a3, \b3, \t3
.endm
.macro CHZ ifma
.irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15; vpbroadcastd zmm\r, dword ptr [rdi + 6400 + 4*\r]; .endr
vpaddd zmm12, zmm12, [rdi + 6912]
.if \ifma; .rept 8; DRZ 0, 1; .endr; .rept 2; DRZ 0, 0; .endr
.else; .rept 10; DRZ 1, 0; .endr; PS2; PS2; .endif
.irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15; vpaddd zmm\r, zmm\r, dword ptr [rdi + 6400 + 4*\r]{{1to16}}; .endr
vpaddd zmm12, zmm12, [rdi + 6912]
X4 zmm, vpunpckldq, vpunpckhdq, , , 0,1,16, 2,3,1, 4,5,3, 6,7,5
X4 zmm, vpunpckldq, vpunpckhdq, , , 8,9,7, 10,11,9, 12,13,11, 14,15,13
X4 zmm, vpunpcklqdq, vpunpckhqdq, , , 0,2,15, 16,1,2, 4,6,1, 3,5,6
X4 zmm, vpunpcklqdq, vpunpckhqdq, , , 8,10,5, 7,9,10, 12,14,9, 11,13,14
X4 zmm, vshufi32x4, vshufi32x4, 0x44, 0xee, 0,4,13, 16,3,4, 15,1,3, 2,6,1
X4 zmm, vshufi32x4, vshufi32x4, 0x44, 0xee, 8,12,6, 7,11,12, 5,9,11, 10,14,9
X4 zmm, vshufi32x4, vshufi32x4, 0x88, 0xdd, 0,8,14, 16,7,8, 15,5,7, 2,10,5
X4 zmm, vshufi32x4, vshufi32x4, 0x88, 0xdd, 13,6,10, 4,12,6, 3,11,12, 1,9,11
.irp r,0,1,2,3,4,5,6,7,8,10,11,12,13,14,15,16
vpxord zmm\r, zmm\r, [rdi + 64*\r]; vmovdqu64 [rdi + 2048 + 64*\r], zmm\r
.endr
.endm
.macro STY x0,y0,z0,x1,y1,z1,n
vpaddd ymm\x0, ymm\x0, ymm\y0; vpaddd ymm\x1, ymm\x1, ymm\y1; vpxor ymm\z0, ymm\z0, ymm\x0; vpxor ymm\z1, ymm\z1, ymm\x1
.if (\n & 7) == 0; vpshufb ymm\z0, ymm\z0, [rdi + 7168 + 4*\n]; vpshufb ymm\z1, ymm\z1, [rdi + 7168 + 4*\n]
.else; vpslld ymm10, ymm\z0, \n; vpslld ymm11, ymm\z1, \n; vpsrld ymm\z0, ymm\z0, 32 - \n; vpsrld ymm\z1, ymm\z1, 32 - \n
vpor ymm\z0, ymm\z0, ymm10; vpor ymm\z1, ymm\z1, ymm11; .endif
.endm
.macro QQY a0,b0,c0,d0,a1,b1,c1,d1
STY \a0,\b0,\d0, \a1,\b1,\d1, 16; STY \c0,\d0,\b0, \c1,\d1,\b1, 12
STY \a0,\b0,\d0, \a1,\b1,\d1, 8; STY \c0,\d0,\b0, \c1,\d1,\b1, 7
.endm
.macro SWP st, ld
vmovdqu [rdi + \st], ymm8; vmovdqu [rdi + \st + 32], ymm9; vmovdqu ymm8, [rdi + \ld]; vmovdqu ymm9, [rdi + \ld + 32]
.endm
.macro DRY p
QQY 0,4,8,12, 1,5,9,13; PS2; SWP 7424, 7488; QQY 2,6,8,14, 3,7,9,15
QQY 0,5,8,15, 1,6,9,12; .if \p; PS2; .endif; SWP 7488, 7424; QQY 2,7,8,13, 3,4,9,14
.endm
.macro HY o
.irp r,0,1,2,3,4,5,6,7; vpaddd ymm\r, ymm\r, [rdi + 6400 + \o + 32*\r]; .endr
X4 ymm, vpunpckldq, vpunpckhdq, , , 0,1,8, 2,3,1, 4,5,3, 6,7,5
X4 ymm, vpunpcklqdq, vpunpckhqdq, , , 0,2,7, 8,1,2, 4,6,1, 3,5,6
X4 ymm, vperm2i128, vperm2i128, 0x20, 0x31, 0,4,5, 8,3,4, 7,1,3, 2,6,1
.irp r,0,1,2,3,4,5,7,8; vpxor ymm\r, ymm\r, [rdi + \o + 32*\r]; vmovdqu [rdi + 2048 + \o + 32*\r], ymm\r; .endr
.endm
.macro CHY
.irp r,0,1,2,3,4,5,6,7,8,9,12,13,14,15; vmovdqu ymm\r, [rdi + 6400 + 32*\r]; .endr
vpaddd ymm12, ymm12, [rdi + 6912]
vmovdqu ymm10, [rdi + 6720]; vmovdqu ymm11, [rdi + 6752]; vmovdqu [rdi + 7488], ymm10; vmovdqu [rdi + 7520], ymm11
.rept 6; DRY 1; .endr; .rept 4; DRY 0; .endr
.irp r,8,9,12,13,14,15; vmovdqu [rdi + 7424 + 32*\r], ymm\r; .endr
HY 0
.irp r,0,1,4,5,6,7; vmovdqu ymm\r, [rdi + 7680 + 32*\r]; .endr
vmovdqu ymm2, [rdi + 7488]; vmovdqu ymm3, [rdi + 7520]
HY 256
.endm
"
        };
    }

    macro_rules! purge {
        () => {
            ".purgem AR8; .purgem ACC; .purgem GH2; .purgem GCMZ; .purgem GHP; .purgem GHM
             .purgem GCMV; .purgem PB; .purgem PS2; .purgem MA; .purgem VS; .purgem STZ; .purgem COL
             .purgem DIA; .purgem DRZ; .purgem X2; .purgem X4; .purgem CHZ; .purgem STY; .purgem QQY
             .purgem SWP; .purgem DRY; .purgem HY; .purgem CHY"
        };
    }

    /// A `Kernel` running `body` `n` times in one asm loop (`rcx` counts,
    /// `rdi` is the scratch); `zmm`, `ymm` or `gpr` says which vector
    /// registers it may clobber.
    macro_rules! kernel {
        ($name:ident, $feat:literal, zmm, $body:expr) => {
            kernel!(@ $name, $feat, $body, "vzeroupper", [
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
                out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
                out("zmm10") _, out("zmm11") _, out("zmm12") _, out("zmm13") _, out("zmm14") _,
                out("zmm15") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _, out("zmm24") _,
                out("zmm25") _, out("zmm26") _, out("zmm27") _, out("zmm28") _, out("zmm29") _,
                out("zmm30") _, out("zmm31") _,
            ]);
        };
        ($name:ident, $feat:literal, ymm, $body:expr) => {
            kernel!(@ $name, $feat, $body, "vzeroupper", [
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _, out("ymm4") _,
                out("ymm5") _, out("ymm6") _, out("ymm7") _, out("ymm8") _, out("ymm9") _,
                out("ymm10") _, out("ymm11") _, out("ymm12") _, out("ymm13") _, out("ymm14") _,
                out("ymm15") _,
            ]);
        };
        ($name:ident, $feat:literal, gpr, $body:expr) => {
            kernel!(@ $name, $feat, $body, "", []);
        };
        (@ $name:ident, $feat:literal, $body:expr, $end:literal, [$($clob:tt)*]) => {
            #[target_feature(enable = $feat)]
            #[inline(never)]
            unsafe fn $name(n: u64, p: *mut u8) {
                // SAFETY: the caller detected `$feat` and passes n >= 1 and a whole `Scratch`,
                // the only memory the loop touches (offsets below 16 KiB); every register
                // written is an operand or declared clobbered; the stack is untouched.
                unsafe {
                    asm!(lib!(), ".p2align 6", "2:", $body, "dec rcx", "jnz 2b", $end, purge!(),
                        inout("rcx") n => _, in("rdi") p, out("rax") _, out("rdx") _,
                        out("rsi") _, out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                        out("r12") _, out("r13") _, out("r14") _, out("r15") _, $($clob)*
                        options(nostack))
                }
            }
        };
    }

    /// 8 times `ins` on 12 registers (`\r` in `ins`: 0 to 11): 96 per iteration.
    macro_rules! t12 {
        ($ins:literal) => {
            concat!(
                ".rept 8; .irp r,0,1,2,3,4,5,6,7,8,9,10,11; ",
                $ins,
                "; .endr; .endr"
            )
        };
    }

    /// Instruction rows: kernels and a table of (name, features, kernel,
    /// instructions per iteration); a name starting `lat ` is a latency.
    macro_rules! instructions {
        ($($k:ident $name:literal $feat:literal $regs:ident $n:literal $body:expr;)*) => {
            $(kernel!($k, $feat, $regs, $body);)*
            const INSTRUCTIONS: &[(&str, &str, Kernel, f64)] = &[$(($name, $feat, $k, $n)),*];
        };
    }

    instructions! {
        k_add_tp "add r64" "sse2" gpr 88.0 ".rept 8; .irp r,r8,r9,r10,r11,r12,r13,r14,r15,rax,rsi,rdx; add \\r, rdi; .endr; .endr";
        k_mulx "mulx r64" "bmi2" gpr 96.0 ".rept 24; mulx r9, r8, rsi; mulx r11, r10, rsi; mulx r13, r12, rsi; mulx r15, r14, rsi; .endr";
        k_aes_x "vaesenc xmm" "aes,avx" ymm 96.0 t12!(r"vaesenc xmm\r, xmm\r, xmm12");
        k_aes_y "vaesenc ymm" "vaes,avx2" ymm 96.0 t12!(r"vaesenc ymm\r, ymm\r, ymm12");
        k_aes_z "vaesenc zmm" "vaes,avx512f" zmm 96.0 t12!(r"vaesenc zmm\r, zmm\r, zmm12");
        k_clmul_x "vpclmulqdq xmm" "pclmulqdq,avx" ymm 96.0 t12!(r"vpclmulqdq xmm\r, xmm\r, xmm12, 0x11");
        k_clmul_y "vpclmulqdq ymm" "vpclmulqdq,avx2" ymm 96.0 t12!(r"vpclmulqdq ymm\r, ymm\r, ymm12, 0x11");
        k_clmul_z "vpclmulqdq zmm" "vpclmulqdq,avx512f" zmm 96.0 t12!(r"vpclmulqdq zmm\r, zmm\r, zmm12, 0x11");
        k_shuf_x "vpshufb xmm" "avx" ymm 96.0 t12!(r"vpshufb xmm\r, xmm\r, xmm12");
        k_shuf_y "vpshufb ymm" "avx2" ymm 96.0 t12!(r"vpshufb ymm\r, ymm\r, ymm12");
        k_shuf_z "vpshufb zmm" "avx512bw" zmm 96.0 t12!(r"vpshufb zmm\r, zmm\r, zmm12");
        k_add_x "vpaddd xmm" "avx" ymm 96.0 t12!(r"vpaddd xmm\r, xmm\r, xmm12");
        k_add_y "vpaddd ymm" "avx2" ymm 96.0 t12!(r"vpaddd ymm\r, ymm\r, ymm12");
        k_add_z "vpaddd zmm" "avx512f" zmm 96.0 t12!(r"vpaddd zmm\r, zmm\r, zmm12");
        k_rol_z "vprold zmm" "avx512f" zmm 96.0 t12!(r"vprold zmm\r, zmm\r, 7");
        k_tern_z "vpternlogd zmm" "avx512f" zmm 96.0 t12!(r"vpternlogd zmm\r, zmm12, zmm13, 0x96");
        k_madd_z "vpmadd52luq zmm" "avx512ifma" zmm 96.0 t12!(r"vpmadd52luq zmm\r, zmm12, zmm13");
        k_pair_z "vaesenc+vpshufb zmm" "vaes,avx512f,avx512bw" zmm 128.0 ".rept 8; .irp r,0,1,2,3,4,5,6,7; vaesenc zmm\\r, zmm\\r, zmm12; .endr; .irp r,16,17,18,19,20,21,22,23; vpshufb zmm\\r, zmm\\r, zmm13; .endr; .endr";
        k_pair_mz "vaesenc+vpshufb zmm, loads" "vaes,avx512f,avx512bw" zmm 128.0 ".rept 8; .irp r,0,1,2,3,4,5,6,7; vaesenc zmm\\r, zmm\\r, zmm12; .endr; .irp r,16,17,18,19,20,21,22,23; vpshufb zmm\\r, zmm\\r, [rdi+64*(\\r-16)]; .endr; .endr";
        k_aes_lx "lat vaesenc xmm" "aes,avx" ymm 96.0 ".rept 96; vaesenc xmm0, xmm0, xmm1; .endr";
        k_aes_lz "lat vaesenc zmm" "vaes,avx512f" zmm 96.0 ".rept 96; vaesenc zmm0, zmm0, zmm1; .endr";
        k_clmul_lx "lat vpclmulqdq xmm" "pclmulqdq,avx" ymm 96.0 ".rept 96; vpclmulqdq xmm0, xmm0, xmm1, 0x11; .endr";
        k_clmul_lz "lat vpclmulqdq zmm" "vpclmulqdq,avx512f" zmm 96.0 ".rept 96; vpclmulqdq zmm0, zmm0, zmm1, 0x11; .endr";
        k_add_ly "lat vpaddd ymm" "avx2" ymm 96.0 ".rept 96; vpaddd ymm0, ymm0, ymm1; .endr";
        k_add_lz "lat vpaddd zmm" "avx512f" zmm 96.0 ".rept 96; vpaddd zmm0, zmm0, zmm1; .endr";
        k_shuf_ly "lat vpshufb ymm" "avx2" ymm 96.0 ".rept 96; vpshufb ymm0, ymm0, ymm1; .endr";
        k_rol_lz "lat vprold zmm" "avx512f" zmm 96.0 ".rept 96; vprold zmm0, zmm0, 7; .endr";
        k_rol_ly "lat vprold ymm" "avx512f,avx512vl" zmm 96.0 ".rept 96; vprold ymm0, ymm0, 7; .endr";
        k_rol_lx "lat vprold xmm" "avx512f,avx512vl" zmm 96.0 ".rept 96; vprold xmm0, xmm0, 7; .endr";
        k_shuf_lx "lat vpshufb xmm" "avx" ymm 96.0 ".rept 96; vpshufb xmm0, xmm0, xmm1; .endr";
        k_poly_l "lat Poly1305 step" "bmi2" gpr 8.0 ".rept 8; PB r8, r9, r10, 0; .endr";
    }

    // Register operands: Golden Cove and later cores fold `add reg, imm` at
    // rename, several per cycle, so an immediate chain reads a clock ~6x high.
    kernel!(k_add, "sse2", gpr, ".rept 100; add rax, rdx; .endr");
    kernel!(k_imul, "sse2", gpr, ".rept 100; imul rax, rax; .endr");

    /// An engine's mix: its kernel, and its instruction counts per batch as
    /// (unit, count, the instruction row whose rate or latency they take).
    struct Engine {
        engine: &'static str,
        alg: &'static str,
        bytes: f64,
        features: &'static str,
        kernel: Kernel,
        counts: &'static [(&'static str, f64, &'static str)],
    }

    macro_rules! engines {
        ($($k:ident $engine:literal $alg:literal $bytes:literal $feat:literal $regs:ident $body:literal
            [$($unit:literal $count:literal $row:literal),*];)*) => {
            $(kernel!($k, $feat, $regs, $body);)*
            const ENGINES: &[Engine] = &[$(Engine {
                engine: $engine, alg: $alg, bytes: $bytes, features: $feat, kernel: $k,
                counts: &[$(($unit, $count, $row)),*],
            }),*];
        };
    }

    // Counts per batch (checked against the disassembly). AES-GCM: 8·NR
    // `vaesenc`; 26 `vpclmulqdq` at width (zmm: the reduction in every
    // lane), 24 at width + 2 at xmm (ymm, xmm); vector ALU 96 (zmm), 112
    // (ymm), 108 (xmm) + 8·NR; shuffles 20, 22, 20. ChaCha20
    // (per batch): 10 double rounds of 96 ops on zmm (320 `vprold`), of 128
    // on ymm; vector ALU 1058 (zmm), 1361 (ymm), + 48 per IFMA step (8
    // steps, 18 `vpmadd52`, 2 shuffles each); transposes 64 and 48
    // shuffles (+160 `vpshufb` rotates on ymm); chains: per double round 8
    // (add, xor, rotate) levels on zmm, on ymm 4 with a `vpshufb` rotate
    // and 4 with shift+or (two add-like levels). Poly1305 on general
    // registers: 6 multiplies and 18 ALU (not `mov`) per 16 bytes, two
    // chains of 32 (zmm) or 16 (ymm) steps.
    engines! {
        k_gcm128_z "X86Vaes512Karatsuba" "AES-128-GCM" 512.0 "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq" zmm "GCMZ 0"
            ["vaesenc" 80.0 "vaesenc zmm", "vpclmulqdq" 26.0 "vpclmulqdq zmm",
             "vector ALU" 176.0 "vpaddd zmm", "shuffles" 20.0 "vpshufb zmm"];
        k_gcm256_z "X86Vaes512Karatsuba" "AES-256-GCM" 512.0 "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq" zmm "GCMZ 4"
            ["vaesenc" 112.0 "vaesenc zmm", "vpclmulqdq" 26.0 "vpclmulqdq zmm",
             "vector ALU" 208.0 "vpaddd zmm", "shuffles" 20.0 "vpshufb zmm"];
        k_gcm128_y "X86Vaes" "AES-128-GCM" 256.0 "avx2,vaes,vpclmulqdq" ymm "GCMV ymm, 32, 1, 0"
            ["vaesenc" 80.0 "vaesenc ymm", "vpclmulqdq" 24.0 "vpclmulqdq ymm", "vpclmulqdq" 2.0 "vpclmulqdq xmm",
             "vector ALU" 192.0 "vpaddd ymm", "shuffles" 22.0 "vpshufb ymm"];
        k_gcm256_y "X86Vaes" "AES-256-GCM" 256.0 "avx2,vaes,vpclmulqdq" ymm "GCMV ymm, 32, 1, 4"
            ["vaesenc" 112.0 "vaesenc ymm", "vpclmulqdq" 24.0 "vpclmulqdq ymm", "vpclmulqdq" 2.0 "vpclmulqdq xmm",
             "vector ALU" 224.0 "vpaddd ymm", "shuffles" 22.0 "vpshufb ymm"];
        k_gcm128_x "X86AesNi" "AES-128-GCM" 128.0 "aes,pclmulqdq,avx" ymm "GCMV xmm, 16, 0, 0"
            ["vaesenc" 80.0 "vaesenc xmm", "vpclmulqdq" 26.0 "vpclmulqdq xmm",
             "vector ALU" 188.0 "vpaddd xmm", "shuffles" 20.0 "vpshufb xmm"];
        k_gcm256_x "X86AesNi" "AES-256-GCM" 128.0 "aes,pclmulqdq,avx" ymm "GCMV xmm, 16, 0, 4"
            ["vaesenc" 112.0 "vaesenc xmm", "vpclmulqdq" 26.0 "vpclmulqdq xmm",
             "vector ALU" 220.0 "vpaddd xmm", "shuffles" 20.0 "vpshufb xmm"];
        k_chacha_z "X86Avx512" "ChaCha20-Poly1305" 1024.0 "avx512f,avx512vl,bmi2" zmm "CHZ 0"
            ["vector ALU" 1058.0 "vpaddd zmm", "shuffles" 64.0 "vpshufb zmm", "vprold" 320.0 "vprold zmm",
             "mulx" 384.0 "mulx r64", "GPR ALU" 1152.0 "add r64", "Poly1305 chain" 32.0 "lat Poly1305 step",
             "ChaCha chain" 160.0 "lat vpaddd zmm", "ChaCha chain" 80.0 "lat vprold zmm"];
        k_chacha_i "X86Avx512Ifma" "ChaCha20-Poly1305" 1024.0 "avx512f,avx512vl,avx512ifma" zmm "CHZ 1"
            ["vector ALU" 1442.0 "vpaddd zmm", "shuffles" 80.0 "vpshufb zmm", "vprold" 320.0 "vprold zmm",
             "vpmadd52" 144.0 "vpmadd52luq zmm", "ChaCha chain" 160.0 "lat vpaddd zmm", "ChaCha chain" 80.0 "lat vprold zmm"];
        k_chacha_y "X86Avx2" "ChaCha20-Poly1305" 512.0 "avx2,bmi2" ymm "CHY"
            ["vector ALU" 1361.0 "vpaddd ymm", "shuffles" 208.0 "vpshufb ymm",
             "mulx" 192.0 "mulx r64", "GPR ALU" 576.0 "add r64", "Poly1305 chain" 16.0 "lat Poly1305 step",
             "ChaCha chain" 240.0 "lat vpaddd ymm", "ChaCha chain" 40.0 "lat vpshufb ymm"];
    }

    /// Whether the CPU has every feature in the comma-separated list.
    fn all(features: &str) -> bool {
        features.split(',').all(|f| match f {
            "aes" => has!("aes"),
            "pclmulqdq" => has!("pclmulqdq"),
            "avx" => has!("avx"),
            "avx2" => has!("avx2"),
            "bmi2" => has!("bmi2"),
            "vaes" => has!("vaes"),
            "vpclmulqdq" => has!("vpclmulqdq"),
            "avx512f" => has!("avx512f"),
            "avx512bw" => has!("avx512bw"),
            "avx512vl" => has!("avx512vl"),
            "avx512ifma" => has!("avx512ifma"),
            "sse2" => true,
            other => panic!("unknown feature {other}"),
        })
    }

    /// Best seconds per iteration of `k`: a warm-up that sizes the runs to
    /// about 60 ms, then the least of 7.
    ///
    /// # Safety
    /// The CPU has the features `k` is compiled for; `p` is a whole `Scratch`.
    unsafe fn per_iter(k: Kernel, p: *mut u8) -> f64 {
        let run = |n: u64| {
            let start = Instant::now();
            // SAFETY: the caller's contract; n >= 1.
            unsafe { k(n, p) };
            start.elapsed().as_secs_f64()
        };
        let mut n = 1;
        let mut t = run(n);
        while t < 0.01 {
            n *= 2;
            t = run(n);
        }
        let n = ((n as f64) * 0.06 / t).ceil() as u64;
        (0..7).map(|_| run(n)).fold(f64::INFINITY, f64::min) / n as f64
    }

    /// The unit whose cycles per batch are the most, from the measured rates
    /// and latencies (`?` if one it needs was not measured).
    fn bound(e: &Engine, measured: &[(&str, f64)]) -> String {
        let mut units: Vec<(&str, f64)> = Vec::new();
        for &(unit, count, row) in e.counts {
            let Some(&(_, value)) = measured.iter().find(|(name, _)| *name == row) else {
                return "?".into();
            };
            let cycles = if row.starts_with("lat ") {
                count * value
            } else {
                count / value
            };
            match units.iter_mut().find(|(u, _)| *u == unit) {
                Some((_, c)) => *c += cycles,
                None => units.push((unit, cycles)),
            }
        }
        let (unit, cycles) = units
            .into_iter()
            .fold(("?", 0.0), |a, b| if b.1 > a.1 { b } else { a });
        format!("{unit} {cycles:.0}")
    }

    fn cpu() -> String {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            let line = info
                .lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key));
            line.and_then(|l| l.split_once(':'))
                .map_or("?", |(_, v)| v.trim())
                .to_string()
        };
        let (name, family, model) = (field("model name"), field("cpu family"), field("model"));
        format!("{name} (family {family}, model {model})")
    }

    pub fn main() {
        let only = std::env::args().find_map(|a| a.strip_prefix("only=").map(String::from));
        let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
        let mut scratch = Box::new(Scratch([0; 16384]));
        for (i, b) in scratch.0.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        let p = scratch.0.as_mut_ptr();
        println!("limits: the floor of each engine's instruction mix on one core of this CPU");
        println!("cpu: {}", cpu());
        println!("run: taskset -c 1 cargo bench -p rustls-fusion-benches --bench limits");
        println!("     (pinned to one core: the numbers assume nothing else runs on it)");
        // SAFETY: `add` and `imul` run on every x86-64 CPU; `p` is the whole scratch.
        let clock = || 100.0 / unsafe { per_iter(k_add, p) } / 1e9;
        let ghz = clock();
        // SAFETY: as above.
        let imul = unsafe { per_iter(k_imul, p) } * ghz * 1e9 / 100.0;
        println!("clock: {ghz:.3} GHz (chain of dependent `add`, 1 per cycle); `imul` chain: {imul:.2} cycles each");

        let mut measured: Vec<(&str, f64)> = Vec::new();
        let mut latencies = false;
        println!("\n{:<32} {:>10}", "throughput (11-12 chains)", "per cycle");
        for &(name, features, kernel, n) in INSTRUCTIONS {
            let latency = name.starts_with("lat ");
            if latency && !latencies {
                println!("\n{:<32} {:>10}", "latency (one dependent chain)", "cycles");
                latencies = true;
            }
            let label = name.trim_start_matches("lat ");
            if !wanted(label) {
                continue;
            }
            if !all(features) {
                println!("{label:<32} {:>10}", format!("n/a (needs {features})"));
                continue;
            }
            // SAFETY: `all` checked the kernel's features; `p` is the whole scratch.
            let cycles = unsafe { per_iter(kernel, p) } * ghz * 1e9;
            let value = if latency { cycles / n } else { n / cycles };
            println!("{label:<32} {value:>10.2}");
            measured.push((name, value));
        }

        println!(
            "\n{:<20} {:<18} {:>5} {:>7} {:>6} {:>6}  bound by (cycles)",
            "engine", "alg (seal)", "bytes", "cycles", "c/B", "GB/s"
        );
        for e in ENGINES {
            if !wanted(&format!("{} {}", e.engine, e.alg)) {
                continue;
            }
            if !all(e.features) {
                println!(
                    "{:<20} {:<18} skipped: needs {}",
                    e.engine, e.alg, e.features
                );
                continue;
            }
            // SAFETY: `all` checked the kernel's features; `p` is the whole scratch.
            let cycles = unsafe { per_iter(e.kernel, p) } * ghz * 1e9;
            let (c_b, gb_s) = (cycles / e.bytes, e.bytes * ghz / cycles);
            let bound = bound(e, &measured);
            println!(
                "{:<20} {:<18} {:>5} {cycles:>7.1} {c_b:>6.3} {gb_s:>6.1}  {bound}",
                e.engine, e.alg, e.bytes
            );
        }
        println!("\nclock after: {:.3} GHz", clock());
    }
}
