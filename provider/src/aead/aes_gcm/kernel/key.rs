//! Per-key data ([`KeyData`]: round keys and GHASH key powers) and the
//! wipes of key material; no AES or GHASH arithmetic (that is `setup.rs`).

use super::super::arch::{self, Block};

use super::lanes::Lanes;
use super::MAX_REGS;

/// Per-key precomputation for lane type `V` and `NR` AES rounds, built once
/// in its final allocation; zeroized on drop.
///
/// `P` powers of H are kept: as many as one batch hashes (`V::BATCH`), so a
/// key costs only what its engine uses. `X` is `P` where the Karatsuba
/// halves (`lo ^ hi` of each power) are stored, or 0 where they are computed
/// from the power when loaded (one shuffle and one XOR per register), which
/// keeps a key of the ymm engine within the size of ring's.
/// `repr(C)` and at least 16-byte aligned: every entry is 16-byte aligned
/// (the fields are whole entries), which the wipe on drop relies on. The
/// powers come first, at the alignment of `V::KeyAlign`: the zmm engine's
/// batch loads of four powers then lie on one cache line wherever the key
/// is allocated (docs/decisions.md, "Key layout").
#[repr(C, align(16))]
pub(crate) struct KeyData<V: Lanes, const NR: usize, const P: usize, const X: usize> {
    /// Twisted H^P … H^1 (index `P - k` holds H^k).
    pub(super) h: [[u8; 16]; P],
    /// The same powers with both halves `lo ^ hi`, for Karatsuba (if `X == P`).
    pub(super) hx: [[u8; 16]; X],
    /// AES round keys (`NR + 1` used: 11 for AES-128, 15 for AES-256).
    pub(super) rk: [[u8; 16]; 15],
    /// No bytes: the alignment of `V`'s loads of powers.
    _align: [V::KeyAlign; 0],
}

impl<V: Lanes, const NR: usize, const P: usize, const X: usize> Drop for KeyData<V, NR, P, X> {
    fn drop(&mut self) {
        wipe_blocks(&mut self.rk);
        wipe_blocks(&mut self.h);
        wipe_blocks(&mut self.hx);
    }
}

/// A key's data in a `malloc` allocation, at its type's alignment inside
/// it (up to `align_of::<T>() - 16` bytes in): a zmm key on cache lines
/// and a ymm key on 32 bytes without an aligned allocation, whose
/// `posix_memalign` made key setup slower (docs/decisions.md, "Key
/// layout"). Owns and drops its `T` as a `Box` does.
pub(crate) struct KeyBox<T> {
    /// The `T`, at `align_of::<T>()`.
    data: core::ptr::NonNull<T>,
    /// Bytes from the allocation's start to `data`.
    lead: usize,
}

// SAFETY: a `KeyBox` owns its `T` alone, as a `Box` does.
unsafe impl<T: Send> Send for KeyBox<T> {}
// SAFETY: shared access to a `KeyBox` is shared access to its `T`.
unsafe impl<T: Sync> Sync for KeyBox<T> {}

impl<T> KeyBox<T> {
    /// `malloc`'s 16-byte alignment and room to move the `T` to its own.
    const LAYOUT: std::alloc::Layout = {
        assert!(core::mem::align_of::<T>() >= 16 && core::mem::size_of::<T>() > 0);
        let size = core::mem::size_of::<T>() + core::mem::align_of::<T>() - 16;
        match std::alloc::Layout::from_size_align(size, 16) {
            Ok(layout) => layout,
            Err(_) => panic!("a key's size"),
        }
    };

    /// Room for a `T`, uninitialised.
    pub(crate) fn uninit() -> KeyBox<core::mem::MaybeUninit<T>> {
        let layout = Self::LAYOUT;
        // SAFETY: `layout` has a nonzero size (asserted in `LAYOUT`).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(raw) = core::ptr::NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        // The bytes to the next multiple of `T`'s alignment (a power of two): at
        // most `align_of::<T>() - 16` where `raw` is 16-byte aligned (asserted), so the
        // `T` ends inside the allocation.
        let align = core::mem::align_of::<T>();
        let lead = (raw.as_ptr() as usize).wrapping_neg() & (align - 1);
        assert!(lead <= align - 16, "a 16-byte-aligned block");
        KeyBox {
            // SAFETY: `lead <= align - 16` (asserted): `lead` bytes in is inside the
            // allocation, `size_of::<T>() + align - 16` bytes long.
            data: unsafe { raw.add(lead).cast() },
            lead,
        }
    }

    /// Bytes from the allocation's start to the `T`.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn lead(&self) -> usize {
        self.lead
    }
}

impl<T> KeyBox<core::mem::MaybeUninit<T>> {
    /// # Safety
    /// The `T` is initialised: every field written.
    pub(crate) unsafe fn assume_init(self) -> KeyBox<T> {
        let this = core::mem::ManuallyDrop::new(self);
        KeyBox {
            data: this.data.cast(),
            lead: this.lead,
        }
    }
}

impl<T> core::ops::Deref for KeyBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: `data` points to a `T` this box owns (initialised unless `T` is a
        // `MaybeUninit`), alive and aligned while it lives.
        unsafe { self.data.as_ref() }
    }
}

impl<T> core::ops::DerefMut for KeyBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as `deref`, with `&mut self`'s exclusive access.
        unsafe { self.data.as_mut() }
    }
}

impl<T> Drop for KeyBox<T> {
    fn drop(&mut self) {
        // SAFETY: the `T` is this box's (a `MaybeUninit` drops nothing), dropped once; the
        // allocation starts `lead` bytes before it and has `LAYOUT` (`uninit`).
        unsafe {
            core::ptr::drop_in_place(self.data.as_ptr());
            let raw = self.data.as_ptr().cast::<u8>().sub(self.lead);
            std::alloc::dealloc(raw, Self::LAYOUT);
        }
    }
}

/// Zeroes `x` with one volatile 16-byte store per entry (`zeroize` writes
/// byte by byte, and a volatile write of the whole array goes through a
/// stack copy and `memcpy`: either made dropping a zmm key cost more than
/// building it). Every entry must be 16-byte aligned: `x` is a field of
/// [`KeyData`] or `setup::Aligned` (checked in debug builds).
#[inline(always)]
pub(super) fn wipe_blocks<const N: usize>(x: &mut [[u8; 16]; N]) {
    debug_assert!(
        x.as_ptr().cast::<Block>().is_aligned(),
        "16-byte aligned entries"
    );
    for entry in x.iter_mut() {
        // SAFETY: `entry` is a valid `&mut [u8; 16]`, 16 writable bytes, 16-byte aligned
        // (this fn's requirement: the containers are `repr(C, align(16))` of whole entries).
        unsafe {
            let p = core::ptr::from_mut(entry).cast::<Block>();
            core::ptr::write_volatile(p, arch::zero());
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Zeroes vector temporaries with volatile writes, so the wipe is not
/// optimised away.
/// `ks[i]`, read back from memory (not a register copy kept alive since it
/// was written), then all of `ks` wiped.
#[inline(always)]
pub(super) unsafe fn take_and_wipe<const N: usize>(ks: &mut [Block; N], i: usize) -> Block {
    // SAFETY: `wipe` only writes whole elements of `ks` (volatile stores of a zero vector); `i`
    // indexes `ks` with a bounds check.
    unsafe {
        let x = core::hint::black_box(&mut *ks)[i];
        wipe(ks);
        x
    }
}

#[inline(always)]
pub(super) unsafe fn wipe<const N: usize>(x: &mut [Block; N]) {
    // SAFETY: each volatile write targets one element of `x`, a valid `&mut`.
    unsafe {
        for v in x.iter_mut() {
            core::ptr::write_volatile(v, arch::zero());
        }
    }
}

impl<V: Lanes, const NR: usize, const P: usize, const X: usize> KeyData<V, NR, P, X> {
    /// Uninitialised, in its allocation (`malloc`, not the slower
    /// `calloc` a zeroed box costs, nor `posix_memalign`: [`KeyBox`]):
    /// `expand` then fills it in place.
    pub(crate) fn uninit() -> KeyBox<core::mem::MaybeUninit<Self>> {
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
        KeyBox::uninit()
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
    pub(super) unsafe fn power<W: Lanes>(&self, k: usize) -> (W, W) {
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
