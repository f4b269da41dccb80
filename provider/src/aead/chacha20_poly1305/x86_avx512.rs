//! ChaCha20-Poly1305 with AVX-512: zmm lanes, 16 blocks (1 KiB) per
//! vertical pass, where 32 registers hold the whole state without spills
//! and `vprold` rotates in one instruction; four blocks per horizontal
//! register (one per 128-bit lane), whose 8-block call also runs the
//! Poly1305 chain steps of up to 1 KiB between its rounds. Mid-size
//! records, which would use a 16-block pass only in part, take the ymm
//! lanes' 8-block passes and short calls, compiled with this engine's
//! features (`x86_64::zmm_takes_ymm`). The engine is `kernel/`'s.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::kernel::{Lanes, Schedule};

super::kernel::backend!(
    features = "avx512f,avx512vl,avx2,bmi2",
    lanes = __m512i,
    detected = avx512,
    ifma = false,
    scrub_small = 0,
    scrub_blocks = crate::aead::secret::CHACHA20_BLOCKS_ZMM,
    mid_lanes = core::arch::x86_64::__m256i,
    mid = super::x86_64::zmm_takes_ymm
);

// SAFETY: every method uses AVX-512F/VL and AVX2 instructions only, and touches memory only as
// the trait's contract says (slices bounds-checked, pointers within the stated lengths).
unsafe impl Lanes for __m512i {
    const N: usize = 16;
    const ROW_BLOCKS: usize = 4;
    const MAX_SETS: usize = 2;
    /// 1 KiB of ciphertext per pass: 32 chain steps, three per double round
    /// spread between the quarter rounds, and the last two after them.
    const SCHEDULE: Schedule = Schedule {
        after: [0, 1, 0, 0, 1, 0, 1, 0],
        rounds: 10,
        end: 2,
    };
    /// An open's first batch: 1984 bytes, 62 steps, six per double round
    /// and two after them.
    const WIDE_SCHEDULE: Schedule = Schedule {
        after: [1, 1, 1, 0, 1, 1, 1, 0],
        rounds: 10,
        end: 2,
    };
    /// A pass hashes 64 blocks: one chain of them would outlast its
    /// rounds.
    const TWO_CHAIN_PASSES: bool = true;
    /// `SMALL`: opens of 449–576 bytes take ymm's two-call short path
    /// (`Entry::small_mid`, `x86_64::zmm_takes_ymm`); zmm's pass 0 alone
    /// makes 960 bytes.
    const SMALL_OPEN: usize = super::kernel::SMALL;
    /// Never: the open scratch holds 8 blocks above pass 0's 16 (and
    /// IFMA's records of that size are phased).
    const WIDE_TAIL_MIN: usize = usize::MAX;
    const SPLIT_OPEN_TAIL_MAX: usize = 0;
    /// Two blocks: one ymm call runs them faster than a zmm one
    /// (docs/decisions.md, "The ChaCha20 rounds (ymm, zmm)").
    const SHORT_SPILLS_OVER: usize = usize::MAX;
    type Pair = __m256i;
    /// The 2-block ymm call can take its XOR-rotates off the chain
    /// (AVX-512VL), on the keys that choose it (Zen 4).
    const FUSED_PAIR: bool = true;
    /// A lone block's rows on Intel (`vprold`).
    const ONE_BLOCK_ROWS: bool = true;

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_set1_epi32(x as i32) }
    }
    #[inline(always)]
    unsafe fn load_lanes(words: &[u32]) -> Self {
        // SAFETY: the CPU has AVX-512F/VL and AVX2 (`Lanes` contract); the assert above bounds
        // the load to `words`.
        unsafe {
            assert_eq!(words.len(), 16);
            _mm512_loadu_si512(words.as_ptr().cast())
        }
    }
    #[inline(always)]
    unsafe fn lane_index() -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_add_epi32(self, b) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_xor_si512(self, b) }
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_rol_epi32::<16>(self) }
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_rol_epi32::<12>(self) }
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_rol_epi32::<8>(self) }
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_rol_epi32::<7>(self) }
    }
    #[inline(always)]
    unsafe fn shuffle<const IMM: i32>(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe { _mm512_shuffle_epi32::<IMM>(self) }
    }
    #[inline(always)]
    unsafe fn broadcast_row(r: __m128i) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes` contract).
        unsafe { _mm512_broadcast_i32x4(r) }
    }
    #[inline(always)]
    unsafe fn row_counters(self) -> Self {
        // SAFETY: register-only intrinsics; the CPU has AVX-512F/VL and AVX2 (`Lanes`
        // contract).
        unsafe {
            _mm512_add_epi32(
                self,
                _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0),
            )
        }
    }
    #[inline(always)]
    unsafe fn store_rows([a, b, c, d]: [Self; 4], out: *mut u8, blocks: usize) {
        // SAFETY: the CPU has AVX-512F/VL and AVX2; `out` is valid for writes of `blocks` (at
        // most `ROW_BLOCKS`) × 64 bytes (`Lanes` contract), and only that many blocks are
        // stored.
        unsafe {
            // Rows × lanes into blocks: block j is lane j of a, b, c, d.
            let t0 = _mm512_shuffle_i32x4::<0x44>(a, b);
            let t1 = _mm512_shuffle_i32x4::<0xee>(a, b);
            let t2 = _mm512_shuffle_i32x4::<0x44>(c, d);
            let t3 = _mm512_shuffle_i32x4::<0xee>(c, d);
            let all = [
                _mm512_shuffle_i32x4::<0x88>(t0, t2),
                _mm512_shuffle_i32x4::<0xdd>(t0, t2),
                _mm512_shuffle_i32x4::<0x88>(t1, t3),
                _mm512_shuffle_i32x4::<0xdd>(t1, t3),
            ];
            for (j, block) in all.into_iter().enumerate().take(blocks) {
                _mm512_storeu_si512(out.add(64 * j).cast(), block);
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_vertical(x: &[Self; 16], input: *const u8, output: *mut u8) {
        // SAFETY: the CPU has AVX-512F/VL and AVX2; `input` and `output` are valid for `N * 64`
        // bytes (`Lanes` contract) and every offset below is a block (< N) × 64 plus a part of
        // it below 64.
        unsafe {
            // Transpose words × blocks: first 4×4 within each 128-bit lane (per
            // group of four words), then 4×4 of the lanes across the groups.
            let mut g = [[_mm512_setzero_si512(); 4]; 4];
            for (group, gj) in g.iter_mut().enumerate() {
                let v = &x[group * 4..group * 4 + 4];
                let t0 = _mm512_unpacklo_epi32(v[0], v[1]);
                let t1 = _mm512_unpackhi_epi32(v[0], v[1]);
                let t2 = _mm512_unpacklo_epi32(v[2], v[3]);
                let t3 = _mm512_unpackhi_epi32(v[2], v[3]);
                // Lane L of gj[j]: words 4·group … 4·group+3 of block 4L + j.
                gj[0] = _mm512_unpacklo_epi64(t0, t2);
                gj[1] = _mm512_unpackhi_epi64(t0, t2);
                gj[2] = _mm512_unpacklo_epi64(t1, t3);
                gj[3] = _mm512_unpackhi_epi64(t1, t3);
            }
            #[allow(clippy::needless_range_loop)] // j picks a register in each group
            for j in 0..4 {
                let p0 = _mm512_shuffle_i32x4::<0x44>(g[0][j], g[1][j]);
                let p1 = _mm512_shuffle_i32x4::<0xee>(g[0][j], g[1][j]);
                let p2 = _mm512_shuffle_i32x4::<0x44>(g[2][j], g[3][j]);
                let p3 = _mm512_shuffle_i32x4::<0xee>(g[2][j], g[3][j]);
                let blocks = [
                    _mm512_shuffle_i32x4::<0x88>(p0, p2),
                    _mm512_shuffle_i32x4::<0xdd>(p0, p2),
                    _mm512_shuffle_i32x4::<0x88>(p1, p3),
                    _mm512_shuffle_i32x4::<0xdd>(p1, p3),
                ];
                for (lane, ks) in blocks.into_iter().enumerate() {
                    let off = (4 * lane + j) * 64;
                    let data = _mm512_loadu_si512(input.add(off).cast());
                    _mm512_storeu_si512(output.add(off).cast(), _mm512_xor_si512(data, ks));
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn xor_bytes(input: *const u8, out: *mut u8, ks: &[u8]) {
        // SAFETY: `xor32` needs AVX2, which this backend has, and pointers valid for
        // `ks.len()` bytes, as this method's (`Lanes`) contract guarantees.
        unsafe { super::x86_avx2::xor32(input, out, ks) }
    }
}
