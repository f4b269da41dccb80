//! The aarch64 block of the AES-GCM kernel (`kernel/`): one 128-bit block
//! in a NEON register ([`Block`], the one-block lane type, which is also
//! the `Aarch64Aes` engine's), the block conversions the kernel needs, the
//! key schedule, and the features every AES-GCM engine here has (the
//! **block features**: AES and PMULL, which Rust's `aes` target feature
//! names together, beside NEON).
//!
//! The kernel is written in x86's round convention (`aesenc`: SubBytes,
//! ShiftRows, MixColumns, then the round key), and `AESE` XORs its key
//! first. So a round here is `AESMC(AESE(x, 0)) ^ k`: LLVM folds each XOR
//! into the next round's `AESE` (`AESE(x ^ k, 0)` is `AESE(x, k)`), and a
//! block compiles to the usual `AESE`/`AESMC` pairs and one final `EOR`
//! (docs/decisions.md, "AES-GCM on aarch64").
#![allow(unsafe_code)]
// The AES and PMULL intrinsics need the `aes` feature, which the lane
// methods cannot enable (`#[inline(always)]`); they inline into the
// backend's `#[target_feature(enable = "aes,neon")]` entry points, and
// the intrinsics with them.
#![allow(inline_always_mismatching_target_features)]

use core::arch::aarch64::*;

use super::kernel;
use super::kernel::Lanes;

/// One AES block, or one GHASH value, in a NEON register.
pub(crate) type Block = uint8x16_t;

/// Whether this CPU has the features every `unsafe fn` of the kernel
/// assumes beside its lane type's.
#[inline(always)]
pub(crate) fn detected() -> bool {
    crate::cpu::Features::get().aes_pmull
}

/// A zero block (NEON: every aarch64 CPU Rust targets).
#[inline(always)]
pub(crate) fn zero() -> Block {
    // SAFETY: register-only NEON intrinsic; NEON is baseline on aarch64.
    unsafe { vdupq_n_u8(0) }
}

/// The 16 bytes of `b` as a block.
#[inline(always)]
pub(crate) fn load(b: &[u8; 16]) -> Block {
    // SAFETY: a 16-byte load from a `&[u8; 16]` (NEON, baseline; no alignment needed).
    unsafe { vld1q_u8(b.as_ptr()) }
}

/// `v` as a block, little-endian (byte `i` of the block is byte `i` of
/// `v.to_le_bytes()`).
#[inline(always)]
pub(crate) fn from_u128(v: u128) -> Block {
    // SAFETY: register-only NEON intrinsics (baseline).
    unsafe {
        vreinterpretq_u8_u64(vcombine_u64(
            vcreate_u64(v as u64),
            vcreate_u64((v >> 64) as u64),
        ))
    }
}

/// The bits set in both `a` and `b`.
#[inline(always)]
pub(crate) fn and(a: Block, b: Block) -> Block {
    // SAFETY: register-only NEON intrinsic (baseline).
    unsafe { vandq_u8(a, b) }
}

/// The block as a little-endian number ([`from_u128`]'s inverse).
#[inline(always)]
pub(crate) fn to_u128(x: Block) -> u128 {
    // SAFETY: register-only NEON intrinsics (baseline).
    unsafe {
        let q = vreinterpretq_u64_u8(x);
        u128::from(vgetq_lane_u64::<0>(q)) | (u128::from(vgetq_lane_u64::<1>(q)) << 64)
    }
}

// PMULL and PMULL2 are inline assembly on vector registers: with the
// intrinsic (`vmull_p64` on extracted halves) LLVM loaded halves of key
// powers into general registers, and a caller above the scrub saved one on
// its stack (`tests/stack_residue/`).

/// `a.lo · b.lo` (`PMULL`).
#[inline(always)]
unsafe fn pmull(a: Block, b: Block) -> Block {
    let r: Block;
    // SAFETY: one register-only `PMULL` (`aes` feature, which the caller has: `Lanes`
    // contract); no memory, stack or flags.
    unsafe {
        core::arch::asm!(
            "pmull {r:v}.1q, {a:v}.1d, {b:v}.1d",
            r = lateout(vreg) r,
            a = in(vreg) a,
            b = in(vreg) b,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    r
}

/// `a.hi · b.hi` (`PMULL2`).
#[inline(always)]
unsafe fn pmull2(a: Block, b: Block) -> Block {
    let r: Block;
    // SAFETY: as `pmull`.
    unsafe {
        core::arch::asm!(
            "pmull2 {r:v}.1q, {a:v}.2d, {b:v}.2d",
            r = lateout(vreg) r,
            a = in(vreg) a,
            b = in(vreg) b,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    r
}

/// One block per NEON register: the `Aarch64Aes` lane type, also used by
/// every aarch64 engine for single blocks.
// SAFETY: every method is one to three NEON/AES/PMULL instructions on one register (one block);
// the pointer methods access exactly 16 bytes, as the trait requires.
unsafe impl Lanes for uint8x16_t {
    const BLOCKS: usize = 1;
    type KeyAlign = kernel::Align16;
    const REGS: usize = 8;
    // 32 registers hold a batch's round keys across batches; the spills
    // left stay in the measured frame (tests/stack_residue/).
    const HOIST_SEAL_FROM: usize = 0;
    const HOIST_OPEN_FROM: usize = 0;
    const HOIST_SPILLS_BELOW_FRAME: bool = false;
    const UNROLL_ROUNDS: bool = true;
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        // SAFETY: `p` is valid for reads of 16 bytes (`Lanes` contract); NEON loads need no
        // alignment.
        unsafe { vld1q_u8(p) }
    }
    #[inline(always)]
    unsafe fn storeu(self, p: *mut u8) {
        // SAFETY: `p` is valid for writes of 16 bytes (`Lanes` contract).
        unsafe { vst1q_u8(p, self) }
    }
    #[inline(always)]
    unsafe fn broadcast(p: *const u8) -> Self {
        // SAFETY: `p` is valid for reads of 16 bytes (`Lanes` contract).
        unsafe { vld1q_u8(p) }
    }
    #[inline(always)]
    unsafe fn from_first(x: Block) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn counters(x: Block) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn add_ctr(self, k: i32) -> Self {
        // SAFETY: register-only NEON intrinsics (baseline). Lane 0 of the 32-bit view is bytes
        // 0-3, the low dword, as on x86.
        unsafe {
            let k = vsetq_lane_u32::<0>(k as u32, vdupq_n_u32(0));
            vreinterpretq_u8_u32(vaddq_u32(vreinterpretq_u32_u8(self), k))
        }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only NEON intrinsic (baseline).
        unsafe { veorq_u8(self, b) }
    }
    #[inline(always)]
    unsafe fn aesenc(self, k: Self) -> Self {
        // SAFETY: register-only AES intrinsics; the CPU has `aes` (`Lanes` contract).
        unsafe { veorq_u8(vaesmcq_u8(vaeseq_u8(self, vdupq_n_u8(0))), k) }
    }
    #[inline(always)]
    unsafe fn aesenclast(self, k: Self) -> Self {
        // SAFETY: as `aesenc`.
        unsafe { veorq_u8(vaeseq_u8(self, vdupq_n_u8(0)), k) }
    }
    #[inline(always)]
    unsafe fn clmul_lo(self, b: Self) -> Self {
        // SAFETY: the CPU has `aes` (`Lanes` contract).
        unsafe { pmull(self, b) }
    }
    #[inline(always)]
    unsafe fn clmul_hi(self, b: Self) -> Self {
        // SAFETY: as `clmul_lo`.
        unsafe { pmull2(self, b) }
    }
    #[inline(always)]
    unsafe fn clmul_lo_hi(self, b: Self) -> Self {
        // SAFETY: as `clmul_lo`; `swap_halves` is register-only NEON.
        unsafe { pmull(self, b.swap_halves()) }
    }
    #[inline(always)]
    unsafe fn clmul_hi_lo(self, b: Self) -> Self {
        // SAFETY: as `clmul_lo_hi`.
        unsafe { pmull(self.swap_halves(), b) }
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: register-only NEON intrinsics (baseline).
        unsafe {
            let r = vrev64q_u8(self);
            vextq_u8::<8>(r, r)
        }
    }
    #[inline(always)]
    unsafe fn swap_halves(self) -> Self {
        // SAFETY: register-only NEON intrinsic (baseline).
        unsafe { vextq_u8::<8>(self, self) }
    }
    #[inline(always)]
    unsafe fn fold(self) -> Block {
        self
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        zero()
    }
}

/// SubWord of the little-endian word `w`: `AESE` with a zero key on `w`
/// in every column, where ShiftRows moves bytes only between equal
/// columns, so column 0 is the S-box of each byte.
#[inline(always)]
unsafe fn sub_word(w: u32) -> u32 {
    // SAFETY: register-only AES and NEON intrinsics; the CPU has `aes` (caller's contract).
    unsafe {
        let x = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(w)), vdupq_n_u8(0));
        vgetq_lane_u32::<0>(vreinterpretq_u32_u8(x))
    }
}

/// The AES key schedule (FIPS 197 §5.2) on 32-bit words, SubWord on the
/// AES unit: `NR + 1` round keys, the rest zero. The words are wiped
/// before returning.
///
/// # Safety
/// The CPU has `aes` (and the caller enables it).
#[inline(always)]
pub(crate) unsafe fn expand_key(key: &[u8]) -> [Block; 15] {
    assert!(key.len() == 16 || key.len() == 32, "AES key length");
    let nk = key.len() / 4;
    let words = 4 * (nk + 7);
    let mut w = [0u32; 60];
    for (wi, c) in w.iter_mut().zip(key.chunks_exact(4)) {
        *wi = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    let mut rcon = 1u32;
    for i in nk..words {
        let mut t = w[i - 1];
        if i % nk == 0 {
            // SAFETY: the CPU has `aes` (this fn's contract).
            t = unsafe { sub_word(t) }.rotate_right(8) ^ rcon;
            // The round constants are public: a branch on them is fine.
            rcon = if rcon & 0x80 != 0 {
                (rcon << 1) ^ 0x11b
            } else {
                rcon << 1
            };
        } else if nk == 8 && i % nk == 4 {
            // SAFETY: as above.
            t = unsafe { sub_word(t) };
        }
        w[i] = w[i - nk] ^ t;
    }
    let mut rk = [zero(); 15];
    for (r, k) in rk.iter_mut().enumerate().take(words / 4) {
        let mut b = [0u8; 16];
        for (j, c) in b.chunks_exact_mut(4).enumerate() {
            c.copy_from_slice(&w[4 * r + j].to_le_bytes());
        }
        *k = load(&b);
        // SAFETY: a volatile write of zeros to the local `b`.
        unsafe { core::ptr::write_volatile(&mut b, [0; 16]) };
    }
    // SAFETY: a volatile write of zeros to the local `w`.
    unsafe { core::ptr::write_volatile(&mut w, [0; 60]) };
    rk
}
