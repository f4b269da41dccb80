//! Partial blocks and tails: loads and stores of under 16 bytes through
//! general registers, the keystream XOR of a record's last blocks, and the
//! tail's passes: whole registers (`wide_tail`) and, on the lane types that
//! have byte masks, all of it (`masked_tail`), or all of a record of up to
//! 432 bytes with E(K, J0) (`masked_short`).

use super::super::arch::{self, Block};

use super::ghash::{lengths_block, Acc};
use super::key::KeyData;
use super::lanes::Lanes;
use super::Direction;

/// Up to 16 bytes, zero-padded. Partial blocks move in 8-, 4-, 2- and
/// 1-byte pieces through general registers: no stack staging of plaintext,
/// and no `memcpy` call (a call clobbers every vector register, so the
/// keystream block was spilled around it and left on the stack).
#[inline(always)]
pub(super) unsafe fn load_partial(bytes: &[u8]) -> Block {
    // SAFETY: the 16-byte load runs only when `bytes` has at least 16 bytes.
    unsafe {
        if bytes.len() >= 16 {
            return Block::loadu(bytes.as_ptr());
        }
        arch::from_u128(read_le(bytes))
    }
}

/// Writes the first `dst.len()` (at most 16) bytes of `x` to `dst`.
#[inline(always)]
pub(super) unsafe fn store_partial(x: Block, dst: &mut [u8]) {
    // SAFETY: the 16-byte store runs only when `dst` has at least 16 bytes.
    unsafe {
        if dst.len() >= 16 {
            return x.storeu(dst.as_mut_ptr());
        }
        write_le(arch::to_u128(x), dst);
    }
}

/// `bytes` (under 16) as a little-endian number, read in power-of-two
/// pieces (the length is public).
#[inline(always)]
pub(super) fn read_le(bytes: &[u8]) -> u128 {
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
pub(super) fn write_le(v: u128, dst: &mut [u8]) {
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

/// XORs keystream into `data` (at most 16 blocks) and collects the ciphertext
/// blocks, byte-reflected, into `ghash_in`. Returns how many.
#[inline(always)]
pub(super) unsafe fn crypt_tail(
    ks: &[Block],
    data: &mut [u8],
    dir: Direction,
    ghash_in: &mut [Block],
) -> usize {
    // SAFETY: register-only intrinsics (module contract); partial loads and stores are bounded
    // by each chunk's length.
    unsafe {
        let mut m = 0;
        for (chunk, &k) in data.chunks_mut(16).zip(ks) {
            let input = load_partial(chunk);
            let output = input.xor(k);
            store_partial(output, chunk);
            // Hash the ciphertext: the output when sealing (from the
            // register, its keystream bytes past a partial block masked
            // off; reloaded, the hash waited on the piecewise stores), the
            // input when opening.
            let ct = match dir {
                Direction::Seal if chunk.len() < 16 => {
                    arch::and(output, arch::from_u128((1u128 << (8 * chunk.len())) - 1))
                }
                Direction::Seal => output,
                Direction::Open => input,
            };
            ghash_in[m] = ct.bswap();
            m += 1;
        }
        m
    }
}

/// The AES pass of both tails: `R` registers of counter blocks (register
/// `j` from counter `ctr + first(j)`) XORed with round key 0 and taken
/// through every round but the last, with `extra`'s block, if any, through
/// its own round keys to its last round beside them. Each round key is
/// loaded at its use and each register fenced after each round: the pass
/// runs round by round and holds one key (docs/decisions.md, "AES passes
/// round by round"). Returns the registers and the last round key.
///
/// # Safety
/// The CPU has the module's and `V`'s features.
#[inline(always)]
unsafe fn aes_pass<V: Lanes, const NR: usize, const P: usize, const X: usize, const R: usize>(
    key: &KeyData<V, NR, P, X>,
    ctr: Block,
    first: impl Fn(usize) -> i32,
    mut extra: Option<(&[[u8; 16]; 15], &mut Block)>,
) -> ([V; R], V) {
    // SAFETY: the CPU has the module's and `V`'s features (this fn's contract); the loads
    // are whole entries of `key.rk` and `rk2`.
    unsafe {
        let counters = V::counters(ctr);
        let k0 = V::broadcast(key.rk[0].as_ptr());
        let mut x = [V::zero(); R];
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = counters.add_ctr(first(j)).bswap().xor(k0);
        }
        if let Some((rk2, y)) = extra.as_mut() {
            **y = y.xor(arch::load(&rk2[0]));
        }
        each_round!(V::UNROLL_ROUNDS, NR, |r| {
            let k = V::broadcast(core::hint::black_box(&key.rk)[r].as_ptr());
            for xj in x.iter_mut() {
                *xj = xj.aesenc(k).fence();
            }
            if let Some((rk2, y)) = extra.as_mut() {
                **y = y.aesenc(arch::load(&rk2[r]));
            }
        });
        let klast = V::broadcast(key.rk[NR].as_ptr());
        if let Some((rk2, y)) = extra {
            *y = y.aesenclast(arch::load(&rk2[NR]));
        }
        (x, klast)
    }
}

/// A record's tail of `len` bytes at `p` (`(R - 1) * V::BLOCKS * 16 + 1`
/// to `R * V::BLOCKS * 16`, the last register partly filled), from counter `ctr`, encrypted or
/// decrypted in place in one AES pass of `R` registers, then hashed from
/// the registers with `acc` and `lengths` in one reduction; `extra`, if
/// any, is one more block encrypted in the same rounds under its own round
/// keys. Where `Lanes::MASKED`, in place of `wide_tail` and the single
/// blocks after it (two AES passes; docs/decisions.md, "The record's
/// tail").
///
/// The last register is right-aligned: its `b` blocks with data sit in
/// its top lanes, its counters and its 64-byte window start `4 - b` blocks
/// earlier, and only the data's bytes are loaded, stored and hashed (the
/// lanes below hold keystream of earlier blocks, never stored). Its lane
/// `i` then takes H^(5 - i), the power its block needs before the lengths
/// block (H^1), whatever `b`: one power load for every length.
///
/// # Safety
/// The CPU has the module's and `V`'s features and `V::MASKED`; `p` is
/// valid for reads and writes of `len` bytes; `len.div_ceil(16) + 1 <= P`.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // always inlined; each is the tail's
pub(super) unsafe fn masked_tail<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const R: usize,
>(
    key: &KeyData<V, NR, P, X>,
    ctr: Block,
    p: *mut u8,
    len: usize,
    dir: Direction,
    acc: Block,
    lengths: Block,
    extra: Option<(&[[u8; 16]; 15], &mut Block)>,
) -> Block {
    // SAFETY: the CPU has the module's and `V`'s features with byte masks (this fn's
    // contract). Registers `j < R - 1` are whole, at `p + 64j`, within `len`; the last
    // register's window starts `16 * (4 - b)` bytes before its data (computed with
    // `wrapping_sub`: before the buffer when the tail is the whole record, which the window
    // may then reach into without touching), and its mask selects exactly the data's bytes,
    // `[p + 64(R-1), p + len)`, the only ones its masked load and store access; `power`
    // asserts its exponents.
    unsafe {
        const { assert!(R >= 1) };
        let reg = V::BLOCKS * 16;
        debug_assert!(
            V::MASKED && V::BLOCKS == 4,
            "64-byte registers with byte masks"
        );
        // Public lengths; a wrong count would misplace the masked window.
        assert!(len > (R - 1) * reg && len <= R * reg, "R registers of tail");
        let last_len = len - (R - 1) * reg;
        let b = last_len.div_ceil(16);
        let shift = V::BLOCKS - b;
        let blocks = (R - 1) * V::BLOCKS + b;
        let data_mask = if last_len == 64 {
            u64::MAX
        } else {
            (1u64 << last_len) - 1
        };
        let mask = data_mask << (16 * shift);
        let window = p.add((R - 1) * reg).wrapping_sub(16 * shift);
        // The last register starts `shift` blocks early (right-aligned).
        let (x, klast) = aes_pass::<V, NR, P, X, R>(
            key,
            ctr,
            |j| (j * V::BLOCKS) as i32 - if j + 1 < R { 0 } else { shift as i32 },
            extra,
        );
        // The last register's input loaded before any store: its window
        // overlaps the register before it, and the load waited on that
        // store. (All inputs loaded first, eight registers of AES-256
        // spilled plaintext.)
        let last_input = V::load_masked(window, mask);
        let mut wide = Acc::<V>::new();
        for (j, xj) in x.iter().enumerate() {
            let (ct, k) = if j + 1 < R {
                let at = p.add(j * reg);
                let input = V::loadu(at);
                let output = xj.aesenclast(klast.xor(input));
                output.storeu(at);
                let ct = if dir == Direction::Seal {
                    output
                } else {
                    input
                };
                (ct, blocks + 1 - j * V::BLOCKS)
            } else {
                let (_, ct) = last_round_masked(*xj, klast, last_input, window, mask, dir);
                (ct, V::BLOCKS + 1)
            };
            let mut d = ct.bswap();
            if j == 0 && R > 1 {
                d = d.xor(V::from_first(acc));
            }
            let (h, hx) = key.power::<V>(k);
            wide.mul_add(d, h, hx);
        }
        let mut narrow = Acc::<Block>::new();
        if R == 1 {
            // The running value's block would be a lane of the right-aligned
            // register: it takes its power alone.
            let (h, hx) = key.power::<Block>(blocks + 1);
            narrow.mul_add(acc, h, hx);
        }
        let (h, hx) = key.power::<Block>(1);
        narrow.mul_add(lengths, h, hx);
        wide.finish_with(narrow)
    }
}

/// The last AES round of register `x` over `input`, the bytes `mask`
/// selects at `window`, its output stored there under the mask. Returns
/// the output and the block to hash: the ciphertext, zero outside the mask
/// (keystream past the data, and of the lanes below it, never reaches the
/// hash).
///
/// # Safety
/// The CPU has the module's and `V`'s features and `V::MASKED`; the bytes
/// `mask` selects at `window` are valid for writes.
#[inline(always)]
unsafe fn last_round_masked<V: Lanes>(
    x: V,
    klast: V,
    input: V,
    window: *mut u8,
    mask: u64,
    dir: Direction,
) -> (V, V) {
    // SAFETY: register-only `Lanes` methods and one masked store of the selected bytes,
    // which this fn's contract makes writable.
    unsafe {
        let output = x.aesenclast(klast.xor(input));
        output.store_masked(window, mask);
        let ct = if dir == Direction::Seal {
            output.keep_masked(mask)
        } else {
            input
        };
        (output, ct)
    }
}

/// The byte mask of a 64-byte register whose bytes `lo..hi` are selected
/// (none where `hi <= lo`).
#[inline(always)]
fn byte_mask(lo: usize, hi: usize) -> u64 {
    let below = |k: usize| if k >= 64 { u64::MAX } else { (1u64 << k) - 1 };
    below(hi) & !below(lo)
}

/// A record of `len` bytes at `p` (at most 27 blocks; AAD of at most 64
/// bytes) encrypted or decrypted in place in one AES
/// pass of `R` registers that also makes E(K, J0); returns the unreduced
/// GHASH's reduction and E(K, J0). Where `Lanes::MASKED`, in place of the
/// short path's single blocks (docs/decisions.md, "Short records on zmm").
///
/// The blocks are right-aligned as in [`masked_tail`]: the data's `b`
/// blocks end in the last register's top lane and J0 takes the lane just
/// before the first, `s = 4R - b - 1` (always in the first register), so
/// lane `g` holds counter J0 + g - s and, for data, takes H^(4R + 1 - g)
/// (one power load a register). That lane's input is masked off (zero),
/// so its output is E(K, J0); the lanes below it hold keystream of
/// counters before J0, never stored or hashed. AAD and lengths blocks
/// take their powers on single blocks; one reduction for all.
///
/// # Safety
/// The CPU has the module's and `V`'s features and `V::MASKED`; `p` is
/// valid for reads and writes of `len` bytes; `aad.len() <= 64`.
#[inline(always)]
pub(super) unsafe fn masked_short<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const R: usize,
>(
    key: &KeyData<V, NR, P, X>,
    j0: Block,
    aad: &[u8],
    p: *mut u8,
    len: usize,
    dir: Direction,
) -> (Block, Block) {
    // SAFETY: the CPU has the module's and `V`'s features with byte masks (this fn's
    // contract). Register `j`'s 64-byte window starts `64j - 16(s + 1)` bytes from `p`
    // (computed with `wrapping_*`: before `p` for the first register, which the window may
    // reach into without touching), and its mask selects exactly the window's bytes within
    // `[p, p + len)`, the only ones its masked load and store access; `power` asserts its
    // exponents (at most `4 + 27 + 1`: the masked keys hold 32).
    unsafe {
        const { assert!(R >= 1) };
        let reg = V::BLOCKS * 16;
        debug_assert!(
            V::MASKED && V::BLOCKS == 4,
            "64-byte registers with byte masks"
        );
        let b = len.div_ceil(16);
        // Public lengths; a wrong count would misplace the masked windows.
        assert!(
            b < R * V::BLOCKS && b + 1 > (R - 1) * V::BLOCKS && aad.len() <= 64,
            "R registers of a one-pass record"
        );
        let s = R * V::BLOCKS - b - 1;
        let (x, klast) =
            aes_pass::<V, NR, P, X, R>(key, j0, |j| (j * V::BLOCKS) as i32 - s as i32, None);
        let lead = 16 * (s + 1);
        let mut wide = Acc::<V>::new();
        let mut ek0 = V::zero();
        for (j, xj) in x.iter().enumerate() {
            let start = j * reg;
            let window = p.wrapping_add(start).wrapping_sub(lead);
            // Window byte `k` is record byte `start + k - lead`.
            let mask = byte_mask(
                lead.saturating_sub(start),
                (len + lead).saturating_sub(start),
            );
            let input = V::load_masked(window, mask);
            let (output, ct) = last_round_masked(*xj, klast, input, window, mask, dir);
            if j == 0 {
                // J0's lane, whose input is zero.
                ek0 = output.keep_masked(0xffff << (16 * s));
            }
            let (h, hx) = key.power::<V>((R - j) * V::BLOCKS + 1);
            wide.mul_add(ct.bswap(), h, hx);
        }
        let a = aad.len().div_ceil(16);
        let mut narrow = Acc::<Block>::new();
        for (t, chunk) in aad.chunks(16).enumerate() {
            let (h, hx) = key.power::<Block>(a + b + 1 - t);
            narrow.mul_add(load_partial(chunk).bswap(), h, hx);
        }
        let (h, hx) = key.power::<Block>(1);
        narrow.mul_add(lengths_block(aad.len(), len), h, hx);
        (wide.finish_with(narrow), ek0.fold())
    }
}

/// The tail's `R` whole registers at `p` (`R * V::BLOCKS` blocks from
/// counter `ctr`), encrypted or decrypted in place, then hashed from the
/// registers with `acc` folded in, followed by `rest` (the byte-reflected
/// blocks after them and the lengths block): one GHASH reduction for the
/// whole tail. Reloading what a seal just stored would wait on its
/// 64-byte stores (docs/decisions.md, "The record's tail").
///
/// # Safety
/// The CPU has the module's and `V`'s features; `p` is valid for reads and
/// writes of `R * V::BLOCKS * 16` bytes; `R * V::BLOCKS + rest.len() <= P`.
#[inline(always)]
pub(super) unsafe fn wide_tail<
    V: Lanes,
    const NR: usize,
    const P: usize,
    const X: usize,
    const R: usize,
>(
    key: &KeyData<V, NR, P, X>,
    ctr: Block,
    p: *mut u8,
    dir: Direction,
    acc: Block,
    rest: &[Block],
) -> Block {
    // SAFETY: the CPU has the module's and `V`'s features and `p` is valid for
    // `R * V::BLOCKS * 16` bytes (this fn's contract): each load and store is one
    // register at `j * V::BLOCKS * 16`, `j < R`; `power` asserts its exponents.
    unsafe {
        let (x, klast) = aes_pass::<V, NR, P, X, R>(key, ctr, |j| (j * V::BLOCKS) as i32, None);
        let after = rest.len();
        let mut wide = Acc::<V>::new();
        for (j, xj) in x.iter().enumerate() {
            let at = p.add(j * V::BLOCKS * 16);
            let input = V::loadu(at);
            let output = xj.aesenclast(klast.xor(input));
            output.storeu(at);
            let ct = if dir == Direction::Seal {
                output
            } else {
                input
            };
            let mut d = ct.bswap();
            if j == 0 {
                d = d.xor(V::from_first(acc));
            }
            let (h, hx) = key.power::<V>((R - j) * V::BLOCKS + after);
            wide.mul_add(d, h, hx);
        }
        let mut narrow = Acc::<Block>::new();
        for (i, &b) in rest.iter().enumerate() {
            let (h, hx) = key.power::<Block>(after - i);
            narrow.mul_add(b, h, hx);
        }
        wide.finish_with(narrow)
    }
}
