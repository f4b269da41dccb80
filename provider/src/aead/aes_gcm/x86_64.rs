//! What the x86-64 AES-GCM engines share: key setup (AES-NI key schedule,
//! GHASH key powers) and one stitched seal/open kernel, generic over the
//! register width ([`Lanes`]: one block per xmm for AES-NI, two per ymm and
//! four per zmm for VAES). Each backend instantiates the kernel inside its own
//! `#[target_feature]` entry points, so every helper here is
//! `#[inline(always)]` and compiles with the caller's features.
//!
//! GHASH works on byte-reflected blocks with the key pre-multiplied by
//! x⁻¹ ("twisted" H), so one carry-less product needs no bit shift and one
//! reduction is two CLMULs (Gueron's method, as in the Linux and BoringSSL
//! VAES code). Per key we store H¹…H³² highest first, each with its two
//! 64-bit halves XOR-ed for Karatsuba (three CLMULs per block).
//!
//! Data flow of one seal, one batch per iteration (`Lanes::REGS` registers:
//! 128 bytes on xmm and ymm, 512 on zmm): AES-CTR of batch i runs
//! interleaved with GHASH of batch i−1 (stored ciphertext), one reduction per
//! batch; then a half batch if that much is left; then the tail and the
//! length block with one more reduction. Open hashes the batch it decrypts.
//! Records under 128 bytes take a short path: E(J0) and all keystream
//! blocks in one AES pass, then AAD, ciphertext and length block in one
//! GHASH with one reduction.
//!
//! # Safety
//! Every `unsafe fn` here must only run on a CPU with AES-NI, PCLMULQDQ and
//! SSSE3 (plus what the [`Lanes`] type needs): the backends call them only
//! from `#[target_feature]` functions that key setup selected after
//! detection. Raw pointers are derived from whole slices (or whole arrays),
//! and every function taking one states the bytes it must be valid for in
//! its `# Safety` section; each `unsafe` block says why its accesses are in
//! bounds.
#![allow(unsafe_code)]

use core::arch::x86_64::*;
use core::marker::PhantomData;

use zeroize::Zeroize;

use crate::aead::{ct_eq, NONCE_LEN, TAG_LEN};

/// Stack scrubbed after a seal that hoisted its keys (`Lanes::HOIST_SEAL_FROM`):
/// the spills lay within 1.9 KiB of the call (`tests/stack_residue.rs`).
pub(super) const SCRUB_HOISTED: usize = 2560;

/// Records shorter than this take the short path.
const SHORT: usize = 128;

/// Scrubs the stack an entry point used after a record of `n` bytes that
/// ran batches (at least `SHORT`): from `top`, the caller's stack pointer,
/// down to `bottom`, the entry point's, as the ChaCha20 kernels do
/// (`scrub_below`). The batch loops spill AES states
/// between rounds (AES-128 states after rounds 3 and 5 on xmm and ymm at
/// opt-level 3, many on zmm at opt-level 2: `tests/stack_residue.rs`
/// searches every intermediate state), and with their public counter
/// blocks those are known inputs and outputs of reduced-round AES under
/// the key. The short path spills none.
#[inline(always)]
pub(super) fn scrub_batches(n: usize, top: usize, bottom: usize) {
    if n >= SHORT {
        crate::aead::secret::scrub_below(top, bottom);
    }
}
/// Most registers of AES state in one batch.
const MAX_REGS: usize = 8;

/// Opens of at least this many bytes of whole batches make the ymm
/// Karatsuba halves once per record (`open_batches`).
const HALVES_FROM: usize = 768;

/// Opens of at least this many bytes of whole batches hash with schoolbook
/// products where the lane type prefers them (`Lanes::KARATSUBA`).
const SCHOOLBOOK_OPEN_FROM: usize = 4096;

/// Per-key precomputation for lane type `V` and `NR` AES rounds, built once
/// in its final allocation; zeroized on drop.
///
/// `P` powers of H are kept: as many as one batch hashes (`V::BATCH`), so a
/// key costs only what its engine uses. `X` is `P` where the Karatsuba
/// halves (`lo ^ hi` of each power) are stored, or 0 where they are computed
/// from the power when loaded (one shuffle and one XOR per register), which
/// keeps a key of the ymm engine within the size of ring's.
/// `repr(C)` and 16-byte aligned: every entry is 16-byte aligned (the
/// fields are whole entries), which the wipe on drop relies on.
#[repr(C, align(16))]
pub(super) struct KeyData<V, const NR: usize, const P: usize, const X: usize> {
    /// AES round keys (`NR + 1` used: 11 for AES-128, 15 for AES-256).
    rk: [[u8; 16]; 15],
    /// Twisted H^P … H^1 (index `P - k` holds H^k).
    h: [[u8; 16]; P],
    /// The same powers with both halves `lo ^ hi`, for Karatsuba (if `X == P`).
    hx: [[u8; 16]; X],
    _lanes: PhantomData<V>,
}

impl<V, const NR: usize, const P: usize, const X: usize> Drop for KeyData<V, NR, P, X> {
    fn drop(&mut self) {
        wipe_blocks(&mut self.rk);
        wipe_blocks(&mut self.h);
        wipe_blocks(&mut self.hx);
    }
}

/// Zeroes `x` with one volatile 16-byte store per entry (`zeroize` writes
/// byte by byte, and a volatile write of the whole array goes through a
/// stack copy and `memcpy`: either made dropping a zmm key cost more than
/// building it). Every entry must be 16-byte aligned: `x` is a field of
/// [`KeyData`] or [`Aligned`] (checked in debug builds).
#[inline(always)]
fn wipe_blocks<const N: usize>(x: &mut [[u8; 16]; N]) {
    debug_assert!(
        x.as_ptr().cast::<__m128i>().is_aligned(),
        "16-byte aligned entries"
    );
    for entry in x.iter_mut() {
        // SAFETY: `entry` is a valid `&mut [u8; 16]`, 16 writable bytes, 16-byte aligned
        // (this fn's requirement: the containers are `repr(C, align(16))` of whole entries).
        unsafe {
            let p = core::ptr::from_mut(entry).cast::<__m128i>();
            core::ptr::write_volatile(p, _mm_setzero_si128());
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// One, two or four AES blocks in a vector register. Implemented by the
/// backends.
///
/// # Safety
/// Implementing: every method uses only instructions of the backend's
/// `#[target_feature]` list and touches memory only as its contract below
/// says. Calling: every method may only run where that backend's CPU
/// features are present (see the module docs); `loadu` and `broadcast`
/// need `p` valid for reads of `BLOCKS * 16` and 16 bytes, `storeu` for
/// writes of `BLOCKS * 16` bytes (any alignment).
pub(super) unsafe trait Lanes: Copy {
    /// Blocks per register.
    const BLOCKS: usize;
    /// Registers of AES state per main-loop batch (at most `MAX_REGS`).
    const REGS: usize;
    /// Blocks per batch: one GHASH reduction each.
    const BATCH: usize = Self::REGS * Self::BLOCKS;
    /// Seals of at least this many bytes keep round keys and hash powers
    /// in registers across batches, where the compiler spills some of them
    /// (`usize::MAX`: never). Otherwise each batch reloads them from the key
    /// at each use, which leaves nothing on the stack but costs the ymm
    /// engine 8–11 % at 8–16 KiB; there the spills cost less to scrub
    /// (`SCRUB_HOISTED` bytes after the call) than the reloads.
    const HOIST_SEAL_FROM: usize;
    /// GHASH products by Karatsuba (three carry-less multiplies a block,
    /// the halves' XOR made per use) or schoolbook (four, no halves): the
    /// zmm engine, whose XORs fuse three ways, measured faster schoolbook
    /// (docs/decisions.md, "GHASH products").
    const KARATSUBA: bool = true;
    unsafe fn loadu(p: *const u8) -> Self;
    unsafe fn storeu(self, p: *mut u8);
    /// The 16 bytes at `p` in every lane.
    unsafe fn broadcast(p: *const u8) -> Self;
    /// `x` in lane 0, zero elsewhere.
    unsafe fn from_first(x: __m128i) -> Self;
    /// Lane `i` holds `x + i` in its low dword (counters).
    unsafe fn counters(x: __m128i) -> Self;
    /// `k` added to the low dword of every lane.
    unsafe fn add_ctr(self, k: i32) -> Self;
    unsafe fn xor(self, b: Self) -> Self;
    unsafe fn aesenc(self, k: Self) -> Self;
    unsafe fn aesenclast(self, k: Self) -> Self;
    unsafe fn clmul_lo(self, b: Self) -> Self;
    unsafe fn clmul_hi(self, b: Self) -> Self;
    /// `self.lo · b.hi` per lane (imm 0x10), for schoolbook products.
    unsafe fn clmul_lo_hi(self, b: Self) -> Self;
    /// `self.hi · b.lo` per lane (imm 0x01), for schoolbook products.
    unsafe fn clmul_hi_lo(self, b: Self) -> Self;
    /// Reverses the bytes of each 128-bit lane.
    unsafe fn bswap(self) -> Self;
    /// Swaps the 64-bit halves of each lane.
    unsafe fn swap_halves(self) -> Self;
    /// XOR of all lanes.
    unsafe fn fold(self) -> __m128i;
    unsafe fn zero() -> Self;
}

/// One block per xmm register: the AES-NI lane type, also used by every
/// backend for single blocks.
// SAFETY: every method is one or two SSE2/SSSE3/AES-NI/PCLMULQDQ instructions on one xmm
// register (one block), and the pointer methods access exactly 16 bytes, as the trait requires.
unsafe impl Lanes for __m128i {
    const BLOCKS: usize = 1;
    const REGS: usize = 8;
    const HOIST_SEAL_FROM: usize = usize::MAX;
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
        unsafe { bswap128(self) }
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

#[inline(always)]
unsafe fn bswap128(x: __m128i) -> __m128i {
    // SAFETY: register-only intrinsics; the CPU has SSSE3 (module contract).
    unsafe {
        _mm_shuffle_epi8(
            x,
            _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        )
    }
}

#[inline(always)]
unsafe fn load128(b: &[u8; 16]) -> __m128i {
    // SAFETY: an unaligned 16-byte load from a `&[u8; 16]`; SSE2 is baseline.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

/// x⁶³ + x⁶² + x⁵⁷ in the high qword: the reflected GCM polynomial's tail.
#[inline(always)]
unsafe fn gfpoly() -> __m128i {
    // SAFETY: register-only intrinsic (SSE2, baseline).
    unsafe { _mm_set_epi64x(0xc200_0000_0000_0000u64 as i64, 1) }
}

/// Reduces the 256-bit product `hi·x¹²⁸ + mi·x⁶⁴ + lo` to 128 bits.
#[inline(always)]
unsafe fn reduce(lo: __m128i, mi: __m128i, hi: __m128i) -> __m128i {
    // SAFETY: register-only intrinsics; the CPU has PCLMULQDQ (module contract).
    unsafe {
        let poly = gfpoly();
        let t0 = _mm_clmulepi64_si128(poly, lo, 0x01);
        let mi = _mm_xor_si128(_mm_xor_si128(mi, _mm_shuffle_epi32(lo, 0x4e)), t0);
        let t1 = _mm_clmulepi64_si128(poly, mi, 0x01);
        _mm_xor_si128(_mm_xor_si128(hi, _mm_shuffle_epi32(mi, 0x4e)), t1)
    }
}

/// Unreduced Karatsuba products, accumulated over several blocks.
#[derive(Clone, Copy)]
struct Acc<V> {
    lo: V,
    mi: V,
    hi: V,
    /// Schoolbook products (`mi` is the middle term itself) rather than
    /// Karatsuba's (`mi` still holds `lo ^ hi`): constant after inlining.
    schoolbook: bool,
}

impl<V: Lanes> Acc<V> {
    /// Karatsuba products.
    #[inline(always)]
    unsafe fn new() -> Self {
        // SAFETY: the CPU has `V`'s features (module contract); no memory access.
        unsafe {
            Self {
                lo: V::zero(),
                mi: V::zero(),
                hi: V::zero(),
                schoolbook: false,
            }
        }
    }

    /// For a batch of `regs` registers: schoolbook in the full batches of
    /// a lane type that is not `KARATSUBA`, where the caller allows it
    /// (docs/decisions.md, "GHASH products"); Karatsuba elsewhere.
    #[inline(always)]
    unsafe fn for_batch(regs: usize, allow: bool) -> Self {
        // SAFETY: as `new`.
        unsafe {
            Self {
                schoolbook: allow && !V::KARATSUBA && regs == V::REGS,
                ..Self::new()
            }
        }
    }

    /// Adds `d · h` (`hx`: h's halves XOR-ed).
    #[inline(always)]
    unsafe fn mul_add(&mut self, d: V, h: V, hx: V) {
        // SAFETY: the CPU has `V`'s features (module contract); register-only `Lanes` methods.
        unsafe {
            self.lo = self.lo.xor(d.clmul_lo(h));
            self.hi = self.hi.xor(d.clmul_hi(h));
            if self.schoolbook {
                self.mi = self.mi.xor(d.clmul_lo_hi(h)).xor(d.clmul_hi_lo(h));
            } else {
                self.mi = self.mi.xor(d.xor(d.swap_halves()).clmul_lo(hx));
            }
        }
    }

    /// Folds lanes and reduces.
    #[inline(always)]
    unsafe fn finish(self) -> __m128i {
        // SAFETY: the CPU has PCLMULQDQ and `V`'s features (module contract); register-only.
        unsafe {
            let (lo, mi, hi) = (self.lo.fold(), self.mi.fold(), self.hi.fold());
            if self.schoolbook {
                reduce(lo, mi, hi)
            } else {
                reduce(lo, _mm_xor_si128(mi, _mm_xor_si128(lo, hi)), hi)
            }
        }
    }
}

/// Defines a backend's key type (which exists only where `$detected`
/// holds) and its `#[target_feature]` entry points, instantiating the
/// kernel with lane type `$lanes`, `$powers` powers of H per key and `$hx`
/// stored Karatsuba halves (`$powers` or 0; see [`KeyData`]).
macro_rules! x86_backend {
    (
        features = $features:literal,
        lanes = $lanes:ty,
        powers = $powers:literal,
        hx = $hx:literal,
        detected = $detected:ident
    ) => {
        type KeyData<const NR: usize> =
            $crate::aead::aes_gcm::x86_64::KeyData<$lanes, NR, $powers, $hx>;

        /// An AES-GCM key on this backend; `NR` is the number of AES rounds
        /// (10 for 16-byte keys, 14 for 32-byte keys).
        pub(crate) struct Key<const NR: usize>(Box<KeyData<NR>>);

        impl<const NR: usize> Key<NR> {
            /// `None` unless this CPU has the backend's features.
            ///
            /// # Panics
            /// If `key` is not the length `NR` implies.
            pub(crate) fn new(
                key: &[u8],
                stack: &mut $crate::aead::secret::SetupStack,
            ) -> Option<Self> {
                assert_eq!(key.len(), if NR == 10 { 16 } else { 32 }, "AES key length");
                if !$crate::cpu::Features::get().$detected {
                    return None;
                }
                let mut data = KeyData::<NR>::uninit();
                // SAFETY: a `Key` is made only where `new` detected the
                // features; the key length was checked above. `expand`
                // writes every field, so `data` is initialised after it.
                unsafe {
                    expand(&mut data, key, stack);
                    Some(Self(data.assume_init()))
                }
            }

            pub(crate) fn seal(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                src: &[u8],
                buf: &mut [u8],
            ) -> [u8; $crate::aead::TAG_LEN] {
                let hoisted =
                    buf.len() >= <$lanes as $crate::aead::aes_gcm::x86_64::Lanes>::HOIST_SEAL_FROM;
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: a `Key` exists only where `new` detected the features.
                let (tag, bottom) = unsafe { seal(&self.0, nonce, aad, src, buf) };
                if hoisted {
                    $crate::aead::secret::scrub_stack::<
                        { $crate::aead::aes_gcm::x86_64::SCRUB_HOISTED },
                    >();
                } else {
                    $crate::aead::aes_gcm::x86_64::scrub_batches(buf.len(), top, bottom);
                }
                tag
            }

            pub(crate) fn open(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; $crate::aead::TAG_LEN],
            ) -> Result<(), $crate::aead::OpenError> {
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`.
                let (ok, bottom) = unsafe { open(&self.0, nonce, aad, buf, tag) };
                $crate::aead::aes_gcm::x86_64::scrub_batches(buf.len(), top, bottom);
                ok.then_some(()).ok_or($crate::aead::OpenError)
            }

            /// Seals in place and encrypts the 16 bytes at `at` of
            /// ciphertext ‖ tag under `rk` in the same call.
            ///
            /// # Panics
            /// If `at + 16` is beyond ciphertext ‖ tag.
            pub(crate) fn seal_with_block(
                &self,
                nonce: &[u8; $crate::aead::NONCE_LEN],
                aad: &[u8],
                buf: &mut [u8],
                rk: &$crate::aead::aes_gcm::x86_64::RoundKeys<NR>,
                at: usize,
            ) -> ([u8; $crate::aead::TAG_LEN], [u8; 16]) {
                assert!(
                    at.checked_add(16)
                        .is_some_and(|end| end <= buf.len() + $crate::aead::TAG_LEN),
                    "block beyond the tag"
                );
                let extra = $crate::aead::aes_gcm::x86_64::Extra { rk: rk.keys(), at };
                let hoisted =
                    buf.len() >= <$lanes as $crate::aead::aes_gcm::x86_64::Lanes>::HOIST_SEAL_FROM;
                let top = $crate::aead::secret::stack_pointer();
                // SAFETY: as for `seal`.
                let (out, bottom) = unsafe { seal_with_block(&self.0, nonce, aad, buf, extra) };
                if hoisted {
                    $crate::aead::secret::scrub_stack::<
                        { $crate::aead::aes_gcm::x86_64::SCRUB_HOISTED },
                    >();
                } else {
                    $crate::aead::aes_gcm::x86_64::scrub_batches(buf.len(), top, bottom);
                }
                out
            }

            /// Seals from an arbitrary pre-counter block J0 (tests only).
            #[cfg(test)]
            pub(crate) fn seal_with_j0(
                &self,
                j0: &[u8; 16],
                aad: &[u8],
                buf: &mut [u8],
            ) -> [u8; $crate::aead::TAG_LEN] {
                // SAFETY: as for `seal`.
                unsafe { seal_with_j0(&self.0, j0, aad, buf) }
            }
        }

        /// The key setup with this backend's features (its lanes compute
        /// the hash-key powers); marks its frame in `stack`.
        #[target_feature(enable = $features)]
        unsafe fn expand<const NR: usize>(
            data: &mut core::mem::MaybeUninit<KeyData<NR>>,
            key: &[u8],
            stack: &mut $crate::aead::secret::SetupStack,
        ) {
            // SAFETY: this entry point enables the backend's features, which include
            // `expand`'s (AES-NI, PCLMULQDQ, SSSE3 and the lane type's), and it is
            // reached only through `Key::new` after detection, which checked the key length.
            unsafe { $crate::aead::aes_gcm::x86_64::expand(data, key, stack) }
        }

        #[target_feature(enable = $features)]
        unsafe fn seal<const NR: usize>(
            key: &KeyData<NR>,
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            src: &[u8],
            buf: &mut [u8],
        ) -> ([u8; $crate::aead::TAG_LEN], usize) {
            // This frame's bottom, for the scrub after the call.
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: this entry point enables the backend's features, which include
            // the kernel's (AES-NI, PCLMULQDQ, SSSE3 and the lane type's), and it is
            // reached only through a `Key`, which exists only after detection.
            let tag = unsafe { $crate::aead::aes_gcm::x86_64::seal(key, nonce, aad, src, buf) };
            (tag, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn open<const NR: usize>(
            key: &KeyData<NR>,
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            buf: &mut [u8],
            tag: &[u8; $crate::aead::TAG_LEN],
        ) -> (bool, usize) {
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`.
            let ok = unsafe { $crate::aead::aes_gcm::x86_64::open(key, nonce, aad, buf, tag) };
            (ok, bottom)
        }

        #[target_feature(enable = $features)]
        unsafe fn seal_with_block<const NR: usize>(
            key: &KeyData<NR>,
            nonce: &[u8; $crate::aead::NONCE_LEN],
            aad: &[u8],
            buf: &mut [u8],
            extra: $crate::aead::aes_gcm::x86_64::Extra<'_>,
        ) -> (([u8; $crate::aead::TAG_LEN], [u8; 16]), usize) {
            let bottom = $crate::aead::secret::stack_pointer();
            // SAFETY: as for `seal`.
            let out = unsafe {
                $crate::aead::aes_gcm::x86_64::seal_with_block(key, nonce, aad, buf, extra)
            };
            (out, bottom)
        }

        #[cfg(test)]
        #[target_feature(enable = $features)]
        unsafe fn seal_with_j0<const NR: usize>(
            key: &KeyData<NR>,
            j0: &[u8; 16],
            aad: &[u8],
            buf: &mut [u8],
        ) -> [u8; $crate::aead::TAG_LEN] {
            // SAFETY: as for `seal`.
            unsafe { $crate::aead::aes_gcm::x86_64::seal_with_j0(key, j0, aad, buf) }
        }
    };
}
pub(super) use x86_backend;

/// Expands `key` (16 or 32 bytes, as `NR` says) into `data` in place and
/// precomputes the GHASH powers, writing every field of `data` (round keys
/// past `NR` as zeros); every temporary that held key material is
/// wiped before returning, and this frame (the setup's deepest) is marked
/// in `stack` for the scrub after it.
///
/// The powers are a doubling: H¹ … H^B serially (B = `V::BLOCKS`), then
/// each step multiplies every register of powers so far by the highest of
/// them, so the chain is 3 + log₂(P / B) products deep (6 for the zmm
/// engine's 32 powers, not 31).
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ, SSSE3 and `V`'s features, the
/// caller must enable them, and `key.len()` must be 16 if `NR == 10`, else
/// 32.
#[inline(always)]
pub(super) unsafe fn expand<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    data: &mut core::mem::MaybeUninit<KeyData<V, NR, P, X>>,
    key: &[u8],
    stack: &mut crate::aead::secret::SetupStack,
) {
    const {
        assert!(
            P.is_multiple_of(V::BLOCKS) && (P / V::BLOCKS).is_power_of_two(),
            "the doubling reaches P exactly"
        );
        assert!(matches!(V::BLOCKS, 1 | 2 | 4), "H¹ … H^B below");
    }
    stack.mark();
    // SAFETY: the CPU has AES-NI, PCLMULQDQ, SSSE3 and `V`'s features, enabled by the caller
    // (this fn's contract). `rk`, `h` and `hx` point to the fields of `data` (no reference to
    // uninitialised memory is made); every store writes one whole 16-byte entry of one (index
    // below its length: 15, `P`, `X`), every `V` load and store spans `V::BLOCKS` entries of
    // `h` starting at most at `P - V::BLOCKS`, and every load reads an entry written before
    // it. `expand_key` checks the key length.
    unsafe {
        let out = data.as_mut_ptr();
        let rk_out = core::ptr::addr_of_mut!((*out).rk).cast::<u8>();
        let base = core::ptr::addr_of_mut!((*out).h).cast::<u8>();
        let hx_out = core::ptr::addr_of_mut!((*out).hx).cast::<u8>();
        let mut rk = expand_key(key);
        for (i, k) in rk.iter().enumerate() {
            _mm_storeu_si128(rk_out.add(16 * i).cast(), *k);
        }
        // H = E(K, 0), byte-reflected, then multiplied by x⁻¹ (a 1-bit left
        // shift in this representation, reduced by the polynomial).
        let mut h = [0u8; 16];
        _mm_storeu_si128(
            h.as_mut_ptr().cast(),
            encrypt_block(&rk[..=NR], _mm_setzero_si128()),
        );
        let mut v = u128::from_be_bytes(h);
        let carry = (v >> 127).wrapping_neg();
        let mut twisted =
            ((v << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001)).to_le_bytes();
        let h1 = _mm_loadu_si128(twisted.as_ptr().cast());
        // Entry `P - k` holds H^k. H² and H⁴ are two products deep.
        let entry = |k: usize| base.add(16 * (P - k)).cast::<__m128i>();
        _mm_storeu_si128(entry(1), h1);
        let mut power = h1;
        if V::BLOCKS >= 2 {
            power = gf_mul(h1, h1);
            _mm_storeu_si128(entry(2), power);
        }
        if V::BLOCKS == 4 {
            _mm_storeu_si128(entry(3), gf_mul(power, h1));
            power = gf_mul(power, power);
            _mm_storeu_si128(entry(4), power);
        }
        let mut have = V::BLOCKS;
        while have < P {
            let step = V::broadcast(base.add(16 * (P - have)));
            for top in (V::BLOCKS..=have).step_by(V::BLOCKS) {
                let x = V::loadu(base.add(16 * (P - top)));
                mul_lanes(x, step).storeu(base.add(16 * (P - top - have)));
            }
            have *= 2;
        }
        if X == P {
            for i in 0..P {
                let p = _mm_loadu_si128(base.add(16 * i).cast());
                let halves = _mm_xor_si128(p, _mm_shuffle_epi32(p, 0x4e));
                _mm_storeu_si128(hx_out.add(16 * i).cast(), halves);
            }
        }
        // The round keys (the first is the raw key), H and its last power.
        wipe(&mut rk);
        h.zeroize();
        twisted.zeroize();
        v = 0;
        core::hint::black_box(v);
        let mut last = [power, h1];
        wipe(&mut last);
    }
}

/// `a · b` in GF(2¹²⁸) in every lane (twisted operands, as [`gf_mul`]).
#[inline(always)]
unsafe fn mul_lanes<V: Lanes>(a: V, b: V) -> V {
    /// [`gfpoly`] as bytes, for a broadcast.
    const POLY: [u8; 16] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc2];
    // SAFETY: register-only `Lanes` methods, and a 16-byte broadcast of `POLY`; the CPU has
    // `V`'s features (caller's contract).
    unsafe {
        let lo = a.clmul_lo(b);
        let hi = a.clmul_hi(b);
        let mi = a.clmul_lo_hi(b).xor(a.clmul_hi_lo(b));
        // The reduction of `reduce`, lane by lane.
        let poly = V::broadcast(POLY.as_ptr());
        let mi = mi.xor(lo.swap_halves()).xor(poly.clmul_hi_lo(lo));
        hi.xor(mi.swap_halves()).xor(poly.clmul_hi_lo(mi))
    }
}

/// AES round keys on their own (AES-ECB, and the extra block of
/// `seal_with_block`); zeroized on drop.
pub(crate) struct RoundKeys<const NR: usize>(Box<Aligned<15>>);

/// Entries 16-byte aligned, for the wipe on drop.
#[repr(C, align(16))]
struct Aligned<const N: usize>([[u8; 16]; N]);

impl<const NR: usize> RoundKeys<NR> {
    /// `None` unless this CPU has AES-NI (with SSSE3 and PCLMULQDQ: the
    /// AES-GCM engines' baseline).
    ///
    /// # Panics
    /// If `key` is not the length `NR` implies.
    pub(crate) fn new(key: &[u8], stack: &mut crate::aead::secret::SetupStack) -> Option<Self> {
        assert_eq!(key.len(), if NR == 10 { 16 } else { 32 }, "AES key length");
        if !crate::cpu::Features::get().aes_clmul {
            return None;
        }
        // Uninitialised (`malloc`, not `calloc`): `expand_round_keys` writes it all.
        let mut rk = Box::<Aligned<15>>::new_uninit();
        // SAFETY: AES-NI was detected and the key length checked; `expand_round_keys` writes
        // all 15 entries, so `rk` is initialised after it.
        unsafe {
            expand_round_keys(rk.as_mut_ptr().cast(), key, stack);
            Some(Self(rk.assume_init()))
        }
    }

    pub(crate) fn keys(&self) -> &[[u8; 16]; 15] {
        &self.0 .0
    }

    /// The first `B` bytes of the AES (ECB) encryption of each input,
    /// eight blocks in flight; one block takes a path of its own.
    ///
    /// # Panics
    /// If the lengths differ, or `B > 16`.
    pub(crate) fn encrypt_prefix<const B: usize>(&self, inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
        assert!(inputs.len() == out.len() && B <= 16, "one output per input");
        // SAFETY: a `RoundKeys` exists only where `new` detected AES-NI.
        unsafe { ecb::<NR, B>(&self.0 .0, inputs, out) }
    }
}

impl<const NR: usize> Drop for RoundKeys<NR> {
    fn drop(&mut self) {
        wipe_blocks(&mut self.0 .0);
    }
}

/// Writes all 15 entries of `out` (past `NR + 1`, zeros).
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ and SSSE3 (the features enabled
/// here); `out` must be valid for writes of the array; `key` must be 16 or
/// 32 bytes (checked).
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn expand_round_keys(
    out: *mut [[u8; 16]; 15],
    key: &[u8],
    stack: &mut crate::aead::secret::SetupStack,
) {
    stack.mark();
    // SAFETY: AES-NI and SSSE3 are enabled on this fn (its contract); `out` is valid for
    // writes of the whole array (contract) and each store writes one of its 15 entries;
    // `expand_key` checks the key length.
    unsafe {
        let mut rk = expand_key(key);
        for (i, k) in rk.iter().enumerate() {
            _mm_storeu_si128(out.cast::<u8>().add(16 * i).cast(), *k);
        }
        wipe(&mut rk);
    }
}

/// The first `B` bytes of AES-ECB of each input, up to eight blocks in
/// flight (a lone block is encrypted alone). The full blocks exist only in
/// registers and one 16-byte stack slot, wiped before returning.
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ and SSSE3 (the features enabled
/// here); `out.len() == inputs.len()` and `B <= 16`.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn ecb<const NR: usize, const B: usize>(
    rk: &[[u8; 16]; 15],
    inputs: &[[u8; 16]],
    out: &mut [[u8; B]],
) {
    // SAFETY: AES-NI is enabled on this fn (its contract); every load reads one whole `[u8;
    // 16]` (an input or a round key), every store writes the 16-byte `block`, and the volatile
    // write targets `block` itself.
    unsafe {
        let mut block = [0u8; 16];
        if let ([input], [o]) = (inputs, &mut *out) {
            let mut x = _mm_xor_si128(_mm_loadu_si128(input.as_ptr().cast()), load128(&rk[0]));
            for k in &rk[1..NR] {
                x = _mm_aesenc_si128(x, load128(k));
            }
            _mm_storeu_si128(
                block.as_mut_ptr().cast(),
                _mm_aesenclast_si128(x, load128(&rk[NR])),
            );
            o.copy_from_slice(&block[..B]);
        } else {
            for (chunk, outs) in inputs.chunks(8).zip(out.chunks_mut(8)) {
                let mut x = [_mm_setzero_si128(); 8];
                for (v, b) in x.iter_mut().zip(chunk) {
                    *v = _mm_xor_si128(_mm_loadu_si128(b.as_ptr().cast()), load128(&rk[0]));
                }
                for k in &rk[1..NR] {
                    let k = load128(k);
                    for v in x.iter_mut() {
                        *v = _mm_aesenc_si128(*v, k);
                    }
                }
                let last = load128(&rk[NR]);
                for (v, o) in x.iter().zip(outs.iter_mut()) {
                    _mm_storeu_si128(block.as_mut_ptr().cast(), _mm_aesenclast_si128(*v, last));
                    o.copy_from_slice(&block[..B]);
                }
                wipe(&mut x);
            }
        }
        core::ptr::write_volatile(&mut block, [0; 16]);
    }
}

/// Zeroes vector temporaries with volatile writes, so the wipe is not
/// optimised away.
/// `ks[i]`, read back from memory (not a register copy kept alive since it
/// was written), then all of `ks` wiped.
#[inline(always)]
unsafe fn take_and_wipe<const N: usize>(ks: &mut [__m128i; N], i: usize) -> __m128i {
    // SAFETY: `wipe` only writes whole elements of `ks` (volatile stores of a zero vector); `i`
    // indexes `ks` with a bounds check.
    unsafe {
        let x = core::hint::black_box(&mut *ks)[i];
        wipe(ks);
        x
    }
}

#[inline(always)]
unsafe fn wipe<const N: usize>(x: &mut [__m128i; N]) {
    // SAFETY: each volatile write targets one element of `x`, a valid `&mut`.
    unsafe {
        for v in x.iter_mut() {
            core::ptr::write_volatile(v, _mm_setzero_si128());
        }
    }
}

impl<V: Lanes, const NR: usize, const P: usize, const X: usize> KeyData<V, NR, P, X> {
    /// Uninitialised, boxed (`malloc`, not the slower `calloc` a zeroed
    /// box costs): `expand` then fills it in place.
    pub(super) fn uninit() -> Box<core::mem::MaybeUninit<Self>> {
        const {
            assert!(NR == 10 || NR == 14);
            assert!(
                P >= V::BATCH,
                "a batch hashes V::BATCH blocks with one reduction"
            );
            assert!(X == P || X == 0);
            assert!(
                V::REGS <= MAX_REGS,
                "a batch's registers fit the state array"
            );
        }
        Box::new_uninit()
    }

    /// H^k (and its Karatsuba halves) for the `W::BLOCKS` lanes of a `W`:
    /// lane `i` holds H^(k - i).
    ///
    /// # Safety
    /// The CPU has `W`'s features.
    ///
    /// # Panics
    /// Unless `W::BLOCKS <= k <= P` (constant after inlining: no cost).
    #[inline(always)]
    unsafe fn power<W: Lanes>(&self, k: usize) -> (W, W) {
        // SAFETY: `W::loadu` reads `W::BLOCKS * 16` bytes from entry `P - k` on: with `k >=
        // W::BLOCKS` (asserted) that is within `h` (and `hx` when `X == P`), and the pointers
        // derive from the whole arrays; the CPU has `W`'s features (this fn's contract).
        unsafe {
            assert!(k >= W::BLOCKS && k <= P, "a power of H this key holds");
            let i = P - k;
            // Pointers from the whole arrays: a `W` spans `W::BLOCKS` entries.
            let h = W::loadu(self.h.as_ptr().cast::<u8>().add(16 * i));
            let hx = if X == P {
                W::loadu(self.hx.as_ptr().cast::<u8>().add(16 * i))
            } else {
                h.xor(h.swap_halves())
            };
            (h, hx)
        }
    }
}

/// One full multiplication in GF(2¹²⁸) (twisted operand `b`).
#[inline(always)]
unsafe fn gf_mul(a: __m128i, b: __m128i) -> __m128i {
    // SAFETY: register-only intrinsics; the CPU has PCLMULQDQ (module contract).
    unsafe {
        let lo = _mm_clmulepi64_si128(a, b, 0x00);
        let hi = _mm_clmulepi64_si128(a, b, 0x11);
        let mi = _mm_xor_si128(
            _mm_clmulepi64_si128(a, b, 0x01),
            _mm_clmulepi64_si128(a, b, 0x10),
        );
        reduce(lo, mi, hi)
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

/// The AES key schedule with AESKEYGENASSIST.
#[inline(always)]
unsafe fn expand_key(key: &[u8]) -> [__m128i; 15] {
    // SAFETY: the CPU has AES-NI (module contract); the assert bounds the loads: 16 bytes at 0
    // and, for a 32-byte key, 16 at 16.
    unsafe {
        assert!(key.len() == 16 || key.len() == 32, "AES key length");
        let mut rk = [_mm_setzero_si128(); 15];
        rk[0] = _mm_loadu_si128(key.as_ptr().cast());
        if key.len() == 16 {
            macro_rules! round {
                ($i:literal, $rcon:literal) => {
                    rk[$i] = expand_step!(
                        rk[$i - 1],
                        _mm_aeskeygenassist_si128(rk[$i - 1], $rcon),
                        0xff
                    );
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
        } else {
            rk[1] = _mm_loadu_si128(key[16..].as_ptr().cast());
            macro_rules! round {
                ($i:literal, $rcon:literal) => {
                    rk[$i] = expand_step!(
                        rk[$i - 2],
                        _mm_aeskeygenassist_si128(rk[$i - 1], $rcon),
                        0xff
                    );
                };
                ($i:literal, $rcon:literal, odd) => {
                    round!($i, $rcon);
                    rk[$i + 1] =
                        expand_step!(rk[$i - 1], _mm_aeskeygenassist_si128(rk[$i], 0), 0xaa);
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
        rk
    }
}

#[inline(always)]
unsafe fn encrypt_block(rk: &[__m128i], x: __m128i) -> __m128i {
    // SAFETY: register-only AES-NI intrinsics (module contract); `rk` is indexed with bounds
    // checks.
    unsafe {
        let mut x = _mm_xor_si128(x, rk[0]);
        for k in &rk[1..rk.len() - 1] {
            x = _mm_aesenc_si128(x, *k);
        }
        _mm_aesenclast_si128(x, rk[rk.len() - 1])
    }
}

/// `N` AES blocks side by side (xmm), for short records and tails.
#[inline(always)]
unsafe fn encrypt_blocks<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const N: usize,
>(
    key: &KeyData<V, NR, P, X>,
    x: &mut [__m128i; N],
) {
    // SAFETY: register-only AES-NI intrinsics (module contract); round keys loaded from whole
    // `[u8; 16]` entries.
    unsafe {
        // Each round key is loaded where it is used, through an opaque
        // pointer: loaded up front, the AES-256 keys of a 9-block pass did not
        // fit in the registers and were spilled (the stack-residue test).
        macro_rules! rk {
            ($r:expr) => {
                load128(&core::hint::black_box(&key.rk)[$r])
            };
        }
        let k0 = rk!(0);
        for b in x.iter_mut() {
            *b = _mm_xor_si128(*b, k0);
        }
        for r in 1..NR {
            let k = rk!(r);
            for b in x.iter_mut() {
                *b = _mm_aesenc_si128(*b, k);
            }
        }
        let k = rk!(NR);
        for b in x.iter_mut() {
            *b = _mm_aesenclast_si128(*b, k);
        }
    }
}

/// Counter blocks `ctr + 0 … ctr + n-1` (little-endian view) encrypted into
/// `out[..n]`, at most 9 side by side.
#[inline(always)]
unsafe fn keystream<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    ctr: __m128i,
    n: usize,
    out: &mut [__m128i],
) {
    // SAFETY: register-only intrinsics (module contract); `out` is sliced with bounds checks.
    unsafe {
        let mut done = 0;
        while done < n {
            let base = _mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, done as i32));
            let out = &mut out[done..];
            macro_rules! run {
                ($n:literal) => {{
                    let mut x = [_mm_setzero_si128(); $n];
                    for (i, b) in x.iter_mut().enumerate() {
                        *b = bswap128(_mm_add_epi32(base, _mm_set_epi32(0, 0, 0, i as i32)));
                    }
                    encrypt_blocks(key, &mut x);
                    out[..$n].copy_from_slice(&x);
                    wipe(&mut x);
                    $n
                }};
            }
            done += match n - done {
                1 => run!(1),
                2 => run!(2),
                3 => run!(3),
                4 => run!(4),
                5 => run!(5),
                6 => run!(6),
                7 => run!(7),
                8 => run!(8),
                _ => run!(9),
            };
        }
    }
}

/// `encrypt_blocks` with one more block, `y`, encrypted alongside under
/// other round keys `rk2` (same round count): it costs one more `aesenc`
/// per round in a pass that runs anyway (picotls's "supplementary" slot).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // two arrays indexed by round
unsafe fn encrypt_blocks_plus<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const N: usize,
>(
    key: &KeyData<V, NR, P, X>,
    x: &mut [__m128i; N],
    rk2: &[[u8; 16]; 15],
    y: &mut __m128i,
) {
    // SAFETY: register-only AES-NI intrinsics (module contract); round keys loaded from whole
    // `[u8; 16]` entries.
    unsafe {
        let k0 = load128(&key.rk[0]);
        for b in x.iter_mut() {
            *b = _mm_xor_si128(*b, k0);
        }
        *y = _mm_xor_si128(*y, load128(&rk2[0]));
        for r in 1..NR {
            let k = load128(&key.rk[r]);
            for b in x.iter_mut() {
                *b = _mm_aesenc_si128(*b, k);
            }
            *y = _mm_aesenc_si128(*y, load128(&rk2[r]));
        }
        let k = load128(&key.rk[NR]);
        for b in x.iter_mut() {
            *b = _mm_aesenclast_si128(*b, k);
        }
        *y = _mm_aesenclast_si128(*y, load128(&rk2[NR]));
    }
}

/// `keystream` for `n ≥ 1` blocks, with `y` encrypted under `rk2` in the
/// first pass.
#[inline(always)]
unsafe fn keystream_plus<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    ctr: __m128i,
    n: usize,
    out: &mut [__m128i],
    rk2: &[[u8; 16]; 15],
    y: &mut __m128i,
) {
    // SAFETY: register-only intrinsics (module contract); `out` is sliced with bounds checks.
    unsafe {
        debug_assert!(n >= 1);
        let first = n.min(9);
        macro_rules! run {
            ($n:literal) => {{
                let mut x = [_mm_setzero_si128(); $n];
                for (i, b) in x.iter_mut().enumerate() {
                    *b = bswap128(_mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, i as i32)));
                }
                encrypt_blocks_plus(key, &mut x, rk2, y);
                out[..$n].copy_from_slice(&x);
                wipe(&mut x);
            }};
        }
        match first {
            1 => run!(1),
            2 => run!(2),
            3 => run!(3),
            4 => run!(4),
            5 => run!(5),
            6 => run!(6),
            7 => run!(7),
            8 => run!(8),
            _ => run!(9),
        }
        if n > first {
            let rest = _mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, first as i32));
            keystream(key, rest, n - first, &mut out[first..]);
        }
    }
}

/// GHASH of byte-reflected blocks, one reduction per `P` blocks:
/// `(acc ⊕ b₀)·Hᵐ ⊕ b₁·Hᵐ⁻¹ ⊕ … ⊕ bₘ₋₁·H` for each run of `m ≤ P`.
#[inline(always)]
unsafe fn ghash_blocks<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    mut acc: __m128i,
    blocks: &[__m128i],
) -> __m128i {
    // SAFETY: the CPU has PCLMULQDQ (module contract); `power(m - i)` with `1 <= m - i <= P`.
    unsafe {
        for run in blocks.chunks(P) {
            let m = run.len();
            let mut sum = Acc::<__m128i>::new();
            for (i, &b) in run.iter().enumerate() {
                let d = if i == 0 { _mm_xor_si128(b, acc) } else { b };
                let (h, hx) = key.power::<__m128i>(m - i);
                sum.mul_add(d, h, hx);
            }
            acc = sum.finish();
        }
        acc
    }
}

/// GHASH of arbitrary bytes (zero-padded to whole blocks).
#[inline(always)]
unsafe fn ghash_bytes<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    mut acc: __m128i,
    data: &[u8],
) -> __m128i {
    // SAFETY: the CPU has PCLMULQDQ and SSSE3 (module contract); `load_partial` bounds its own
    // loads.
    unsafe {
        for chunk in data.chunks(16 * 16) {
            let mut blocks = [_mm_setzero_si128(); 16];
            let n = chunk.len().div_ceil(16);
            for (b, bytes) in blocks.iter_mut().zip(chunk.chunks(16)) {
                *b = bswap128(load_partial(bytes));
            }
            acc = ghash_blocks(key, acc, &blocks[..n]);
        }
        acc
    }
}

/// Up to 16 bytes, zero-padded. Partial blocks move in 8-, 4-, 2- and
/// 1-byte pieces through general registers: no stack staging of plaintext,
/// and no `memcpy` call (a call clobbers every vector register, so the
/// keystream block was spilled around it and left on the stack).
#[inline(always)]
unsafe fn load_partial(bytes: &[u8]) -> __m128i {
    // SAFETY: the 16-byte load runs only when `bytes` has at least 16 bytes.
    unsafe {
        if bytes.len() >= 16 {
            return _mm_loadu_si128(bytes.as_ptr().cast());
        }
        let v = read_le(bytes);
        _mm_set_epi64x((v >> 64) as i64, v as i64)
    }
}

/// Writes the first `dst.len()` (at most 16) bytes of `x` to `dst`.
#[inline(always)]
unsafe fn store_partial(x: __m128i, dst: &mut [u8]) {
    // SAFETY: the 16-byte store runs only when `dst` has at least 16 bytes.
    unsafe {
        if dst.len() >= 16 {
            return _mm_storeu_si128(dst.as_mut_ptr().cast(), x);
        }
        let lo = _mm_cvtsi128_si64(x) as u64;
        let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
        write_le(u128::from(lo) | (u128::from(hi) << 64), dst);
    }
}

/// `bytes` (under 16) as a little-endian number, read in power-of-two
/// pieces (the length is public).
#[inline(always)]
fn read_le(bytes: &[u8]) -> u128 {
    let mut v = 0u128;
    let mut at = 0;
    macro_rules! piece {
        ($t:ty, $n:literal) => {
            if bytes.len() & $n != 0 {
                let p = <$t>::from_le_bytes(bytes[at..at + $n].try_into().expect("piece"));
                v |= u128::from(p) << (8 * at);
                at += $n;
            }
        };
    }
    piece!(u64, 8);
    piece!(u32, 4);
    piece!(u16, 2);
    piece!(u8, 1);
    let _ = at;
    v
}

/// The low `dst.len()` (under 16) bytes of `v` into `dst`, in power-of-two
/// pieces.
#[inline(always)]
fn write_le(v: u128, dst: &mut [u8]) {
    let n = dst.len();
    let mut at = 0;
    macro_rules! piece {
        ($t:ty, $n:literal) => {
            if n & $n != 0 {
                dst[at..at + $n].copy_from_slice(&((v >> (8 * at)) as $t).to_le_bytes());
                at += $n;
            }
        };
    }
    piece!(u64, 8);
    piece!(u32, 4);
    piece!(u16, 2);
    piece!(u8, 1);
    let _ = at;
}

/// The GHASH length block, byte-reflected.
#[inline(always)]
unsafe fn lengths_block(aad_len: usize, text_len: usize) -> __m128i {
    // SAFETY: register-only intrinsic (SSE2, baseline).
    unsafe { _mm_set_epi64x((aad_len as u64 * 8) as i64, (text_len as u64 * 8) as i64) }
}

/// J0 = nonce ‖ 1, little-endian view (counter in the low dword).
#[inline(always)]
unsafe fn j0(nonce: &[u8; NONCE_LEN]) -> __m128i {
    // SAFETY: a 16-byte load from the 16-byte `block`; SSSE3 for the shuffle (module contract).
    unsafe {
        let mut block = [0u8; 16];
        block[..12].copy_from_slice(nonce);
        block[15] = 1;
        bswap128(_mm_loadu_si128(block.as_ptr().cast()))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Seal,
    Open,
}

/// Encrypts or decrypts `buf[..]` (with the first `src.len()` plaintext
/// bytes read from `src` when sealing) and returns the GHASH-based tag.
#[inline(always)]
unsafe fn crypt<V: Lanes, const NR: usize, const P: usize, const X: usize, const EXTRA: bool>(
    key: &KeyData<V, NR, P, X>,
    j0: __m128i,
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
    dir: Direction,
    extra: Option<Extra<'_>>,
) -> ([u8; TAG_LEN], [u8; 16]) {
    // SAFETY: the CPU has the module's features and `V`'s (this fn's contract). Every raw
    // pointer derives from `src` or `buf` as a whole: the batches cover `[0, tail_start)` with
    // `tail_start <= n`, reading `src` only below `from_src <= src.len()` (a batch boundary or
    // `tail_start`, so no batch straddles it); the extra block is loaded at `e.at` only when
    // `e.at <= tail_start - 16` (no overflow); every other load or store is on a whole local array or goes
    // through `load_partial`/`store_partial`.
    unsafe {
        assert!(src.len() <= buf.len(), "prefix longer than the buffer");
        assert!((buf.len() as u64) <= (1 << 36) - 32, "GCM message too long");
        let n = buf.len();
        let mut extra_out = [0u8; 16];
        let mut extra_done = false;
        // Whole batches to `main_end`, then one half batch if that much is
        // left, then the tail (less than half a batch).
        let batch_bytes = V::BATCH * 16;
        let main_end = n - n % batch_bytes;
        let half = n - main_end >= batch_bytes / 2;
        let tail_start = main_end + if half { batch_bytes / 2 } else { 0 };
        let (acc, ek0) = if n < SHORT && aad.len() <= 64 {
            // Short record: E(J0) and every keystream block in one AES pass,
            // then AAD, ciphertext and lengths in one GHASH reduction.
            let mut ks = [_mm_setzero_si128(); 9];
            let mut ghash_in = [_mm_setzero_si128(); 13];
            let blocks = n.div_ceil(16);
            keystream(key, j0, blocks + 1, &mut ks);
            let mut m = 0;
            for chunk in aad.chunks(16) {
                ghash_in[m] = bswap128(load_partial(chunk));
                m += 1;
            }
            buf[..src.len()].copy_from_slice(src);
            m += crypt_tail(&ks[1..], buf, dir, &mut ghash_in[m..]);
            ghash_in[m] = lengths_block(aad.len(), n);
            let acc = ghash_blocks(key, _mm_setzero_si128(), &ghash_in[..=m]);
            (acc, take_and_wipe(&mut ks, 0))
        } else {
            // The tail is under half a batch: at most 16 blocks, plus lengths.
            // The tail's keystream (at most 16 blocks), then E(K, J0).
            let mut ks = [_mm_setzero_si128(); 17];
            let mut ghash_in = [_mm_setzero_si128(); 17];
            // E(K, J0) and the tail read the round keys through an opaque
            // pointer each, and E(K, J0) waits in `ks`, read back at the end:
            // held in registers across the batches, the round keys and E(K, J0)
            // were spilled and left on the stack (the stack-residue test).
            keystream(core::hint::black_box(key), j0, 1, &mut ks[16..]);
            let mut acc = ghash_bytes(key, _mm_setzero_si128(), aad);
            // Batches come from `src` up to `from_src` (a batch boundary), then
            // from `buf`.
            let from_src = if src.len() >= tail_start {
                tail_start
            } else if src.len() >= main_end {
                main_end
            } else {
                src.len() - src.len() % batch_bytes
            };
            buf[from_src..src.len()].copy_from_slice(&src[from_src..]);
            let ctr = _mm_add_epi32(j0, _mm_set_epi32(0, 0, 0, 1));
            let (ctr, acc_main) = match dir {
                // Large records of a lane type that measures faster with the
                // round keys and hash powers hoisted out of the batch loop
                // (and spilled: the caller scrubs the stack, see
                // `Lanes::HOIST_SEAL_FROM`).
                Direction::Seal if n >= V::HOIST_SEAL_FROM => seal_batches::<V, NR, P, X, true>(
                    key,
                    ctr,
                    acc,
                    src.as_ptr(),
                    from_src,
                    buf.as_mut_ptr(),
                    main_end,
                    half,
                ),
                Direction::Seal => seal_batches::<V, NR, P, X, false>(
                    key,
                    ctr,
                    acc,
                    src.as_ptr(),
                    from_src,
                    buf.as_mut_ptr(),
                    main_end,
                    half,
                ),
                Direction::Open => open_batches(key, ctr, acc, buf.as_mut_ptr(), main_end, half),
            };
            acc = acc_main;
            let tail_blocks = (n - tail_start).div_ceil(16);
            let key = core::hint::black_box(key);
            match extra {
                // The extra block's input is ciphertext the batches already
                // wrote: it rides in the tail's AES pass.
                Some(e)
                    if EXTRA && tail_blocks > 0 && tail_start >= 16 && e.at <= tail_start - 16 =>
                {
                    let mut y = _mm_loadu_si128(buf.as_ptr().add(e.at).cast());
                    keystream_plus(key, ctr, tail_blocks, &mut ks, e.rk, &mut y);
                    _mm_storeu_si128(extra_out.as_mut_ptr().cast(), y);
                    extra_done = true;
                }
                _ => keystream(key, ctr, tail_blocks, &mut ks),
            }
            let tail = &mut buf[tail_start..];
            let m = crypt_tail(&ks, tail, dir, &mut ghash_in);
            ghash_in[m] = lengths_block(aad.len(), n);
            let acc = ghash_blocks(key, acc, &ghash_in[..=m]);
            (acc, take_and_wipe(&mut ks, 16))
        };
        let mut tag = [0u8; TAG_LEN];
        _mm_storeu_si128(tag.as_mut_ptr().cast(), _mm_xor_si128(bswap128(acc), ek0));
        if let Some(e) = extra {
            if EXTRA && !extra_done {
                // The input reaches into the tag, or no AES pass was left to
                // share: one block of its own, after the tag.
                let mut input = [0u8; 16];
                for (i, b) in input.iter_mut().enumerate() {
                    let j = e.at + i;
                    *b = if j < n { buf[j] } else { tag[j - n] };
                }
                let mut rk2 = load_round_keys(e.rk);
                let y = encrypt_block(&rk2[..=NR], _mm_loadu_si128(input.as_ptr().cast()));
                wipe(&mut rk2);
                _mm_storeu_si128(extra_out.as_mut_ptr().cast(), y);
            }
        }
        (tag, extra_out)
    }
}

/// A block to encrypt under other AES round keys (with the same round
/// count) alongside a seal: the 16 bytes at offset `at` of
/// ciphertext ‖ tag.
#[derive(Clone, Copy)]
pub(super) struct Extra<'a> {
    pub(super) rk: &'a [[u8; 16]; 15],
    pub(super) at: usize,
}

#[inline(always)]
unsafe fn load_round_keys(rk: &[[u8; 16]; 15]) -> [__m128i; 15] {
    // SAFETY: each load reads one whole `[u8; 16]` round key (SSE2).
    unsafe {
        let mut out = [_mm_setzero_si128(); 15];
        for (o, k) in out.iter_mut().zip(rk) {
            *o = load128(k);
        }
        out
    }
}

/// XORs keystream into `data` (at most 16 blocks) and collects the ciphertext
/// blocks, byte-reflected, into `ghash_in`. Returns how many.
#[inline(always)]
unsafe fn crypt_tail(
    ks: &[__m128i],
    data: &mut [u8],
    dir: Direction,
    ghash_in: &mut [__m128i],
) -> usize {
    // SAFETY: register-only intrinsics (module contract); partial loads and stores are bounded
    // by each chunk's length.
    unsafe {
        let mut m = 0;
        for (chunk, &k) in data.chunks_mut(16).zip(ks) {
            let input = load_partial(chunk);
            let output = _mm_xor_si128(input, k);
            store_partial(output, chunk);
            // Hash the ciphertext: the output when sealing, the input when opening.
            let ct = if dir == Direction::Seal {
                load_partial(chunk)
            } else {
                input
            };
            ghash_in[m] = bswap128(ct);
            m += 1;
        }
        m
    }
}

/// Runs `regs` registers of counter blocks through AES and XORs the
/// keystream with `input`. Between the rounds it GHASHes `hash`, a batch of
/// `hash.1` registers (sealing: the previous batch's ciphertext; opening:
/// this batch's), with `acc` folded in, and returns the new GHASH value.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `input` and `output` are
/// valid for `regs * V::BLOCKS * 16` bytes (they may be equal), and so is
/// the hashed batch, `hash.0`, for `hash.1` registers; `regs <= MAX_REGS`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // always inlined; each is a loop-invariant or the cursor
unsafe fn batch<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const OPEN: bool,
    const HOIST: bool,
>(
    key: &KeyData<V, NR, P, X>,
    ctr: V,
    input: *const u8,
    output: *mut u8,
    regs: usize,
    hash: Option<(*const u8, usize)>,
    acc: __m128i,
    halves: Option<*const V>,
    schoolbook: bool,
) -> __m128i {
    // SAFETY: the CPU has the module's and `V`'s features, and `input`, `output` and the hashed
    // batch are valid for `regs * V::BLOCKS * 16` bytes (this fn's contract): every offset
    // below is `j * V::BLOCKS * 16` for `j < regs`. Round keys are whole 16-byte entries of
    // `key.rk`.
    unsafe {
        // An open, and a seal unless `HOIST`, reads round keys and hash powers
        // from the key in every batch: hoisted out of the batch loop they did
        // not fit in the registers and were spilled (measured on xmm: a third
        // of an open's loop was stack traffic; and spills leave key material
        // on the stack, see `Lanes::HOIST_SEAL_FROM`).
        let key = if HOIST {
            key
        } else {
            core::hint::black_box(key)
        };
        let mut x = [V::zero(); MAX_REGS];
        let k0 = V::broadcast(key.rk[0].as_ptr());
        for (j, xj) in x.iter_mut().enumerate().take(regs) {
            *xj = ctr.add_ctr((j * V::BLOCKS) as i32).bswap().xor(k0);
        }
        let mut sum = Acc::<V>::for_batch(hash.map_or(0, |(_, r)| r), schoolbook);
        // (A macro, not a closure: a closure does not get the caller's
        // target features.)
        macro_rules! round {
            ($r:expr) => {{
                let r: usize = $r;
                // A seal that does not hoist loads each round key where it is
                // used, through an opaque pointer: loaded early, the first
                // round keys were spilled and left on the stack. (An open's
                // did not spill; the opaque pointer cost its ymm loop 6 %.)
                let k = if HOIST || OPEN {
                    V::broadcast(key.rk[r].as_ptr())
                } else {
                    V::broadcast(core::hint::black_box(&key.rk)[r].as_ptr())
                };
                for xj in x.iter_mut().take(regs) {
                    *xj = xj.aesenc(k);
                }
                // One hash step per round, last register first, so the
                // running value `acc` joins last.
                if let Some((h, hash_regs)) = hash {
                    if r <= hash_regs {
                        ghash_step(key, &mut sum, h, hash_regs - r, hash_regs, acc, halves);
                    }
                }
            }};
        }
        if V::BLOCKS == 2 && HOIST {
            // Unrolled for the ymm seals that hoist their keys (4 KiB and
            // up): as a loop, LLVM kept their rounds a run-time loop, with
            // its counter, branches and the running sums reloaded every
            // round. Opens, shorter seals and zmm seals measured slower
            // unrolled (docs/decisions.md, "Round loop").
            macro_rules! rounds {
                ($($r:literal)*) => { $( if $r < NR { round!($r); } )* };
            }
            rounds!(1 2 3 4 5 6 7 8 9 10 11 12 13);
        } else {
            for r in 1..NR {
                round!(r);
            }
        }
        if let Some((h, hash_regs)) = hash {
            for j in NR..=hash_regs {
                ghash_step(key, &mut sum, h, hash_regs - j, hash_regs, acc, halves);
            }
        }
        let klast = V::broadcast(key.rk[NR].as_ptr());
        // An open hashes the same bytes it decrypts here. Reloading them, rather
        // than keeping the values loaded for the hash alive through the rounds,
        // leaves the registers to the AES state (measured: the xmm open spilled).
        let input = core::hint::black_box(input);
        for (j, xj) in x.iter().enumerate().take(regs) {
            let off = j * V::BLOCKS * 16;
            xj.aesenclast(klast.xor(V::loadu(input.add(off))))
                .storeu(output.add(off));
        }
        if hash.is_some() {
            sum.finish()
        } else {
            acc
        }
    }
}

/// One GHASH step of a batch of `regs` registers at `h`: register `j`
/// (with `acc` folded into the first block) times its key powers.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `h` is valid for reads of
/// `regs * V::BLOCKS * 16` bytes and `j < regs`.
#[inline(always)]
unsafe fn ghash_step<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    sum: &mut Acc<V>,
    h: *const u8,
    j: usize,
    regs: usize,
    acc: __m128i,
    halves: Option<*const V>,
) {
    // SAFETY: `h` is valid for `regs * V::BLOCKS * 16` bytes and `j < regs` (this fn's
    // contract), so the load at `j * V::BLOCKS * 16` is in bounds; `power` asserts its
    // exponent, `(regs - j) * V::BLOCKS <= V::BATCH <= P`.
    unsafe {
        let mut d = V::loadu(h.add(j * V::BLOCKS * 16)).bswap();
        if j == 0 {
            d = d.xor(V::from_first(acc));
        }
        let (p, px) = key.power::<V>((regs - j) * V::BLOCKS);
        let px = match halves {
            Some(hx) => hx.add(j).read(),
            None => px,
        };
        sum.mul_add(d, p, px);
    }
}

/// Where a seal or open is within the batches.
struct Cursor<V> {
    ctr: V,
    acc: __m128i,
    off: usize,
}

/// Seals one batch of `regs` registers at `cur.off`, hashing `prev`.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `input` and
/// `buf + cur.off` are valid for the batch's `regs * V::BLOCKS * 16` bytes,
/// and `prev`, if any, for the previous batch's.
#[inline(always)]
unsafe fn seal_one<V: Lanes, const NR: usize, const P: usize, const X: usize, const HOIST: bool>(
    key: &KeyData<V, NR, P, X>,
    cur: &mut Cursor<V>,
    regs: usize,
    input: *const u8,
    buf: *mut u8,
    prev: &mut Option<(*const u8, usize)>,
) {
    // SAFETY: `buf + cur.off` and `input` are valid for the batch's `regs * V::BLOCKS * 16`
    // bytes (this fn's contract), as `batch` needs; `prev` is the previous batch, already
    // written.
    unsafe {
        let out = buf.add(cur.off);
        cur.acc = batch::<_, NR, P, X, false, HOIST>(
            key, cur.ctr, input, out, regs, *prev, cur.acc, None, true,
        );
        cur.ctr = cur.ctr.add_ctr((regs * V::BLOCKS) as i32);
        *prev = Some((out, regs));
        cur.off += regs * V::BLOCKS * 16;
    }
}

/// Seals `[0, end)`: whole batches, then a half batch if `half`. Input
/// comes from `src` for batches ending at or below `from_src`, from `buf`
/// above. GHASH runs one batch behind AES. Returns the next counter and the
/// GHASH state.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `end` is a whole number of
/// batches (`V::BATCH * 16` bytes each); `buf` is valid for reads and
/// writes of `end` bytes, plus half a batch if `half`; `src` for reads of
/// `from_src` bytes, a batch boundary (or the end of the half batch).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn seal_batches<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const HOIST: bool,
>(
    key: &KeyData<V, NR, P, X>,
    ctr: __m128i,
    acc: __m128i,
    src: *const u8,
    from_src: usize,
    buf: *mut u8,
    end: usize,
    half: bool,
) -> (__m128i, __m128i) {
    // SAFETY: `src` is valid below `from_src` and `buf` below `end` plus a half batch if `half`
    // (this fn's contract); each batch starts at a batch boundary and lies wholly below
    // `from_src` or wholly at or above it, so the pointer `from` picks is valid for the whole
    // batch.
    unsafe {
        debug_assert!(end.is_multiple_of(V::BATCH * 16), "whole batches");
        let mut cur = Cursor {
            ctr: V::counters(ctr),
            acc,
            off: 0,
        };
        let mut prev = None;
        // Batch boundaries only: a batch is wholly below `from_src` or above it.
        let from = |off: usize| {
            if off < from_src {
                src.add(off)
            } else {
                buf.add(off) as *const u8
            }
        };
        while cur.off < end {
            let input = from(cur.off);
            seal_one::<_, NR, P, X, HOIST>(key, &mut cur, V::REGS, input, buf, &mut prev);
        }
        if half {
            let input = from(cur.off);
            seal_one::<_, NR, P, X, HOIST>(key, &mut cur, V::REGS / 2, input, buf, &mut prev);
        }
        if let Some((last, regs)) = prev {
            let mut sum = Acc::<V>::for_batch(regs, true);
            for j in 0..regs {
                ghash_step(key, &mut sum, last, j, regs, cur.acc, None);
            }
            cur.acc = sum.finish();
        }
        (
            _mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, (cur.off / 16) as i32)),
            cur.acc,
        )
    }
}

/// Opens one batch of `regs` registers at `cur.off` in place.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `buf + cur.off` is valid
/// for the batch's `regs * V::BLOCKS * 16` bytes.
#[inline(always)]
unsafe fn open_one<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    cur: &mut Cursor<V>,
    regs: usize,
    buf: *mut u8,
    halves: Option<*const V>,
    schoolbook: bool,
) {
    // SAFETY: `buf + cur.off` is valid for the batch's `regs * V::BLOCKS * 16` bytes (this fn's
    // contract).
    unsafe {
        let p = buf.add(cur.off);
        cur.acc = batch::<_, NR, P, X, true, false>(
            key,
            cur.ctr,
            p,
            p,
            regs,
            Some((p, regs)),
            cur.acc,
            halves.filter(|_| regs == V::REGS),
            schoolbook,
        );
        cur.ctr = cur.ctr.add_ctr((regs * V::BLOCKS) as i32);
        cur.off += regs * V::BLOCKS * 16;
    }
}

/// Opens `[0, end)` (whole batches, then a half batch if `half`) of `buf` in
/// place, hashing each batch's ciphertext while it is decrypted.
///
/// # Safety
/// The CPU has the module's and `V`'s features; `end` is a whole number of
/// batches (`V::BATCH * 16` bytes each); `buf` is valid for reads and
/// writes of `end` bytes, plus half a batch if `half`.
#[inline(always)]
unsafe fn open_batches<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    ctr: __m128i,
    acc: __m128i,
    buf: *mut u8,
    end: usize,
    half: bool,
) -> (__m128i, __m128i) {
    // SAFETY: `buf` is valid for `end` bytes plus a half batch if `half` (this fn's contract),
    // the batches `open_one` visits.
    unsafe {
        debug_assert!(end.is_multiple_of(V::BATCH * 16), "whole batches");
        let mut cur = Cursor {
            ctr: V::counters(ctr),
            acc,
            off: 0,
        };
        // The ymm open hashes from the Karatsuba halves of its powers made
        // once per record, read from the stack as memory operands (the key
        // keeps only the powers; made per batch they cost 16 of its ~210
        // vector instructions). The frame is scrubbed after the record.
        let mut hx = [V::zero(); MAX_REGS];
        let halves = if V::BLOCKS == 2 && end >= HALVES_FROM {
            for (j, hj) in hx.iter_mut().enumerate().take(V::REGS) {
                *hj = key.power::<V>((V::REGS - j) * V::BLOCKS).1;
            }
            Some(core::hint::black_box(hx.as_ptr()))
        } else {
            None
        };
        // Schoolbook products only in long opens (two loops, so that each
        // is compiled for one kind of product): a short open is bound by
        // its batches' latency, which the fourth multiply lengthens.
        if !V::KARATSUBA && end >= SCHOOLBOOK_OPEN_FROM {
            while cur.off < end {
                open_one(key, &mut cur, V::REGS, buf, halves, true);
            }
        } else {
            while cur.off < end {
                open_one(key, &mut cur, V::REGS, buf, halves, false);
            }
        }
        if half {
            open_one(key, &mut cur, V::REGS / 2, buf, None, false);
        }
        if halves.is_some() {
            for v in hx.iter_mut() {
                core::ptr::write_volatile(v, V::zero());
            }
        }
        (
            _mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, (cur.off / 16) as i32)),
            cur.acc,
        )
    }
}

/// Seal with lane type `V` and `NR` AES rounds.
///
/// # Safety
/// The CPU has AES-NI, PCLMULQDQ, SSSE3 and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[inline(always)]
pub(super) unsafe fn seal<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    src: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    // SAFETY: `crypt` needs only the CPU features, which this fn's contract
    // provides; it checks every length it relies on.
    unsafe { crypt::<V, NR, P, X, false>(key, j0(nonce), aad, src, buf, Direction::Seal, None).0 }
}

/// Seal, and encrypt the 16 bytes at `extra.at` of ciphertext ‖ tag under
/// `extra.rk` in the same call. Returns the tag and that block.
///
/// # Safety
/// The CPU has AES-NI, PCLMULQDQ, SSSE3 and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[inline(always)]
pub(super) unsafe fn seal_with_block<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
    extra: Extra<'_>,
) -> ([u8; TAG_LEN], [u8; 16]) {
    // SAFETY: as for `seal`; `crypt` loads the extra block from `buf` only when
    // `at <= tail_start - 16`, within the batches it wrote.
    unsafe {
        crypt::<V, NR, P, X, true>(key, j0(nonce), aad, &[], buf, Direction::Seal, Some(extra))
    }
}

/// Seal from an arbitrary pre-counter block (tests: 32-bit counter wrap).
///
/// # Safety
/// The CPU has AES-NI, PCLMULQDQ, SSSE3 and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[cfg(test)]
#[inline(always)]
pub(super) unsafe fn seal_with_j0<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    // SAFETY: as for `seal`; `j0` is a 16-byte array.
    unsafe {
        crypt::<V, NR, P, X, false>(
            key,
            bswap128(_mm_loadu_si128(j0.as_ptr().cast())),
            aad,
            &[],
            buf,
            Direction::Seal,
            None,
        )
        .0
    }
}

/// Open with lane type `V` and `NR` AES rounds; zeroes `buf` on failure.
///
/// # Safety
/// The CPU has AES-NI, PCLMULQDQ, SSSE3 and `V`'s features (the module's
/// contract: the backends call this from their `#[target_feature]` entry
/// points).
#[inline(always)]
pub(super) unsafe fn open<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> bool {
    // SAFETY: as for `seal`.
    unsafe {
        let (expected, _) =
            crypt::<V, NR, P, X, false>(key, j0(nonce), aad, &[], buf, Direction::Open, None);
        if ct_eq(&expected, tag) {
            true
        } else {
            buf.zeroize();
            false
        }
    }
}
