//! ChaCha20-Poly1305 on AVX2: ymm lanes, 8 blocks per vertical pass, two
//! blocks per horizontal register (one per 128-bit half), scalar Poly1305
//! with BMI2. The engine is `kernel/`'s.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::kernel::{Lanes, Schedule};

super::kernel::backend!(
    features = "avx2,bmi2",
    lanes = __m256i,
    detected = avx2,
    ifma = false,
    scrub_small = 0,
    scrub_blocks = crate::aead::secret::CHACHA20_BLOCKS_YMM
);

/// Byte shuffles for the 16- and 8-bit rotates. Constants, not statics:
/// each use is then a promoted constant of its own code unit, addressed
/// relative to the instruction pointer; a `static` was reached through the
/// GOT, its address held in a general register through each loop.
#[repr(C, align(32))]
pub(super) struct Mask([u8; 32]);
const ROT16: Mask = Mask([
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14,
    15, 12, 13,
]);
const ROT8: Mask = Mask([
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15,
    12, 13, 14,
]);

/// The shuffle mask, read from memory at each use (a volatile load cannot
/// be hoisted), so it holds a ymm register only briefly instead of for the
/// whole 8-way loop, where registers are short (docs/decisions.md, "The
/// ChaCha20 rounds (ymm, zmm)").
#[inline(always)]
unsafe fn mask(m: &'static Mask) -> __m256i {
    // SAFETY: a volatile read of a `'static` 32-byte-aligned `Mask` (32 bytes, as an `__m256i`);
    // the CPU has AVX2 (`Lanes` contract).
    unsafe { core::ptr::read_volatile((m as *const Mask).cast::<__m256i>()) }
}

/// `out[i] = input[i] ^ ks[i]` for `ks.len()` bytes, 32 at a time; `input`
/// may equal `out`.
///
/// # Safety
/// The CPU has AVX2; `input` is valid for reads and `out` for writes of
/// `ks.len()` bytes (they may be the same pointer).
#[inline(always)]
pub(super) unsafe fn xor32(input: *const u8, out: *mut u8, ks: &[u8]) {
    // SAFETY: the CPU has AVX2 and `input`/`out` are valid for `ks.len()` bytes (this
    // fn's contract): the vector loop reads and writes only below `i + 32 <= ks.len()`,
    // the byte loop only below `ks.len()`.
    unsafe {
        let n = ks.len();
        let mut i = 0;
        while i + 32 <= n {
            let x = _mm256_xor_si256(
                _mm256_loadu_si256(input.add(i).cast()),
                _mm256_loadu_si256(ks.as_ptr().add(i).cast()),
            );
            _mm256_storeu_si256(out.add(i).cast(), x);
            i += 32;
        }
        while i < n {
            *out.add(i) = *input.add(i) ^ ks[i];
            i += 1;
        }
    }
}

/// `Lanes::xor_rotl16` and the others on ymm: `(self <<< R) ^ (x << R) ^
/// (x >> 32 - R)` in one `vpternlogd` (AVX-512VL).
macro_rules! xor_rotl_vl {
    ($($name:ident: $r:literal, $rest:literal;)*) => {$(
        #[inline(always)]
        unsafe fn $name(self, x: Self) -> Self {
            // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL (the
            // `Lanes::xor_rotl16` contract).
            unsafe {
                _mm256_ternarylogic_epi32::<0x96>(
                    _mm256_rol_epi32::<$r>(self),
                    _mm256_slli_epi32::<$r>(x),
                    _mm256_srli_epi32::<$rest>(x),
                )
            }
        }
    )*};
}

// `X86Avx2`'s own lane type never runs the fused quarter round (its `xor_rotl*` need
// AVX-512VL): only the AVX-512 engines, whose `Pair` it is, enable it.
const _: () = assert!(!<__m256i as Lanes>::FUSED_PAIR);

// SAFETY: every method uses AVX2 instructions only, but the `xor_rotl*` ones (AVX-512F/VL,
// which the trait lets only engines with those features run), and touches memory only as the
// trait's contract says (slices bounds-checked, pointers within the stated lengths).
unsafe impl Lanes for __m256i {
    const N: usize = 8;
    const ROW_BLOCKS: usize = 2;
    const MAX_SETS: usize = 4;
    /// 512 bytes of ciphertext per pass: 16 chain steps, after the second
    /// and the sixth quarter round of each of the first eight double rounds.
    const SCHEDULE: Schedule = Schedule {
        after: [0, 1, 0, 0, 0, 1, 0, 0],
        rounds: 8,
        end: 0,
    };
    /// An open's first batch: 960 bytes, 30 steps, three per double round.
    const WIDE_SCHEDULE: Schedule = Schedule {
        after: [0, 1, 0, 1, 0, 1, 0, 0],
        rounds: 10,
        end: 0,
    };
    const TWO_CHAIN_PASSES: bool = false;
    /// Opens of 449–576 bytes: a two-block call, then four sets.
    const SMALL_OPEN: usize = 576;
    /// 7 and 8 blocks: see `TailCall::Wide`.
    const WIDE_TAIL_MIN: usize = 7;
    /// Opens of 961–1152 bytes (a tail of 1–3 blocks: one or two sets in
    /// the tail's call); from four tail blocks on, the split measured
    /// slower (docs/decisions.md).
    const SPLIT_OPEN_TAIL_MAX: usize = 3;
    const SHORT_SPILLS_OVER: usize = usize::MAX;
    type Pair = __m256i;
    /// A lone block's rows on Intel.
    const ONE_BLOCK_ROWS: bool = true;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_set1_epi32(x as i32) }
    }
    #[inline(always)]
    unsafe fn load_lanes(words: &[u32]) -> Self {
        // SAFETY: the CPU has AVX2 (`Lanes` contract); the assert above bounds the load to
        // `words`.
        unsafe {
            assert_eq!(words.len(), 8);
            _mm256_loadu_si256(words.as_ptr().cast())
        }
    }
    #[inline(always)]
    unsafe fn lane_index() -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_add_epi32(self, b) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_xor_si256(self, b) }
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_shuffle_epi8(self, mask(&ROT16)) }
    }
    // The fused XOR-rotates use AVX-512VL: run only where the engine's lane
    // type sets `FUSED_PAIR` (the AVX-512 engines, whose `Pair` this is),
    // never by `X86Avx2`, whose own `FUSED_PAIR` is false.
    xor_rotl_vl! {
        xor_rotl16: 16, 16;
        xor_rotl12: 12, 20;
        xor_rotl8: 8, 24;
        xor_rotl7: 7, 25;
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_or_si256(_mm256_slli_epi32::<12>(self), _mm256_srli_epi32::<20>(self)) }
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_shuffle_epi8(self, mask(&ROT8)) }
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_or_si256(_mm256_slli_epi32::<7>(self), _mm256_srli_epi32::<25>(self)) }
    }
    #[inline(always)]
    unsafe fn shuffle<const IMM: i32>(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_shuffle_epi32::<IMM>(self) }
    }
    #[inline(always)]
    unsafe fn broadcast_row(r: __m128i) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_broadcastsi128_si256(r) }
    }
    #[inline(always)]
    unsafe fn row_counters(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX2 (`Lanes` contract).
        unsafe { _mm256_add_epi32(self, _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 0)) }
    }
    #[inline(always)]
    unsafe fn store_rows([a, b, c, d]: [Self; 4], out: *mut u8, blocks: usize) {
        // SAFETY: the CPU has AVX2; `out` is valid for writes of `blocks` (at most
        // `ROW_BLOCKS`) × 64 bytes (`Lanes` contract), and only that many blocks are stored.
        unsafe {
            let first = [
                _mm256_permute2x128_si256::<0x20>(a, b),
                _mm256_permute2x128_si256::<0x20>(c, d),
            ];
            let second = [
                _mm256_permute2x128_si256::<0x31>(a, b),
                _mm256_permute2x128_si256::<0x31>(c, d),
            ];
            for (k, halves) in [first, second].into_iter().enumerate().take(blocks) {
                _mm256_storeu_si256(out.add(64 * k).cast(), halves[0]);
                _mm256_storeu_si256(out.add(64 * k + 32).cast(), halves[1]);
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_vertical(x: &[Self; 16], input: *const u8, output: *mut u8) {
        // SAFETY: the CPU has AVX2; `input` and `output` are valid for `N * 64` bytes (`Lanes`
        // contract) and every offset below is a block (< N) × 64 plus a part of it below 64.
        unsafe {
            // Transpose words × blocks into blocks: 32 bytes of words 0–7 and 32
            // bytes of words 8–15 per block.
            for half in 0..2 {
                let v = &x[half * 8..half * 8 + 8];
                let t0 = _mm256_unpacklo_epi32(v[0], v[1]);
                let t1 = _mm256_unpackhi_epi32(v[0], v[1]);
                let t2 = _mm256_unpacklo_epi32(v[2], v[3]);
                let t3 = _mm256_unpackhi_epi32(v[2], v[3]);
                let t4 = _mm256_unpacklo_epi32(v[4], v[5]);
                let t5 = _mm256_unpackhi_epi32(v[4], v[5]);
                let t6 = _mm256_unpacklo_epi32(v[6], v[7]);
                let t7 = _mm256_unpackhi_epi32(v[6], v[7]);
                let u = [
                    (_mm256_unpacklo_epi64(t0, t2), _mm256_unpacklo_epi64(t4, t6)),
                    (_mm256_unpackhi_epi64(t0, t2), _mm256_unpackhi_epi64(t4, t6)),
                    (_mm256_unpacklo_epi64(t1, t3), _mm256_unpacklo_epi64(t5, t7)),
                    (_mm256_unpackhi_epi64(t1, t3), _mm256_unpackhi_epi64(t5, t7)),
                ];
                for (k, (lo, hi)) in u.into_iter().enumerate() {
                    for (block, ks) in [
                        (k, _mm256_permute2x128_si256::<0x20>(lo, hi)),
                        (k + 4, _mm256_permute2x128_si256::<0x31>(lo, hi)),
                    ] {
                        let off = block * 64 + half * 32;
                        let data = _mm256_loadu_si256(input.add(off).cast());
                        _mm256_storeu_si256(output.add(off).cast(), _mm256_xor_si256(data, ks));
                    }
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_bytes(input: *const u8, out: *mut u8, ks: &[u8]) {
        // SAFETY: `xor32`'s contract is this method's: the CPU has AVX2 and the
        // pointers are valid for `ks.len()` bytes (`Lanes` contract).
        unsafe { xor32(input, out, ks) }
    }
}
