//! Independent ChaCha20 blocks, each with its own 16-byte counter ‖ nonce
//! input (RFC 8439 §2.3): block `i` of a call is ChaCha20(key, LE32(input
//! [0..4]), input[4..16]) — what QUIC header protection computes per packet
//! (RFC 9001 §5.4.4), and what a batch of packets computes together.
//!
//! One vertical kernel over a lane type: each vector holds one state word of
//! `Lanes::N` blocks (xmm 4 on SSSE3, ymm 8 on AVX2, zmm 16 on AVX-512), so
//! one pass serves up to `N` inputs. A single block is latency-bound (20
//! dependent rounds) whatever the width; a batch shares that latency.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

/// ChaCha20's "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// One state word of `N` blocks.
///
/// # Safety
/// Methods may only run where the implementing width's features are present.
unsafe trait Lanes: Copy {
    const N: usize;
    unsafe fn splat(x: u32) -> Self;
    unsafe fn load(words: &[u32]) -> Self;
    unsafe fn store(self, words: &mut [u32]);
    unsafe fn add(self, b: Self) -> Self;
    unsafe fn xor(self, b: Self) -> Self;
    unsafe fn rotl16(self) -> Self;
    unsafe fn rotl12(self) -> Self;
    unsafe fn rotl8(self) -> Self;
    unsafe fn rotl7(self) -> Self;
}

unsafe impl Lanes for __m128i {
    const N: usize = 4;
    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        _mm_set1_epi32(x as i32)
    }
    #[inline(always)]
    unsafe fn load(words: &[u32]) -> Self {
        debug_assert_eq!(words.len(), Self::N);
        _mm_loadu_si128(words.as_ptr().cast())
    }
    #[inline(always)]
    unsafe fn store(self, words: &mut [u32]) {
        debug_assert_eq!(words.len(), Self::N);
        _mm_storeu_si128(words.as_mut_ptr().cast(), self)
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        _mm_add_epi32(self, b)
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        _mm_xor_si128(self, b)
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        _mm_shuffle_epi8(
            self,
            _mm_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2),
        )
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        _mm_or_si128(_mm_slli_epi32(self, 12), _mm_srli_epi32(self, 20))
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        _mm_shuffle_epi8(
            self,
            _mm_set_epi8(14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3),
        )
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        _mm_or_si128(_mm_slli_epi32(self, 7), _mm_srli_epi32(self, 25))
    }
}

unsafe impl Lanes for __m256i {
    const N: usize = 8;
    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        _mm256_set1_epi32(x as i32)
    }
    #[inline(always)]
    unsafe fn load(words: &[u32]) -> Self {
        debug_assert_eq!(words.len(), Self::N);
        _mm256_loadu_si256(words.as_ptr().cast())
    }
    #[inline(always)]
    unsafe fn store(self, words: &mut [u32]) {
        debug_assert_eq!(words.len(), Self::N);
        _mm256_storeu_si256(words.as_mut_ptr().cast(), self)
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        _mm256_add_epi32(self, b)
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        _mm256_xor_si256(self, b)
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        let m = _mm_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2);
        _mm256_shuffle_epi8(self, _mm256_broadcastsi128_si256(m))
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        _mm256_or_si256(_mm256_slli_epi32(self, 12), _mm256_srli_epi32(self, 20))
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        let m = _mm_set_epi8(14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3);
        _mm256_shuffle_epi8(self, _mm256_broadcastsi128_si256(m))
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        _mm256_or_si256(_mm256_slli_epi32(self, 7), _mm256_srli_epi32(self, 25))
    }
}

unsafe impl Lanes for __m512i {
    const N: usize = 16;
    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        _mm512_set1_epi32(x as i32)
    }
    #[inline(always)]
    unsafe fn load(words: &[u32]) -> Self {
        debug_assert_eq!(words.len(), Self::N);
        _mm512_loadu_si512(words.as_ptr().cast())
    }
    #[inline(always)]
    unsafe fn store(self, words: &mut [u32]) {
        debug_assert_eq!(words.len(), Self::N);
        _mm512_storeu_si512(words.as_mut_ptr().cast(), self)
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        _mm512_add_epi32(self, b)
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        _mm512_xor_si512(self, b)
    }
    #[inline(always)]
    unsafe fn rotl16(self) -> Self {
        _mm512_rol_epi32::<16>(self)
    }
    #[inline(always)]
    unsafe fn rotl12(self) -> Self {
        _mm512_rol_epi32::<12>(self)
    }
    #[inline(always)]
    unsafe fn rotl8(self) -> Self {
        _mm512_rol_epi32::<8>(self)
    }
    #[inline(always)]
    unsafe fn rotl7(self) -> Self {
        _mm512_rol_epi32::<7>(self)
    }
}

#[inline(always)]
unsafe fn quarter<L: Lanes>(x: &mut [L; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].add(x[b]);
    x[d] = x[d].xor(x[a]).rotl16();
    x[c] = x[c].add(x[d]);
    x[b] = x[b].xor(x[c]).rotl12();
    x[a] = x[a].add(x[b]);
    x[d] = x[d].xor(x[a]).rotl8();
    x[c] = x[c].add(x[d]);
    x[b] = x[b].xor(x[c]).rotl7();
}

/// The first `B` bytes of ChaCha20 block `inputs[i]` into `out[i]`, for up
/// to `L::N` inputs; the temporaries holding the key and keystream are
/// wiped before returning.
#[inline(always)]
unsafe fn pass<L: Lanes, const B: usize>(key: &[u32; 8], inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
    let n = inputs.len();
    debug_assert!(n <= L::N && out.len() == n);
    // Words 12..16 of every block, lane-major per word (unused lanes zero).
    let mut words = [[0u32; 16]; 4];
    for (lane, input) in inputs.iter().enumerate() {
        for (w, bytes) in words.iter_mut().zip(input.chunks_exact(4)) {
            w[lane] = u32::from_le_bytes(bytes.try_into().expect("4 bytes"));
        }
    }
    let mut init = [L::splat(0); 16];
    for (i, c) in SIGMA.iter().enumerate() {
        init[i] = L::splat(*c);
    }
    for (i, k) in key.iter().enumerate() {
        init[4 + i] = L::splat(*k);
    }
    for (i, w) in words.iter().enumerate() {
        init[12 + i] = L::load(&w[..L::N]);
    }
    let mut x = init;
    for _ in 0..10 {
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 1, 5, 9, 13);
        quarter(&mut x, 2, 6, 10, 14);
        quarter(&mut x, 3, 7, 11, 15);
        quarter(&mut x, 0, 5, 10, 15);
        quarter(&mut x, 1, 6, 11, 12);
        quarter(&mut x, 2, 7, 8, 13);
        quarter(&mut x, 3, 4, 9, 14);
    }
    // Only words 0..4 of each block are output.
    let mut first = [[0u32; 16]; 4];
    for (w, f) in first.iter_mut().enumerate() {
        x[w].add(init[w]).store(&mut f[..L::N]);
    }
    for (lane, o) in out.iter_mut().enumerate() {
        let mut block = [0u8; 16];
        for (w, f) in first.iter().enumerate() {
            block[4 * w..4 * w + 4].copy_from_slice(&f[lane].to_le_bytes());
        }
        o.copy_from_slice(&block[..B]);
        core::ptr::write_volatile(&mut block, [0; 16]);
    }
    for v in x.iter_mut().chain(init.iter_mut()) {
        core::ptr::write_volatile(v, L::splat(0));
    }
    for f in first.iter_mut() {
        core::ptr::write_volatile(f, [0; 16]);
    }
}

macro_rules! entry {
    ($name:ident, $lanes:ty, $features:literal) => {
        /// # Safety
        /// The CPU must have the listed features; `out.len() == inputs.len()`.
        #[target_feature(enable = $features)]
        unsafe fn $name<const B: usize>(key: &[u32; 8], inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
            for (i, o) in inputs
                .chunks(<$lanes as Lanes>::N)
                .zip(out.chunks_mut(<$lanes as Lanes>::N))
            {
                pass::<$lanes, B>(key, i, o);
            }
        }
    };
}

/// One block in the "horizontal" layout (one row per xmm register): the
/// latency of a single block with the fewest instructions. `rol` is the
/// width's rotate (AVX-512VL `vprold`, or shifts and byte shuffles).
macro_rules! one_block {
    ($name:ident, $features:literal, $rol16:expr, $rol12:expr, $rol8:expr, $rol7:expr) => {
        /// # Safety
        /// The CPU must have the listed features; `B <= 16`.
        #[target_feature(enable = $features)]
        unsafe fn $name<const B: usize>(key: &[u32; 8], input: &[u8; 16]) -> [u8; B] {
            let sigma = _mm_loadu_si128(SIGMA.as_ptr().cast());
            let (mut a, mut b, mut c, mut d) = (
                sigma,
                _mm_loadu_si128(key.as_ptr().cast()),
                _mm_loadu_si128(key[4..].as_ptr().cast()),
                _mm_loadu_si128(input.as_ptr().cast()),
            );
            macro_rules! quarter {
                () => {
                    a = _mm_add_epi32(a, b);
                    d = $rol16(_mm_xor_si128(d, a));
                    c = _mm_add_epi32(c, d);
                    b = $rol12(_mm_xor_si128(b, c));
                    a = _mm_add_epi32(a, b);
                    d = $rol8(_mm_xor_si128(d, a));
                    c = _mm_add_epi32(c, d);
                    b = $rol7(_mm_xor_si128(b, c));
                };
            }
            for _ in 0..10 {
                quarter!();
                b = _mm_shuffle_epi32(b, 0x39);
                c = _mm_shuffle_epi32(c, 0x4e);
                d = _mm_shuffle_epi32(d, 0x93);
                quarter!();
                b = _mm_shuffle_epi32(b, 0x93);
                c = _mm_shuffle_epi32(c, 0x4e);
                d = _mm_shuffle_epi32(d, 0x39);
            }
            let mut block = [0u8; 16];
            _mm_storeu_si128(block.as_mut_ptr().cast(), _mm_add_epi32(a, sigma));
            let mut out = [0u8; B];
            out.copy_from_slice(&block[..B]);
            core::ptr::write_volatile(&mut block, [0; 16]);
            for v in [&mut a, &mut b, &mut c, &mut d] {
                core::ptr::write_volatile(v, _mm_setzero_si128());
            }
            out
        }
    };
}
one_block!(
    one_ssse3,
    "ssse3",
    |x: __m128i| x.rotl16(),
    |x: __m128i| x.rotl12(),
    |x: __m128i| x.rotl8(),
    |x: __m128i| x.rotl7()
);
one_block!(
    one_avx512,
    "avx512f,avx512vl",
    |x: __m128i| _mm_rol_epi32::<16>(x),
    |x: __m128i| _mm_rol_epi32::<12>(x),
    |x: __m128i| _mm_rol_epi32::<8>(x),
    |x: __m128i| _mm_rol_epi32::<7>(x)
);
entry!(blocks_ssse3, __m128i, "ssse3");
entry!(blocks_avx2, __m256i, "avx2");
entry!(blocks_avx512, __m512i, "avx512f");

/// Which width runs the blocks (one per ChaCha20 backend).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    Ssse3,
    Avx2,
    Avx512,
}

/// A ChaCha20 key for independent blocks on an x86-64 width; zeroized on
/// drop.
pub(crate) struct Blocks {
    key: zeroize::Zeroizing<[u32; 8]>,
    width: Width,
}

impl Blocks {
    /// `None` unless this CPU has the width's features.
    pub(crate) fn new(key: &[u8; 32], width: Width) -> Option<Self> {
        let cpu = crate::cpu::Features::get();
        let runs = match width {
            Width::Ssse3 => cpu.ssse3,
            Width::Avx2 => cpu.avx2,
            Width::Avx512 => cpu.avx512,
        };
        if !runs {
            return None;
        }
        let mut words = zeroize::Zeroizing::new([0u32; 8]);
        for (w, b) in words.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        Some(Self { key: words, width })
    }

    /// The first `B` bytes of the block for each input.
    ///
    /// # Panics
    /// If the lengths differ, or `B > 16`.
    pub(crate) fn apply<const B: usize>(&self, inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
        assert!(inputs.len() == out.len() && B <= 16, "one output per input");
        // SAFETY: `new` detected the width's features (AVX-512 implies the
        // AVX-512VL the single-block path uses: `Features::avx512`).
        unsafe {
            match (self.width, inputs, &mut *out) {
                (Width::Avx512, [input], [o]) => *o = one_avx512::<B>(&self.key, input),
                (_, [input], [o]) => *o = one_ssse3::<B>(&self.key, input),
                _ => {}
            }
            if inputs.len() == 1 {
                return;
            }
            match self.width {
                Width::Ssse3 => blocks_ssse3(&self.key, inputs, out),
                Width::Avx2 if inputs.len() <= 4 => blocks_ssse3(&self.key, inputs, out),
                Width::Avx2 => blocks_avx2(&self.key, inputs, out),
                Width::Avx512 if inputs.len() <= 4 => blocks_ssse3(&self.key, inputs, out),
                Width::Avx512 if inputs.len() <= 8 => blocks_avx2(&self.key, inputs, out),
                Width::Avx512 => blocks_avx512(&self.key, inputs, out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Blocks, Width};

    /// RFC 8439 §2.3.2's block, and random inputs against RustCrypto's
    /// ChaCha20 seeked to each input's counter, on every width, for batch
    /// sizes 0..=40.
    #[test]
    fn blocks_match_rfc_8439_and_rustcrypto() {
        use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let mut input = [0u8; 16];
        input[..4].copy_from_slice(&1u32.to_le_bytes());
        input[4..].copy_from_slice(&[0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0]);
        let want: [u8; 16] = [
            0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20,
            0x71, 0xc4,
        ];
        let mut seed = 0x1234_5678u64;
        let mut byte = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 56) as u8
        };
        for width in [Width::Ssse3, Width::Avx2, Width::Avx512] {
            let Some(k) = Blocks::new(&key, width) else {
                continue;
            };
            let mut out = [[0u8; 16]];
            k.apply(&[input], &mut out);
            assert_eq!(out[0], want, "{width:?}");
            for n in 0..=40 {
                let inputs: Vec<[u8; 16]> =
                    (0..n).map(|_| core::array::from_fn(|_| byte())).collect();
                let mut out = vec![[0u8; 16]; n];
                k.apply(&inputs, &mut out);
                for (i, o) in inputs.iter().zip(&out) {
                    let counter = u32::from_le_bytes(i[..4].try_into().unwrap());
                    let mut c = chacha20::ChaCha20::new(&key.into(), i[4..].try_into().unwrap());
                    c.seek(u64::from(counter) * 64);
                    let mut ks = [0u8; 16];
                    c.apply_keystream(&mut ks);
                    assert_eq!(*o, ks, "{width:?}, batch of {n}");
                }
            }
        }
    }
}
