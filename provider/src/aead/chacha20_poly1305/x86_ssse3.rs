//! ChaCha20-Poly1305 for x86-64 CPUs without AVX2: 4 blocks per iteration
//! in the vertical layout on xmm registers (`pshufb` rotates by 16 and 8),
//! stitched with scalar Poly1305, and 1-block-per-set horizontal calls for
//! short records. The record logic (`crypt`) is the AVX2 engine's.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::poly1305::Poly1305;
use super::x86_avx2::{crypt, Direction, Hash, State, Wide};
use crate::aead::{NONCE_LEN, TAG_LEN};

/// # Safety
/// The CPU has SSSE3.
#[target_feature(enable = "ssse3")]
pub(super) unsafe fn seal(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    crypt::<Ssse3>(key, nonce, aad, src, buf, Direction::Seal)
}

/// # Safety
/// As for [`seal`].
#[target_feature(enable = "ssse3")]
pub(super) unsafe fn open(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    crypt::<Ssse3>(key, nonce, aad, &[], buf, Direction::Open)
}

#[inline(always)]
unsafe fn rot16(x: __m128i) -> __m128i {
    _mm_shuffle_epi8(
        x,
        _mm_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2),
    )
}

#[inline(always)]
unsafe fn rot8(x: __m128i) -> __m128i {
    _mm_shuffle_epi8(
        x,
        _mm_set_epi8(14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3),
    )
}

#[inline(always)]
unsafe fn rotl<const L: i32, const R: i32>(x: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<L>(x), _mm_srli_epi32::<R>(x))
}

#[inline(always)]
unsafe fn quarter(a: &mut __m128i, b: &mut __m128i, c: &mut __m128i, d: &mut __m128i) {
    *a = _mm_add_epi32(*a, *b);
    *d = rot16(_mm_xor_si128(*d, *a));
    *c = _mm_add_epi32(*c, *d);
    *b = rotl::<12, 20>(_mm_xor_si128(*b, *c));
    *a = _mm_add_epi32(*a, *b);
    *d = rot8(_mm_xor_si128(*d, *a));
    *c = _mm_add_epi32(*c, *d);
    *b = rotl::<7, 25>(_mm_xor_si128(*b, *c));
}

/// The 4-block SSSE3 kernel.
struct Ssse3;

impl Wide for Ssse3 {
    const BLOCKS: usize = 4;

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
        let mut x = [_mm_setzero_si128(); 16];
        for (xi, &wi) in x.iter_mut().zip(w) {
            *xi = _mm_set1_epi32(wi as i32);
        }
        x[12] = _mm_add_epi32(_mm_set1_epi32(counter as i32), _mm_set_epi32(3, 2, 1, 0));
        let x12 = x[12];
        // SAFETY: the caller's contract; the slice's last use is before the
        // stores below, which may overwrite the same bytes (open in place).
        let hashed = hash.map(|h| unsafe { h.bytes() });
        debug_assert!(hashed.is_none_or(|h| h.len() <= 256));
        for round in 0..10 {
            let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = &mut x;
            quarter(x0, x4, x8, x12);
            quarter(x1, x5, x9, x13);
            quarter(x2, x6, x10, x14);
            quarter(x3, x7, x11, x15);
            quarter(x0, x5, x10, x15);
            quarter(x1, x6, x11, x12);
            quarter(x2, x7, x8, x13);
            quarter(x3, x4, x9, x14);
            // Up to 16 Poly1305 blocks: 2 after each of the first 8 double
            // rounds.
            if let Some(pair) = hashed.and_then(|data| data.get(round * 32..round * 32 + 32)) {
                poly.blocks(pair);
            }
        }
        for (i, xi) in x.iter_mut().enumerate() {
            let init = if i == 12 {
                x12
            } else {
                _mm_set1_epi32(w[i] as i32)
            };
            *xi = _mm_add_epi32(*xi, init);
        }
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

    /// One block per set, `out.len() / 64` independent sets.
    #[inline(always)]
    unsafe fn keystream_small(state: &State, counter: u32, out: &mut [u8]) {
        match out.len() {
            128 => horizontal::<2>(state, counter, out),
            256 => horizontal::<4>(state, counter, out),
            _ => {
                let (lo, hi) = out.split_at_mut(256);
                horizontal::<4>(state, counter, lo);
                horizontal::<4>(state, counter.wrapping_add(4), hi);
            }
        }
    }

    #[inline(always)]
    unsafe fn xor(input: *const u8, out: *mut u8, ks: &[u8]) {
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

/// `SETS` blocks from `counter`, one per set of four row registers.
#[inline(always)]
unsafe fn horizontal<const SETS: usize>(state: &State, counter: u32, out: &mut [u8]) {
    assert_eq!(out.len(), SETS * 64);
    let w = &state.words;
    let row = |i: usize| _mm_loadu_si128(w[i..].as_ptr().cast());
    let (a0, b0, c0) = (row(0), row(4), row(8));
    let mut d0 = [_mm_setzero_si128(); SETS];
    for (set, d) in d0.iter_mut().enumerate() {
        let c = counter.wrapping_add(set as u32);
        *d = _mm_set_epi32(w[15] as i32, w[14] as i32, w[13] as i32, c as i32);
    }
    let (mut a, mut b, mut c, mut d) = ([a0; SETS], [b0; SETS], [c0; SETS], d0);
    for _ in 0..10 {
        for s in 0..SETS {
            quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
            b[s] = _mm_shuffle_epi32::<0x39>(b[s]);
            c[s] = _mm_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm_shuffle_epi32::<0x93>(d[s]);
        }
        for s in 0..SETS {
            quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
            b[s] = _mm_shuffle_epi32::<0x93>(b[s]);
            c[s] = _mm_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm_shuffle_epi32::<0x39>(d[s]);
        }
    }
    for s in 0..SETS {
        let o = out[s * 64..].as_mut_ptr();
        _mm_storeu_si128(o.cast(), _mm_add_epi32(a[s], a0));
        _mm_storeu_si128(o.add(16).cast(), _mm_add_epi32(b[s], b0));
        _mm_storeu_si128(o.add(32).cast(), _mm_add_epi32(c[s], c0));
        _mm_storeu_si128(o.add(48).cast(), _mm_add_epi32(d[s], d0[s]));
    }
}
