//! AES-CTR: blocks and keystream side by side, one block per register
//! (short records, tails), with an optional extra block under other round
//! keys.

use super::super::arch::{self, Block};

use super::key::{wipe, KeyData};
use super::lanes::Lanes;
use crate::aead::NONCE_LEN;

#[inline(always)]
pub(super) unsafe fn encrypt_block<const NR: usize>(rk: &[Block; 15], x: Block) -> Block {
    // SAFETY: register-only `Lanes` methods on blocks (module contract); `rk` is indexed with
    // bounds checks.
    unsafe {
        let mut x = x.xor(rk[0]);
        each_round!(Block::UNROLL_ROUNDS, NR, |r| {
            x = x.aesenc(rk[r]);
        });
        x.aesenclast(rk[NR])
    }
}

/// `N` AES blocks side by side (one per register), for short records and
/// tails.
#[inline(always)]
pub(super) unsafe fn encrypt_blocks<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const N: usize,
>(
    key: &KeyData<V, NR, P, X>,
    x: &mut [Block; N],
) {
    // SAFETY: register-only `Lanes` methods on blocks (module contract); round keys loaded from whole
    // `[u8; 16]` entries.
    unsafe {
        // Each round key is loaded where it is used, through an opaque
        // pointer: loaded up front, the AES-256 keys of a 9-block pass did not
        // fit in the registers and were spilled (the stack-residue test).
        macro_rules! rk {
            ($r:expr) => {
                arch::load(&core::hint::black_box(&key.rk)[$r])
            };
        }
        let k0 = rk!(0);
        for b in x.iter_mut() {
            *b = b.xor(k0);
        }
        each_round!(Block::UNROLL_ROUNDS, NR, |r| {
            let k = rk!(r);
            for b in x.iter_mut() {
                *b = b.aesenc(k);
            }
        });
        let k = rk!(NR);
        for b in x.iter_mut() {
            *b = b.aesenclast(k);
        }
    }
}

/// Counter blocks `ctr + 0 … ctr + n-1` (little-endian view) encrypted into
/// `out[..n]`, at most 9 side by side.
#[inline(always)]
pub(super) unsafe fn keystream<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    ctr: Block,
    n: usize,
    out: &mut [Block],
) {
    // SAFETY: register-only intrinsics (module contract); `out` is sliced with bounds checks.
    unsafe {
        let mut done = 0;
        while done < n {
            let base = ctr.add_ctr(done as i32);
            let out = &mut out[done..];
            macro_rules! run {
                ($n:literal) => {{
                    let mut x = [arch::zero(); $n];
                    for (i, b) in x.iter_mut().enumerate() {
                        *b = base.add_ctr(i as i32).bswap();
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
pub(super) unsafe fn encrypt_blocks_plus<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const N: usize,
>(
    key: &KeyData<V, NR, P, X>,
    x: &mut [Block; N],
    rk2: &[[u8; 16]; 15],
    y: &mut Block,
) {
    // SAFETY: register-only `Lanes` methods on blocks (module contract); round keys loaded from whole
    // `[u8; 16]` entries.
    unsafe {
        let k0 = arch::load(&key.rk[0]);
        for b in x.iter_mut() {
            *b = b.xor(k0);
        }
        *y = y.xor(arch::load(&rk2[0]));
        each_round!(Block::UNROLL_ROUNDS, NR, |r| {
            let k = arch::load(&key.rk[r]);
            for b in x.iter_mut() {
                *b = b.aesenc(k);
            }
            *y = y.aesenc(arch::load(&rk2[r]));
        });
        let k = arch::load(&key.rk[NR]);
        for b in x.iter_mut() {
            *b = b.aesenclast(k);
        }
        *y = y.aesenclast(arch::load(&rk2[NR]));
    }
}

/// `keystream` for `n ≥ 1` blocks, with `y` encrypted under `rk2` in the
/// first pass.
#[inline(always)]
pub(super) unsafe fn keystream_plus<V: Lanes, const NR: usize, const P: usize, const X: usize>(
    key: &KeyData<V, NR, P, X>,
    ctr: Block,
    n: usize,
    out: &mut [Block],
    rk2: &[[u8; 16]; 15],
    y: &mut Block,
) {
    // SAFETY: register-only intrinsics (module contract); `out` is sliced with bounds checks.
    unsafe {
        debug_assert!(n >= 1);
        let first = n.min(9);
        macro_rules! run {
            ($n:literal) => {{
                let mut x = [arch::zero(); $n];
                for (i, b) in x.iter_mut().enumerate() {
                    *b = ctr.add_ctr(i as i32).bswap();
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
            let rest = ctr.add_ctr(first as i32);
            keystream(key, rest, n - first, &mut out[first..]);
        }
    }
}

/// J0 = nonce ‖ 1, little-endian view (counter in the low dword).
#[inline(always)]
pub(super) unsafe fn j0(nonce: &[u8; NONCE_LEN]) -> Block {
    // SAFETY: a 16-byte load from the 16-byte `block`; the block features for the byte swap (module contract).
    unsafe {
        let mut block = [0u8; 16];
        block[..12].copy_from_slice(nonce);
        block[15] = 1;
        Block::loadu(block.as_ptr()).bswap()
    }
}
