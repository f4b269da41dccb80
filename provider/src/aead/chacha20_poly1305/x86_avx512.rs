//! ChaCha20-Poly1305 with AVX-512: 16 blocks (1 KiB) per iteration in the
//! vertical layout on zmm registers, where 32 registers hold the whole
//! state without spills and `vprold` rotates in one instruction; scalar
//! Poly1305 stitched between the double rounds as in the AVX2 engine, which
//! supplies the head, tails and the rest of the record logic (`crypt`).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::poly1305::Poly1305;
use super::x86_avx2::{crypt, stitch, Direction, Hash, State, Wide};
use crate::aead::{NONCE_LEN, TAG_LEN};

/// # Safety
/// The CPU has AVX-512F, AVX2, BMI2 and ADX.
#[target_feature(enable = "avx512f,avx2,bmi2,adx")]
pub(super) unsafe fn seal(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    crypt::<Avx512>(key, nonce, aad, src, buf, Direction::Seal)
}

/// # Safety
/// As for [`seal`].
#[target_feature(enable = "avx512f,avx2,bmi2,adx")]
pub(super) unsafe fn open(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    crypt::<Avx512>(key, nonce, aad, &[], buf, Direction::Open)
}

/// The 16-block AVX-512 kernel.
struct Avx512;

#[inline(always)]
unsafe fn quarter(a: &mut __m512i, b: &mut __m512i, c: &mut __m512i, d: &mut __m512i) {
    *a = _mm512_add_epi32(*a, *b);
    *d = _mm512_rol_epi32::<16>(_mm512_xor_si512(*d, *a));
    *c = _mm512_add_epi32(*c, *d);
    *b = _mm512_rol_epi32::<12>(_mm512_xor_si512(*b, *c));
    *a = _mm512_add_epi32(*a, *b);
    *d = _mm512_rol_epi32::<8>(_mm512_xor_si512(*d, *a));
    *c = _mm512_add_epi32(*c, *d);
    *b = _mm512_rol_epi32::<7>(_mm512_xor_si512(*b, *c));
}

impl Wide for Avx512 {
    const BLOCKS: usize = 16;

    /// Two zmm sets (8 blocks) with the lane steps of `hash` between the
    /// rounds.
    #[inline(always)]
    unsafe fn keystream_hashing(
        state: &State,
        counter: u32,
        out: &mut [u8],
        poly: &mut Poly1305,
        hash: &[u8],
    ) {
        debug_assert!(hash.len().is_multiple_of(32) && hash.len() <= 1024);
        let mut lanes = poly.lanes_begin(hash.len() / 32);
        horizontal_hashing::<2>(state, counter, out, |i| poly.lane_step(&mut lanes, hash, i));
        poly.lanes_end(lanes);
    }

    /// 2 blocks: the AVX2 call (one ymm chain measured faster than a zmm
    /// one). 4 or 8 blocks: 4 per zmm (one per 128-bit lane) with `vprold`
    /// rotates, in one or two independent sets.
    #[inline(always)]
    unsafe fn keystream_small(state: &State, counter: u32, out: &mut [u8]) {
        match out.len() {
            128 => super::x86_avx2::horizontal::<1>(state, counter, out),
            256 => horizontal::<1>(state, counter, out),
            _ => horizontal::<2>(state, counter, out),
        }
    }

    #[inline(always)]
    unsafe fn blocks(
        state: &State,
        counter: u32,
        input: *const u8,
        output: *mut u8,
        poly: &mut Poly1305,
        hash: Option<Hash>,
    ) {
        let w = &state.words;
        let mut x = [_mm512_setzero_si512(); 16];
        for (xi, &wi) in x.iter_mut().zip(w) {
            *xi = _mm512_set1_epi32(wi as i32);
        }
        let lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        x[12] = _mm512_add_epi32(_mm512_set1_epi32(counter as i32), lanes);
        let x12 = x[12];
        // Up to 32 Poly1305 lane steps: three per double round, spread
        // between the quarter rounds, and the last two after them.
        // SAFETY: the caller's contract; the slice's last use is before the
        // stores below, which may overwrite the same bytes (open in place).
        let mut lanes = hash.map(|h| {
            let data = unsafe { h.bytes() };
            (data, poly.lanes_begin(data.len() / 32))
        });
        for round in 0..10 {
            let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = &mut x;
            quarter(x0, x4, x8, x12);
            quarter(x1, x5, x9, x13);
            stitch(poly, lanes.as_mut(), 3 * round);
            quarter(x2, x6, x10, x14);
            quarter(x3, x7, x11, x15);
            quarter(x0, x5, x10, x15);
            stitch(poly, lanes.as_mut(), 3 * round + 1);
            quarter(x1, x6, x11, x12);
            quarter(x2, x7, x8, x13);
            stitch(poly, lanes.as_mut(), 3 * round + 2);
            quarter(x3, x4, x9, x14);
        }
        stitch(poly, lanes.as_mut(), 30);
        stitch(poly, lanes.as_mut(), 31);
        if let Some((_, lanes)) = lanes {
            poly.lanes_end(lanes);
        }
        for (i, xi) in x.iter_mut().enumerate() {
            let init = if i == 12 {
                x12
            } else {
                _mm512_set1_epi32(w[i] as i32)
            };
            *xi = _mm512_add_epi32(*xi, init);
        }
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

/// Blocks from `counter` into `out` (whole blocks, at most `4 * SETS`) in
/// the horizontal layout on zmm: each register holds one row of four
/// blocks, one per 128-bit lane, and the sets are independent chains.
#[inline(always)]
unsafe fn horizontal<const SETS: usize>(state: &State, counter: u32, out: &mut [u8]) {
    horizontal_hashing::<SETS>(state, counter, out, |_| {})
}

/// [`horizontal`], calling `step(i)` for i in 0..32 between the rounds
/// (three per double round, two at the end), where scalar work is stitched.
#[inline(always)]
unsafe fn horizontal_hashing<const SETS: usize>(
    state: &State,
    counter: u32,
    out: &mut [u8],
    mut step: impl FnMut(usize),
) {
    assert!(out.len().is_multiple_of(64) && out.len() <= SETS * 256);
    let w = &state.words;
    let row = |i: usize| _mm512_broadcast_i32x4(_mm_loadu_si128(w[i..].as_ptr().cast()));
    let (a0, b0, c0) = (row(0), row(4), row(8));
    let mut d0 = [row(12); SETS];
    for (set, d) in d0.iter_mut().enumerate() {
        let c = counter.wrapping_add(4 * set as u32) as i32;
        let lanes = _mm512_set_epi32(
            0,
            0,
            0,
            c.wrapping_add(3),
            0,
            0,
            0,
            c.wrapping_add(2),
            0,
            0,
            0,
            c.wrapping_add(1),
            0,
            0,
            0,
            c,
        );
        *d = _mm512_add_epi32(*d, lanes);
    }
    let (mut a, mut b, mut c, mut d) = ([a0; SETS], [b0; SETS], [c0; SETS], d0);
    for round in 0..10 {
        step(3 * round);
        for s in 0..SETS {
            quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
            b[s] = _mm512_shuffle_epi32::<0x39>(b[s]);
            c[s] = _mm512_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm512_shuffle_epi32::<0x93>(d[s]);
        }
        step(3 * round + 1);
        for s in 0..SETS {
            quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
            b[s] = _mm512_shuffle_epi32::<0x93>(b[s]);
            c[s] = _mm512_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm512_shuffle_epi32::<0x39>(d[s]);
        }
        step(3 * round + 2);
    }
    step(30);
    step(31);
    for s in 0..SETS {
        let (a, b) = (_mm512_add_epi32(a[s], a0), _mm512_add_epi32(b[s], b0));
        let (c, d) = (_mm512_add_epi32(c[s], c0), _mm512_add_epi32(d[s], d0[s]));
        // Rows × lanes into blocks: block j is lane j of a, b, c, d.
        let t0 = _mm512_shuffle_i32x4::<0x44>(a, b);
        let t1 = _mm512_shuffle_i32x4::<0xee>(a, b);
        let t2 = _mm512_shuffle_i32x4::<0x44>(c, d);
        let t3 = _mm512_shuffle_i32x4::<0xee>(c, d);
        let blocks = [
            _mm512_shuffle_i32x4::<0x88>(t0, t2),
            _mm512_shuffle_i32x4::<0xdd>(t0, t2),
            _mm512_shuffle_i32x4::<0x88>(t1, t3),
            _mm512_shuffle_i32x4::<0xdd>(t1, t3),
        ];
        for (j, block) in blocks.into_iter().enumerate() {
            let at = (4 * s + j) * 64;
            if at < out.len() {
                _mm512_storeu_si512(out[at..].as_mut_ptr().cast(), block);
            }
        }
    }
}
