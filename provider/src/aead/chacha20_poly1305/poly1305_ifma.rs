//! Poly1305 on eight zmm lanes with AVX-512 IFMA (`vpmadd52luq` /
//! `vpmadd52huq`), radix 2⁴⁴ (limbs of 44, 44 and 42 bits).
//!
//! A run of 8·k blocks is eight Horner chains: each step adds eight blocks
//! to the lanes (lane `k` takes block `k/2 + 4·(k mod 2)` of the step's
//! eight, the order the loads' unpacking gives) and multiplies them by r⁸,
//! except the last, which multiplies each lane by r^(8−b) for its block
//! `b`; the lanes' sum is then the run's Horner sum (h entering in lane 0).
//! `X86Avx512Ifma` runs it where no ChaCha20 round runs beside it (see
//! `padded_serial` in `x86_64/phased.rs`): stitched between a zmm pass's rounds it
//! is slower than the scalar chains, which use the integer units
//! (docs/decisions.md, "ChaCha20-Poly1305 at 16 KiB on zmm").
//!
//! The powers come from the scalar `Poly1305` (`ifma_powers`), once per
//! run. Constant time: no branch or index depends on key or data.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use zeroize::Zeroize;

const M44: u64 = (1 << 44) - 1;
const M42: u64 = (1 << 42) - 1;

/// The powers a run needs, as 44-bit limbs: r⁸ (`r0 r1 r2 s1 s2`, where
/// `sᵢ = 20·rᵢ` folds the 2¹³⁰ ≡ 5 wrap at limb weight 2¹³²), and per lane
/// of the last step the power for its block (see the module docs) in the
/// same five forms, row by row.
pub(super) struct Powers {
    pub(super) r8: [u64; 5],
    pub(super) last: [[u64; 8]; 5],
}

impl Powers {
    pub(super) fn new() -> Self {
        Self {
            r8: [0; 5],
            last: [[0; 8]; 5],
        }
    }
}

impl Drop for Powers {
    fn drop(&mut self) {
        self.r8.zeroize();
        self.last.zeroize();
    }
}

/// `h` (radix 2⁶⁴, top limb small) as 44-bit limbs.
#[inline(always)]
pub(super) fn to_limbs(h: [u64; 3]) -> [u64; 3] {
    [
        h[0] & M44,
        ((h[0] >> 44) | (h[1] << 20)) & M44,
        (h[1] >> 24) | (h[2] << 40),
    ]
}

/// 44-bit limbs (each below 2⁶⁰) back to radix 2⁶⁴, partially reduced
/// (top limb ≤ 4).
#[inline(always)]
pub(super) fn from_limbs(l: [u64; 3]) -> [u64; 3] {
    let mut t = u128::from(l[0]) + (u128::from(l[1]) << 44);
    let h0 = t as u64;
    t >>= 64;
    t += u128::from(l[2]) << 24;
    let h1 = t as u64;
    let h2 = (t >> 64) as u64;
    let fold = (h2 & !3) + (h2 >> 2);
    let (h0, c) = h0.overflowing_add(fold);
    let (h1, c) = h1.overflowing_add(u64::from(c));
    [h0, h1, (h2 & 3) + u64::from(c)]
}

/// `a·b mod 2¹³⁰−5` in 44-bit limbs (scalar; for the powers).
#[inline(always)]
pub(super) fn mul_limbs(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    let m = |x: u64, y: u64| u128::from(x) * u128::from(y);
    let (s1, s2) = (20 * b[1], 20 * b[2]);
    let d0 = m(a[0], b[0]) + m(a[1], s2) + m(a[2], s1);
    let d1 = m(a[0], b[1]) + m(a[1], b[0]) + m(a[2], s2) + (d0 >> 44);
    let d2 = m(a[0], b[2]) + m(a[1], b[1]) + m(a[2], b[0]) + (d1 >> 44);
    let h0 = (d0 as u64 & M44) + 5 * (d2 >> 42) as u64;
    let h1 = (d1 as u64 & M44) + (h0 >> 44);
    [h0 & M44, h1, d2 as u64 & M42]
}

/// One run in flight: the eight lanes' accumulators and r⁸.
pub(super) struct Run {
    acc: [__m512i; 3],
    r8: [__m512i; 5],
}

/// Starts a run from `h` (radix 2⁶⁴): h in lane 0, zero elsewhere.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 IFMA.
#[inline(always)]
pub(super) unsafe fn begin(powers: &Powers, h: [u64; 3]) -> Run {
    // SAFETY: register-only intrinsics; the CPU has the features (this fn's contract).
    unsafe {
        let h = to_limbs(h);
        let mut acc = [_mm512_setzero_si512(); 3];
        for (a, l) in acc.iter_mut().zip(h) {
            *a = _mm512_maskz_mov_epi64(1, splat(l));
        }
        let mut r8 = [_mm512_setzero_si512(); 5];
        for (r, p) in r8.iter_mut().zip(powers.r8) {
            *r = splat(p);
        }
        Run { acc, r8 }
    }
}

/// Absorbs the eight blocks at `p` (128 bytes) into the run and multiplies
/// by r⁸, or on the `last` step by the lanes' final powers.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 IFMA; `p` is valid for 128 bytes.
#[inline(always)]
pub(super) unsafe fn step(run: &mut Run, powers: &Powers, p: *const u8, last: bool) {
    // SAFETY: the CPU has the features and `p` is valid for the two 64-byte loads (this fn's
    // contract); `last` rows are `[u64; 8]`, one zmm each.
    unsafe {
        let a = _mm512_loadu_si512(p.cast());
        let b = _mm512_loadu_si512(p.add(64).cast());
        // Lane k takes block k/2 + 4·(k mod 2): the last step's powers are
        // laid out to match.
        let lo = _mm512_unpacklo_epi64(a, b);
        let hi = _mm512_unpackhi_epi64(a, b);
        let m44 = _mm512_set1_epi64(M44 as i64);
        let m0 = _mm512_and_si512(lo, m44);
        let m1 = _mm512_and_si512(
            _mm512_or_si512(_mm512_srli_epi64::<44>(lo), _mm512_slli_epi64::<20>(hi)),
            m44,
        );
        let m2 = _mm512_or_si512(_mm512_srli_epi64::<24>(hi), _mm512_set1_epi64(1 << 40));
        let a = [
            _mm512_add_epi64(run.acc[0], m0),
            _mm512_add_epi64(run.acc[1], m1),
            _mm512_add_epi64(run.acc[2], m2),
        ];
        let mut r = run.r8;
        if last {
            for (r, row) in r.iter_mut().zip(&powers.last) {
                *r = _mm512_loadu_si512(row.as_ptr().cast());
            }
        }
        run.acc = mul(a, &r);
    }
}

/// Ends a run (after its `last` step): the lanes' sum, radix 2⁶⁴.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 IFMA.
#[inline(always)]
pub(super) unsafe fn end(run: &Run) -> [u64; 3] {
    // SAFETY: register-only intrinsics; the CPU has the features (this fn's contract).
    unsafe {
        // Each lane's limbs are below 2⁴⁵: eight of them sum far below 2⁶⁰.
        let [a0, a1, a2] = run.acc;
        from_limbs([
            _mm512_reduce_add_epi64(a0) as u64,
            _mm512_reduce_add_epi64(a1) as u64,
            _mm512_reduce_add_epi64(a2) as u64,
        ])
    }
}

/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
unsafe fn splat(x: u64) -> __m512i {
    // SAFETY: register-only; the CPU has AVX-512F (callers' contract).
    unsafe { _mm512_set1_epi64(x as i64) }
}

/// `a·r mod 2¹³⁰−5` per lane, partially reduced (limbs below 2⁴⁴, 2⁴⁴ +
/// 2¹², 2⁴²), for limbs of `a` below 2⁵² and `r` as `r0 r1 r2 s1 s2`.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 IFMA.
#[inline(always)]
unsafe fn mul(a: [__m512i; 3], r: &[__m512i; 5]) -> [__m512i; 3] {
    // SAFETY: register-only intrinsics; the CPU has AVX-512F and IFMA (callers' contract).
    unsafe {
        let z = _mm512_setzero_si512();
        let [r0, r1, r2, s1, s2] = *r;
        // Column sums of 52-bit halves: dᵢ = dᵢl + 2⁵²·dᵢh.
        let mut d0l = _mm512_madd52lo_epu64(z, a[0], r0);
        let mut d0h = _mm512_madd52hi_epu64(z, a[0], r0);
        let mut d1l = _mm512_madd52lo_epu64(z, a[0], r1);
        let mut d1h = _mm512_madd52hi_epu64(z, a[0], r1);
        let mut d2l = _mm512_madd52lo_epu64(z, a[0], r2);
        let mut d2h = _mm512_madd52hi_epu64(z, a[0], r2);
        d0l = _mm512_madd52lo_epu64(d0l, a[1], s2);
        d0h = _mm512_madd52hi_epu64(d0h, a[1], s2);
        d1l = _mm512_madd52lo_epu64(d1l, a[1], r0);
        d1h = _mm512_madd52hi_epu64(d1h, a[1], r0);
        d2l = _mm512_madd52lo_epu64(d2l, a[1], r1);
        d2h = _mm512_madd52hi_epu64(d2h, a[1], r1);
        d0l = _mm512_madd52lo_epu64(d0l, a[2], s1);
        d0h = _mm512_madd52hi_epu64(d0h, a[2], s1);
        d1l = _mm512_madd52lo_epu64(d1l, a[2], s2);
        d1h = _mm512_madd52hi_epu64(d1h, a[2], s2);
        d2l = _mm512_madd52lo_epu64(d2l, a[2], r0);
        d2h = _mm512_madd52hi_epu64(d2h, a[2], r0);
        // Carry up the limbs (2⁵² = 2⁸ at the next limb's weight); what
        // passes 2¹³⁰ comes back times 5 (x + 4x).
        let m44 = _mm512_set1_epi64(M44 as i64);
        d1l = _mm512_add_epi64(d1l, _mm512_srli_epi64::<44>(d0l));
        d1l = _mm512_add_epi64(d1l, _mm512_slli_epi64::<8>(d0h));
        d2l = _mm512_add_epi64(d2l, _mm512_srli_epi64::<44>(d1l));
        d2l = _mm512_add_epi64(d2l, _mm512_slli_epi64::<8>(d1h));
        let x = _mm512_add_epi64(_mm512_srli_epi64::<42>(d2l), _mm512_slli_epi64::<10>(d2h));
        let h0 = _mm512_add_epi64(
            _mm512_and_si512(d0l, m44),
            _mm512_add_epi64(x, _mm512_slli_epi64::<2>(x)),
        );
        let h1 = _mm512_add_epi64(_mm512_and_si512(d1l, m44), _mm512_srli_epi64::<44>(h0));
        [
            _mm512_and_si512(h0, m44),
            h1,
            _mm512_and_si512(d2l, _mm512_set1_epi64(M42 as i64)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::poly1305::Poly1305;

    /// The vector run against the scalar Poly1305: random keys and messages
    /// of 0–20,000 bytes (a scalar prefix, then whole 128-byte steps), and
    /// the extreme limbs: all-ones blocks with r at its clamped maximum.
    #[test]
    fn matches_scalar() {
        if !std::is_x86_feature_detected!("avx512ifma") {
            return;
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..300 {
            let key: [u8; 32] = if case % 3 == 0 {
                [0xff; 32]
            } else {
                core::array::from_fn(|_| next() as u8)
            };
            let len = (next() % 20_001) as usize / 16 * 16;
            let msg: Vec<u8> = (0..len)
                .map(|_| if case % 2 == 0 { 0xff } else { next() as u8 })
                .collect();
            let mut want = Poly1305::new(&key);
            want.blocks(&msg);
            let prefix = len % 128
                + if len >= 256 {
                    128 * (next() % 2) as usize
                } else {
                    0
                };
            let mut got = Poly1305::new(&key);
            got.blocks(&msg[..prefix]);
            let rest = &msg[prefix..];
            if !rest.is_empty() {
                let mut powers = super::Powers::new();
                got.ifma_powers(&mut powers);
                // SAFETY: the CPU has IFMA (checked above) and AVX-512F
                // (implied); each step reads 128 bytes within `rest`.
                unsafe {
                    let mut run = super::begin(&powers, got.h());
                    let steps = rest.len() / 128;
                    for i in 0..steps {
                        super::step(&mut run, &powers, rest[128 * i..].as_ptr(), i + 1 == steps);
                    }
                    got.set_h(super::end(&run));
                }
            }
            assert_eq!(got.finish(), want.finish(), "case {case}, len {len}");
        }
    }
}
