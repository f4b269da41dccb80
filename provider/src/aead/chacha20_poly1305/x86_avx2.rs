//! ChaCha20-Poly1305 on AVX2, stitched with scalar Poly1305.
//!
//! - Bulk: 8 blocks (512 bytes) per iteration in the "vertical" layout (each
//!   ymm holds one state word of 8 blocks), with the Poly1305 of 512 bytes
//!   of ciphertext interleaved between the double rounds: ChaCha20 keeps the
//!   vector units busy while Poly1305 runs on the integer multiplier.
//! - Short records, the head and small tails: 2 or 4 blocks per call in the
//!   "horizontal" layout (each ymm holds one row of two blocks), far less
//!   work than an 8-block pass; the first call yields the Poly1305 key
//!   (block 0) and the keystream of the first 192 bytes. Tails over 256
//!   bytes use one 8-block pass.
//!
//! Everything runs inside one `#[target_feature]` function per operation,
//! with `#[inline(always)]` helpers.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use zeroize::{Zeroize, Zeroizing};

use super::poly1305::{Lanes, Poly1305};
use crate::aead::{ct_eq, OpenError, NONCE_LEN, TAG_LEN};
use crate::cpu::Features;

/// The largest batch any wide kernel uses (AVX-512: 16 blocks).
const MAX_BATCH: usize = 1024;
/// Data bytes covered by the first 4-block call, after the Poly1305 key block.
/// Records up to this size take one horizontal call of 2, 4 or 8 blocks
/// (the Poly1305 key block and up to seven data blocks).
const SMALL: usize = 448;

/// `Key` kinds: which wide kernel (and entry points) a key runs.
pub(crate) const SSSE3: u8 = 0;
pub(crate) const AVX2: u8 = 1;
pub(crate) const AVX512: u8 = 2;

/// A ChaCha20-Poly1305 key on one of the x86-64 SIMD backends: `AVX2`
/// (this file), `AVX512` (`x86_avx512.rs`) or `SSSE3` (`x86_ssse3.rs`).
pub(crate) struct Key<const KIND: u8>(Zeroizing<[u32; 8]>);

impl<const KIND: u8> Key<KIND> {
    /// `None` unless this CPU has the kind's features (AVX2 also brings
    /// BMI2/ADX for the scalar side; AVX-512 needs AVX2 too).
    pub(crate) fn new(key: &[u8; 32]) -> Option<Self> {
        let cpu = Features::get();
        let runs = match KIND {
            SSSE3 => cpu.ssse3,
            AVX2 => cpu.avx2,
            _ => cpu.avx2 && cpu.avx512,
        };
        if !runs {
            return None;
        }
        let mut words = Zeroizing::new([0u32; 8]);
        for (w, b) in words.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        Some(Self(words))
    }

    pub(crate) fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        // SAFETY: a `Key` exists only where `new` detected its features.
        unsafe {
            match KIND {
                SSSE3 => super::x86_ssse3::seal(&self.0, nonce, aad, src, buf),
                AVX2 => seal(&self.0, nonce, aad, src, buf),
                _ => super::x86_avx512::seal(&self.0, nonce, aad, src, buf),
            }
        }
    }

    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        // SAFETY: as for `seal`.
        let expected = unsafe {
            match KIND {
                SSSE3 => super::x86_ssse3::open(&self.0, nonce, aad, buf),
                AVX2 => open(&self.0, nonce, aad, buf),
                _ => super::x86_avx512::open(&self.0, nonce, aad, buf),
            }
        };
        if ct_eq(&expected, tag) {
            Ok(())
        } else {
            buf.zeroize();
            Err(OpenError)
        }
    }
}

/// Whether an `n`-byte message keeps the data block counter in 1 ..= 2³²−1.
const fn counter_fits(n: usize) -> bool {
    (n as u64).div_ceil(64) < 1 << 32
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    Seal,
    Open,
}

#[target_feature(enable = "avx2,bmi2,adx")]
unsafe fn seal(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    crypt::<Avx2>(key, nonce, aad, src, buf, Direction::Seal)
}

#[target_feature(enable = "avx2,bmi2,adx")]
unsafe fn open(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    crypt::<Avx2>(key, nonce, aad, &[], buf, Direction::Open)
}

/// A wide ChaCha20 kernel: `BLOCKS` blocks per call in the vertical layout,
/// with Poly1305 of up to `BLOCKS * 64` bytes stitched in.
pub(super) trait Wide {
    const BLOCKS: usize;
    /// Blocks `counter ..` XORed from `input` into `output` while Poly1305
    /// absorbs `hash` (2·L whole blocks, L ≤ `BLOCKS * 2`) in two lanes. A
    /// whole batch of `hash` is the bulk case; callers give it a constant
    /// length so that the lane steps compile without checks.
    ///
    /// # Safety
    /// The CPU has the kernel's features; `input` and `output` point to
    /// `BLOCKS * 64` bytes (`input` may equal `output`), and `hash` is
    /// valid for reads (it may be `output`: it is read before the stores).
    unsafe fn blocks(
        state: &State,
        counter: u32,
        input: *const u8,
        output: *mut u8,
        poly: &mut Poly1305,
        hash: Option<Hash>,
    );

    /// 2, 4 or 8 blocks (`out.len()` 128, 256 or 512) in the
    /// latency-hiding horizontal layout, for short records, the head and
    /// small tails.
    #[inline(always)]
    unsafe fn keystream_small(state: &State, counter: u32, out: &mut [u8]) {
        match out.len() {
            128 => horizontal::<1>(state, counter, out),
            256 => horizontal::<2>(state, counter, out),
            _ => horizontal::<4>(state, counter, out),
        }
    }

    /// 8 blocks (`out.len()` 512) from `counter` while Poly1305 absorbs
    /// `hash` (whole 32-byte pairs of blocks, at most 64 blocks): stitched
    /// where the kernel supports it, one after the other otherwise.
    #[inline(always)]
    unsafe fn keystream_hashing(
        state: &State,
        counter: u32,
        out: &mut [u8],
        poly: &mut Poly1305,
        hash: &[u8],
    ) {
        poly.blocks(hash);
        Self::keystream_small(state, counter, out)
    }

    /// `out[i] = input[i] ^ ks[i]`; `input` may equal `out`.
    #[inline(always)]
    unsafe fn xor(input: *const u8, out: *mut u8, ks: &[u8]) {
        xor_into(input, out, ks)
    }
}

/// The 8-block AVX2 kernel.
struct Avx2;

impl Wide for Avx2 {
    const BLOCKS: usize = 8;
    #[inline(always)]
    unsafe fn blocks(
        state: &State,
        counter: u32,
        input: *const u8,
        output: *mut u8,
        poly: &mut Poly1305,
        hash: Option<Hash>,
    ) {
        blocks8(state, counter, input, output, poly, hash)
    }
}

/// Ciphertext a wide kernel hashes, as a raw pointer: an open hashes bytes
/// that the same call then overwrites with plaintext, so no reference to
/// them may live across the call.
#[derive(Clone, Copy)]
pub(super) struct Hash {
    ptr: *const u8,
    len: usize,
}

impl Hash {
    /// # Safety
    /// `ptr` is valid for `len` bytes of reads while the kernel runs.
    #[inline(always)]
    pub(super) unsafe fn new(ptr: *const u8, len: usize) -> Self {
        Self { ptr, len }
    }

    /// The bytes, for use before the kernel's stores.
    ///
    /// # Safety
    /// As for [`Hash::new`]; the slice must not be used after a write to
    /// those bytes.
    #[inline(always)]
    pub(super) unsafe fn bytes<'a>(self) -> &'a [u8] {
        core::slice::from_raw_parts(self.ptr, self.len)
    }
}

/// The ChaCha20 input state for block counter 0.
pub(super) struct State {
    pub(super) words: [u32; 16],
}

impl State {
    #[inline(always)]
    fn new(key: &[u32; 8], nonce: &[u8; NONCE_LEN]) -> Self {
        let mut words = [0u32; 16];
        words[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
        words[4..12].copy_from_slice(key);
        for (w, b) in words[13..].iter_mut().zip(nonce.chunks_exact(4)) {
            *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        Self { words }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        self.words.zeroize();
    }
}

#[inline(always)]
pub(super) unsafe fn crypt<W: Wide>(
    key: &[u32; 8],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
) -> [u8; TAG_LEN] {
    assert!(src.len() <= buf.len(), "prefix longer than the buffer");
    let n = buf.len();
    // Block counter 0 is the Poly1305 key; data uses 1 ..= 2³²−1 and the
    // counter must never wrap within one message.
    assert!(counter_fits(n), "ChaCha20-Poly1305 message too long");
    let state = State::new(key, nonce);
    if n <= SMALL {
        return crypt_small::<W>(&state, aad, src, buf, dir);
    }

    // Region boundaries: head [0, head_max), batches, tail. Plaintext
    // comes from `src` for whole regions inside it, from `buf` after that.
    // The head is what one wide pass from counter 0 covers after the
    // Poly1305 key block.
    let batch = W::BLOCKS * 64;
    let head_max = batch - 64;
    let head = head_max.min(n);
    let batches_end = head + (n - head) / batch * batch;
    let from_src = if src.len() >= batches_end {
        batches_end
    } else if src.len() >= head {
        head + (src.len() - head) / batch * batch
    } else {
        0
    };
    buf[from_src..src.len()].copy_from_slice(&src[from_src..]);

    // Keystream scratch, wiped at the end.
    let mut ks = [0u8; MAX_BATCH];
    // Pass 0: block 0 (the Poly1305 key) and the head's keystream. It
    // hashes nothing, so its Poly1305 state is a placeholder.
    let mut poly = Poly1305::new(&[0; 32]);
    let ks_ptr = ks.as_mut_ptr();
    W::blocks(&state, 0, ks_ptr, ks_ptr, &mut poly, None);
    poly = Poly1305::new(ks[..32].try_into().expect("32 bytes"));
    poly.padded(aad);

    // With no batch and a tail of at most 512 bytes, the head's Poly1305
    // runs inside the tail's keystream call (its lanes between the rounds).
    // An open then XORs the head only after that call has hashed it.
    let head_in_tail = batches_end == head && n > head && n - head <= 512;
    if dir == Direction::Open && !head_in_tail {
        poly.padded(&buf[..head]);
    }
    if dir == Direction::Seal || !head_in_tail {
        let out = buf.as_mut_ptr();
        let head_in = if from_src >= head {
            src.as_ptr()
        } else {
            out.cast_const()
        };
        W::xor(head_in, out, &ks[64..64 + head]);
    }
    if dir == Direction::Seal && !head_in_tail {
        poly.padded(&buf[..head]);
    }
    let mut counter = 1 + (head_max / 64) as u32;
    let mut off = head;
    // A seal's last batch, until it is hashed (in the tail's wide pass if
    // there is one).
    let mut prev: Option<usize> = None;
    // Every pointer into `buf` in the batch loop derives from this one.
    let base = buf.as_mut_ptr();
    match dir {
        Direction::Seal => {
            while off < batches_end {
                let input = if off + batch <= from_src {
                    src.as_ptr().add(off)
                } else {
                    base.add(off).cast_const()
                };
                let hash = prev.map(|p| Hash::new(base.add(p), batch));
                W::blocks(&state, counter, input, base.add(off), &mut poly, hash);
                prev = Some(off);
                counter = counter.wrapping_add(W::BLOCKS as u32);
                off += batch;
            }
        }
        Direction::Open => {
            while off < batches_end {
                let p = base.add(off);
                W::blocks(&state, counter, p, p, &mut poly, Some(Hash::new(p, batch)));
                counter = counter.wrapping_add(W::BLOCKS as u32);
                off += batch;
            }
        }
    }
    // Tail: less than a batch, with the cheapest keystream that covers it.
    let len = n - off;
    if head_in_tail {
        let mut tail_ks = [0u8; 512];
        W::keystream_hashing(&state, counter, &mut tail_ks, &mut poly, &buf[..head]);
        if dir == Direction::Open {
            let p = buf.as_mut_ptr();
            W::xor(p, p, &ks[64..64 + head]);
        }
        crypt_chunk::<W>(&mut poly, dir, &mut buf[off..], &tail_ks[..len]);
        wipe(&mut tail_ks);
    } else {
        match len {
            0 => {}
            1..=128 => W::keystream_small(&state, counter, &mut ks[..128]),
            129..=256 => W::keystream_small(&state, counter, &mut ks[..256]),
            // Without a batch to hash alongside, 8 blocks in the
            // horizontal layout beat a wide pass.
            257..=512 if prev.is_none() => W::keystream_small(&state, counter, &mut ks[..512]),
            _ => {
                ks[..batch].fill(0);
                let hash = prev.take().map(|p| Hash::new(buf.as_ptr().add(p), batch));
                let ks_ptr = ks.as_mut_ptr();
                W::blocks(&state, counter, ks_ptr, ks_ptr, &mut poly, hash);
            }
        }
        if let Some(p) = prev {
            poly.blocks(&buf[p..p + batch]);
        }
        crypt_chunk::<W>(&mut poly, dir, &mut buf[off..], &ks[..len]);
    }
    wipe(&mut ks);
    finish(poly, aad.len(), n)
}

/// XORs `chunk` with `ks` in place and absorbs the ciphertext into Poly1305:
/// before the XOR when opening, after it when sealing.
#[inline(always)]
unsafe fn crypt_chunk<W: Wide>(poly: &mut Poly1305, dir: Direction, chunk: &mut [u8], ks: &[u8]) {
    if dir == Direction::Open {
        poly.padded(chunk);
    }
    let p = chunk.as_mut_ptr();
    W::xor(p, p, ks);
    if dir == Direction::Seal {
        poly.padded(chunk);
    }
}

/// Clears keystream scratch with one memset, behind `black_box` so it is
/// not elided. (`Zeroizing` would write it a volatile byte at a time, which
/// cost more than a short record.)
#[inline(always)]
fn wipe(scratch: &mut [u8]) {
    scratch.fill(0);
    core::hint::black_box(scratch);
}

/// Records of at most `SMALL` bytes: one horizontal call of 2, 4 or 8
/// independent blocks yields the Poly1305 key and all the keystream, with a
/// scratch buffer sized for that alone (clearing a whole batch buffer cost
/// more than a short record).
#[inline(always)]
unsafe fn crypt_small<W: Wide>(
    state: &State,
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
) -> [u8; TAG_LEN] {
    let n = buf.len();
    buf[..src.len()].copy_from_slice(src);
    let mut ks = [0u8; 64 + SMALL];
    let used = match n {
        0..=64 => 128,
        65..=192 => 256,
        _ => 512,
    };
    W::keystream_small(state, 0, &mut ks[..used]);
    let mut poly = Poly1305::new(ks[..32].try_into().expect("32 bytes"));
    poly.padded(aad);
    crypt_chunk::<W>(&mut poly, dir, buf, &ks[64..64 + n]);
    wipe(&mut ks);
    finish(poly, aad.len(), n)
}

/// Absorbs the lengths block and returns the tag.
#[inline(always)]
fn finish(mut poly: Poly1305, aad_len: usize, n: usize) -> [u8; TAG_LEN] {
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(aad_len as u64).to_le_bytes());
    lengths[8..].copy_from_slice(&(n as u64).to_le_bytes());
    poly.blocks(&lengths);
    poly.finish()
}

/// `out[i] = input[i] ^ ks[i]` for `ks.len()` bytes; `input` may equal `out`.
#[inline(always)]
unsafe fn xor_into(input: *const u8, out: *mut u8, ks: &[u8]) {
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

/// Byte shuffles for the 16- and 8-bit rotates.
#[repr(C, align(32))]
struct Mask([u8; 32]);
static ROT16: Mask = Mask([
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14,
    15, 12, 13,
]);
static ROT8: Mask = Mask([
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15,
    12, 13, 14,
]);

/// The shuffle mask, read from memory at each use (a volatile load cannot
/// be hoisted), so it holds a ymm register only briefly instead of for the
/// whole 8-way loop, where registers are short.
#[inline(always)]
unsafe fn mask(m: &'static Mask) -> __m256i {
    core::ptr::read_volatile((m as *const Mask).cast::<__m256i>())
}

#[inline(always)]
unsafe fn rot16(x: __m256i) -> __m256i {
    _mm256_shuffle_epi8(x, mask(&ROT16))
}

#[inline(always)]
unsafe fn rot8(x: __m256i) -> __m256i {
    _mm256_shuffle_epi8(x, mask(&ROT8))
}

#[inline(always)]
unsafe fn rotl<const L: i32, const R: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<L>(x), _mm256_srli_epi32::<R>(x))
}

/// One ChaCha quarter round on four vectors (any layout).
#[inline(always)]
unsafe fn quarter(a: &mut __m256i, b: &mut __m256i, c: &mut __m256i, d: &mut __m256i) {
    *a = _mm256_add_epi32(*a, *b);
    *d = rot16(_mm256_xor_si256(*d, *a));
    *c = _mm256_add_epi32(*c, *d);
    *b = rotl::<12, 20>(_mm256_xor_si256(*b, *c));
    *a = _mm256_add_epi32(*a, *b);
    *d = rot8(_mm256_xor_si256(*d, *a));
    *c = _mm256_add_epi32(*c, *d);
    *b = rotl::<7, 25>(_mm256_xor_si256(*b, *c));
}

/// `2 * SETS` blocks from `counter` into `out` in the horizontal layout
/// (one row of two blocks per register); the sets are independent, so they
/// hide each other's latency.
#[inline(always)]
pub(super) unsafe fn horizontal<const SETS: usize>(state: &State, counter: u32, out: &mut [u8]) {
    assert_eq!(out.len(), SETS * 128);
    let w = &state.words;
    let row = |i: usize| _mm256_broadcastsi128_si256(_mm_loadu_si128(w[i..].as_ptr().cast()));
    let (a0, b0, c0) = (row(0), row(4), row(8));
    let mut d0 = [_mm256_setzero_si256(); SETS];
    for (set, d) in d0.iter_mut().enumerate() {
        let c = counter.wrapping_add(2 * set as u32);
        *d = _mm256_set_epi32(
            w[15] as i32,
            w[14] as i32,
            w[13] as i32,
            c.wrapping_add(1) as i32,
            w[15] as i32,
            w[14] as i32,
            w[13] as i32,
            c as i32,
        );
    }
    let (mut a, mut b, mut c, mut d) = ([a0; SETS], [b0; SETS], [c0; SETS], d0);
    for _ in 0..10 {
        for s in 0..SETS {
            quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
            b[s] = _mm256_shuffle_epi32::<0x39>(b[s]);
            c[s] = _mm256_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm256_shuffle_epi32::<0x93>(d[s]);
        }
        for s in 0..SETS {
            quarter(&mut a[s], &mut b[s], &mut c[s], &mut d[s]);
            b[s] = _mm256_shuffle_epi32::<0x93>(b[s]);
            c[s] = _mm256_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm256_shuffle_epi32::<0x39>(d[s]);
        }
    }
    for s in 0..SETS {
        let (a, b) = (_mm256_add_epi32(a[s], a0), _mm256_add_epi32(b[s], b0));
        let (c, d) = (_mm256_add_epi32(c[s], c0), _mm256_add_epi32(d[s], d0[s]));
        let o = out[s * 128..].as_mut_ptr();
        _mm256_storeu_si256(o.cast(), _mm256_permute2x128_si256::<0x20>(a, b));
        _mm256_storeu_si256(o.add(32).cast(), _mm256_permute2x128_si256::<0x20>(c, d));
        _mm256_storeu_si256(o.add(64).cast(), _mm256_permute2x128_si256::<0x31>(a, b));
        _mm256_storeu_si256(o.add(96).cast(), _mm256_permute2x128_si256::<0x31>(c, d));
    }
}

/// Poly1305 lane step `i` of the run a wide kernel hashes, if it hashes one.
#[inline(always)]
pub(super) fn stitch(poly: &Poly1305, lanes: Option<&mut (&[u8], Lanes)>, i: usize) {
    if let Some((data, lanes)) = lanes {
        poly.lane_step(lanes, data, i);
    }
}

/// One double round on the vertical state, with Poly1305 lane steps
/// `step` and `step + 1` (if `lanes` is given) between the quarter rounds.
#[inline(always)]
unsafe fn double_round(
    x: &mut [__m256i; 16],
    poly: &Poly1305,
    mut lanes: Option<&mut (&[u8], Lanes)>,
    step: usize,
) {
    let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = x;
    quarter(x0, x4, x8, x12);
    quarter(x1, x5, x9, x13);
    stitch(poly, lanes.as_deref_mut(), step);
    quarter(x2, x6, x10, x14);
    quarter(x3, x7, x11, x15);
    quarter(x0, x5, x10, x15);
    quarter(x1, x6, x11, x12);
    stitch(poly, lanes, step + 1);
    quarter(x2, x7, x8, x13);
    quarter(x3, x4, x9, x14);
}

/// Eight blocks from `counter` XORed from `input` into `output` (512
/// bytes), with the Poly1305 of the 512 bytes at `hash` absorbed between
/// the double rounds.
#[inline(always)]
unsafe fn blocks8(
    state: &State,
    counter: u32,
    input: *const u8,
    output: *mut u8,
    poly: &mut Poly1305,
    hash: Option<Hash>,
) {
    let w = &state.words;
    let mut x = [_mm256_setzero_si256(); 16];
    for (xi, &wi) in x.iter_mut().zip(w) {
        *xi = _mm256_set1_epi32(wi as i32);
    }
    x[12] = _mm256_add_epi32(
        _mm256_set1_epi32(counter as i32),
        _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0),
    );
    let x12 = x[12];
    // Up to 16 Poly1305 lane steps, two in each of the first eight double
    // rounds.
    // SAFETY: the caller's contract; the slice's last use is before the
    // stores below, which may overwrite the same bytes (open in place).
    let mut lanes = hash.map(|h| {
        let data = unsafe { h.bytes() };
        (data, poly.lanes_begin(data.len() / 32))
    });
    for round in 0..8 {
        double_round(&mut x, poly, lanes.as_mut(), 2 * round);
    }
    for _ in 8..10 {
        double_round(&mut x, poly, None, 0);
    }
    if let Some((_, lanes)) = lanes {
        poly.lanes_end(lanes);
    }
    for (i, xi) in x.iter_mut().enumerate() {
        let init = if i == 12 {
            x12
        } else {
            _mm256_set1_epi32(w[i] as i32)
        };
        *xi = _mm256_add_epi32(*xi, init);
    }
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

#[cfg(test)]
mod tests {
    #[test]
    fn block_counter_never_wraps() {
        assert!(super::counter_fits(0));
        assert!(
            super::counter_fits((1 << 38) - 64),
            "counter 2^32-1 is the last block"
        );
        assert!(
            !super::counter_fits((1 << 38) - 63),
            "one more byte would wrap the counter"
        );
    }
}
