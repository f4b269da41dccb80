//! ChaCha20-Poly1305 for x86-64 CPUs without AVX2: xmm lanes, 4 blocks per
//! vertical pass (`pshufb` rotates by 16 and 8), one block per horizontal
//! register. The engine is `kernel/`'s.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::kernel::{Lanes, Schedule};

super::kernel::backend!(
    features = "ssse3",
    lanes = __m128i,
    detected = ssse3,
    ifma = false,
    scrub_small = crate::aead::secret::CHACHA20_SHORT_XMM,
    scrub_blocks = crate::aead::secret::CHACHA20_BLOCKS_XMM
);

// SAFETY: every method uses SSE2/SSSE3 instructions only, and touches memory only as the
// trait's contract says (slices bounds-checked, pointers within the stated lengths).
unsafe impl Lanes for __m128i {
    const N: usize = 4;
    const ROW_BLOCKS: usize = 1;
    const MAX_SETS: usize = 4;
    /// 256 bytes of ciphertext per pass: 8 chain steps, one after each of
    /// the first eight double rounds.
    const SCHEDULE: Schedule = Schedule {
        after: [0, 0, 0, 0, 0, 0, 0, 1],
        rounds: 8,
        end: 0,
    };
    /// An open's first batch: 448 bytes, 14 steps, two per double round
    /// of the first seven.
    const WIDE_SCHEDULE: Schedule = Schedule {
        after: [0, 0, 0, 1, 0, 0, 0, 1],
        rounds: 7,
        end: 0,
    };
    const TWO_CHAIN_PASSES: bool = false;
    /// `SMALL`: four xmm sets hold 4 blocks, not 10.
    const SMALL_OPEN: usize = super::kernel::SMALL;
    /// Never: every record longer than `SMALL` has a batch.
    const WIDE_TAIL_MIN: usize = usize::MAX;
    const SPLIT_OPEN_TAIL_MAX: usize = 0;
    const SHORT_SPILLS_OVER: usize = usize::MAX;
    type Pair = __m128i;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe { _mm_set1_epi32(x as i32) }
    }
    #[inline(always)]
    unsafe fn load_lanes(words: &[u32]) -> Self {
        // SAFETY: the CPU has SSSE3 (`Lanes` contract); the assert above bounds the load to
        // `words`.
        unsafe {
            assert_eq!(words.len(), 4);
            _mm_loadu_si128(words.as_ptr().cast())
        }
    }
    #[inline(always)]
    unsafe fn lane_index() -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe { _mm_set_epi32(3, 2, 1, 0) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe { _mm_add_epi32(self, b) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe { _mm_xor_si128(self, b) }
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe {
            _mm_shuffle_epi8(
                self,
                _mm_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2),
            )
        }
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe { _mm_or_si128(_mm_slli_epi32::<12>(self), _mm_srli_epi32::<20>(self)) }
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe {
            _mm_shuffle_epi8(
                self,
                _mm_set_epi8(14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3),
            )
        }
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe { _mm_or_si128(_mm_slli_epi32::<7>(self), _mm_srli_epi32::<25>(self)) }
    }
    #[inline(always)]
    unsafe fn shuffle<const IMM: i32>(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has SSSE3 (`Lanes` contract).
        unsafe { _mm_shuffle_epi32::<IMM>(self) }
    }
    #[inline(always)]
    unsafe fn broadcast_row(r: __m128i) -> Self {
        r
    }
    #[inline(always)]
    unsafe fn row_counters(self) -> Self {
        self
    }
    #[inline(always)]
    unsafe fn store_rows([a, b, c, d]: [Self; 4], out: *mut u8, blocks: usize) {
        // SAFETY: the CPU has SSSE3; `out` is valid for writes of `blocks` (at most
        // `ROW_BLOCKS`) × 64 bytes (`Lanes` contract), and only that many blocks are stored.
        unsafe {
            if blocks >= 1 {
                _mm_storeu_si128(out.cast(), a);
                _mm_storeu_si128(out.add(16).cast(), b);
                _mm_storeu_si128(out.add(32).cast(), c);
                _mm_storeu_si128(out.add(48).cast(), d);
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_vertical(x: &[Self; 16], input: *const u8, output: *mut u8) {
        // SAFETY: the CPU has SSSE3; `input` and `output` are valid for `N * 64` bytes (`Lanes`
        // contract) and every offset below is a block (< N) × 64 plus a part of it below 64.
        unsafe {
            // 4×4 transpose per group of four words: register j of the result
            // holds words 4·group … 4·group+3 of block j.
            for group in 0..4 {
                let v = &x[group * 4..group * 4 + 4];
                let t0 = _mm_unpacklo_epi32(v[0], v[1]);
                let t1 = _mm_unpackhi_epi32(v[0], v[1]);
                let t2 = _mm_unpacklo_epi32(v[2], v[3]);
                let t3 = _mm_unpackhi_epi32(v[2], v[3]);
                let blocks = [
                    _mm_unpacklo_epi64(t0, t2),
                    _mm_unpackhi_epi64(t0, t2),
                    _mm_unpacklo_epi64(t1, t3),
                    _mm_unpackhi_epi64(t1, t3),
                ];
                for (block, ks) in blocks.into_iter().enumerate() {
                    let off = block * 64 + group * 16;
                    let data = _mm_loadu_si128(input.add(off).cast());
                    _mm_storeu_si128(output.add(off).cast(), _mm_xor_si128(data, ks));
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_bytes(input: *const u8, out: *mut u8, ks: &[u8]) {
        // SAFETY: the CPU has SSSE3; `input` and `out` are valid for `ks.len()` bytes (`Lanes`
        // contract): the vector loop reads and writes only below `i + 16 <= ks.len()`, the byte
        // loop only below `ks.len()`.
        unsafe {
            let n = ks.len();
            let mut i = 0;
            while i + 16 <= n {
                let k = _mm_loadu_si128(ks.as_ptr().add(i).cast());
                let x = _mm_xor_si128(_mm_loadu_si128(input.add(i).cast()), k);
                _mm_storeu_si128(out.add(i).cast(), x);
                i += 16;
            }
            while i < n {
                *out.add(i) = *input.add(i) ^ ks[i];
                i += 1;
            }
        }
    }
}
