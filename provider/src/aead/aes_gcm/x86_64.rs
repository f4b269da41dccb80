//! The x86-64 block of the AES-GCM kernel (`kernel/`): one 128-bit block
//! in an xmm register ([`Block`], the one-block lane type), the block
//! conversions the kernel needs, the AES-NI key schedule, and the
//! features every AES-GCM engine here has (AES-NI, PCLMULQDQ, SSSE3).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::kernel;
use super::kernel::Lanes;

/// One AES block, or one GHASH value, in an xmm register.
pub(crate) type Block = __m128i;

/// Whether this CPU has the features every `unsafe fn` of the kernel
/// assumes beside its lane type's ([`RoundKeys`](super::RoundKeys) alone
/// needs no more).
#[inline(always)]
pub(crate) fn detected() -> bool {
    crate::cpu::Features::get().aes_clmul
}

/// A zero block (SSE2: every x86-64 CPU).
#[inline(always)]
pub(crate) fn zero() -> Block {
    // SAFETY: register-only SSE2 intrinsic; SSE2 is baseline on x86-64.
    unsafe { _mm_setzero_si128() }
}

/// The 16 bytes of `b` as a block (SSE2).
#[inline(always)]
pub(crate) fn load(b: &[u8; 16]) -> Block {
    // SAFETY: an unaligned 16-byte load from a `&[u8; 16]`; SSE2 is baseline.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

/// `v` as a block, little-endian (byte `i` of the block is byte `i` of
/// `v.to_le_bytes()`).
#[inline(always)]
pub(crate) fn from_u128(v: u128) -> Block {
    // SAFETY: register-only SSE2 intrinsic; SSE2 is baseline.
    unsafe { _mm_set_epi64x((v >> 64) as i64, v as i64) }
}

/// The bits set in both `a` and `b`.
#[inline(always)]
pub(crate) fn and(a: Block, b: Block) -> Block {
    // SAFETY: register-only SSE2 intrinsic; SSE2 is baseline.
    unsafe { _mm_and_si128(a, b) }
}

/// The block as a little-endian number ([`from_u128`]'s inverse).
#[inline(always)]
pub(crate) fn to_u128(x: Block) -> u128 {
    // SAFETY: register-only SSE2 intrinsics; SSE2 is baseline.
    unsafe {
        let lo = _mm_cvtsi128_si64(x) as u64;
        let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
        u128::from(lo) | (u128::from(hi) << 64)
    }
}

/// One block per xmm register: the AES-NI lane type, also used by every
/// backend for single blocks.
// SAFETY: every method is one or two SSE2/SSSE3/AES-NI/PCLMULQDQ instructions on one xmm
// register (one block), and the pointer methods access exactly 16 bytes, as the trait requires.
unsafe impl Lanes for __m128i {
    const BLOCKS: usize = 1;
    type KeyAlign = kernel::Align16;
    const REGS: usize = 8;
    const HOIST_SEAL_FROM: usize = usize::MAX;
    const FUSE_LAST: bool = true;
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        // SAFETY: the CPU has AES-NI, PCLMULQDQ and SSSE3 and `p` is valid for reads of 16
        // bytes (`Lanes` contract); unaligned loads are allowed.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn storeu(self, p: *mut u8) {
        // SAFETY: the CPU has AES-NI, PCLMULQDQ and SSSE3 and `p` is valid for writes of 16
        // bytes (`Lanes` contract); unaligned stores are allowed.
        unsafe { _mm_storeu_si128(p.cast(), self) }
    }
    #[inline(always)]
    unsafe fn broadcast(p: *const u8) -> Self {
        // SAFETY: the CPU has AES-NI, PCLMULQDQ and SSSE3 and `p` is valid for reads of 16
        // bytes (`Lanes` contract); unaligned loads are allowed.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn from_first(x: __m128i) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn counters(x: __m128i) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn add_ctr(self, k: i32) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_add_epi32(self, _mm_set_epi32(0, 0, 0, k)) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_xor_si128(self, b) }
    }
    #[inline(always)]
    unsafe fn aesenc(self, k: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_aesenc_si128(self, k) }
    }
    #[inline(always)]
    unsafe fn aesenclast(self, k: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_aesenclast_si128(self, k) }
    }
    #[inline(always)]
    unsafe fn clmul_lo(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_clmulepi64_si128(self, b, 0x00) }
    }
    #[inline(always)]
    unsafe fn clmul_hi(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_clmulepi64_si128(self, b, 0x11) }
    }
    #[inline(always)]
    unsafe fn clmul_lo_hi(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_clmulepi64_si128(self, b, 0x10) }
    }
    #[inline(always)]
    unsafe fn clmul_hi_lo(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_clmulepi64_si128(self, b, 0x01) }
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe {
            _mm_shuffle_epi8(
                self,
                _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            )
        }
    }
    #[inline(always)]
    unsafe fn swap_halves(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_shuffle_epi32(self, 0x4e) }
    }
    #[inline(always)]
    unsafe fn fold(self) -> __m128i {
        self
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: register-only intrinsics; the CPU has AES-NI, PCLMULQDQ and SSSE3 (`Lanes`
        // contract).
        unsafe { _mm_setzero_si128() }
    }
}

macro_rules! expand_step {
    ($prev:expr, $assist:expr, $shuffle:literal) => {{
        // Prefix XOR of the four words in two steps (4 and 8 bytes), not
        // three: the key schedule is one serial chain.
        let mut k = $prev;
        k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
        k = _mm_xor_si128(k, _mm_slli_si128(k, 8));
        _mm_xor_si128(k, _mm_shuffle_epi32($assist, $shuffle))
    }};
}

/// The AES key schedule with AESKEYGENASSIST, each round key stored to
/// `out[i]` as it is made (entries past `NR`, zero): the schedule lives in
/// registers, two round keys at a time, and leaves nothing on the stack,
/// so a key written this way into its allocation needs no scrub after it.
///
/// # Safety
/// The CPU has AES-NI (and the caller enables it); `out` is valid for
/// writes of 15 entries.
#[inline(always)]
pub(crate) unsafe fn expand_key_into(key: &[u8], out: *mut __m128i) {
    // SAFETY: the CPU has AES-NI (this fn's contract); the assert bounds the loads: 16 bytes at
    // 0 and, for a 32-byte key, 16 at 16; every store is one of `out`'s 15 entries (contract).
    unsafe {
        assert!(key.len() == 16 || key.len() == 32, "AES key length");
        // A macro, not a closure: a closure the compiler did not inline
        // would take the vector through the stack.
        macro_rules! store {
            ($i:expr, $k:expr) => {
                _mm_storeu_si128(out.add($i), $k)
            };
        }
        let mut prev = _mm_loadu_si128(key.as_ptr().cast());
        store!(0, prev);
        if key.len() == 16 {
            macro_rules! round {
                ($i:literal, $rcon:literal) => {
                    prev = expand_step!(prev, _mm_aeskeygenassist_si128(prev, $rcon), 0xff);
                    store!($i, prev);
                };
            }
            round!(1, 0x01);
            round!(2, 0x02);
            round!(3, 0x04);
            round!(4, 0x08);
            round!(5, 0x10);
            round!(6, 0x20);
            round!(7, 0x40);
            round!(8, 0x80);
            round!(9, 0x1b);
            round!(10, 0x36);
            for i in 11..15 {
                store!(i, _mm_setzero_si128());
            }
        } else {
            // `even` and `odd`: the last two round keys.
            let mut even = prev;
            let mut odd = _mm_loadu_si128(key[16..].as_ptr().cast());
            store!(1, odd);
            macro_rules! round {
                ($i:literal, $rcon:literal) => {
                    even = expand_step!(even, _mm_aeskeygenassist_si128(odd, $rcon), 0xff);
                    store!($i, even);
                };
                ($i:literal, $rcon:literal, odd) => {
                    round!($i, $rcon);
                    odd = expand_step!(odd, _mm_aeskeygenassist_si128(even, 0), 0xaa);
                    store!($i + 1, odd);
                };
            }
            round!(2, 0x01, odd);
            round!(4, 0x02, odd);
            round!(6, 0x04, odd);
            round!(8, 0x08, odd);
            round!(10, 0x10, odd);
            round!(12, 0x20, odd);
            round!(14, 0x40);
        }
    }
}
