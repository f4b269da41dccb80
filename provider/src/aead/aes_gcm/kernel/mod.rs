//! The AES-GCM kernel every engine runs: key setup (the GHASH key powers
//! over the architecture's key schedule) and one stitched seal/open,
//! generic over the register width ([`Lanes`]: one block per register
//! for [`Block`](super::arch::Block), two per ymm and four per zmm for
//! VAES). No architecture is named here: the one-block register, its
//! conversions, the key schedule and the detection of the **block
//! features** (x86-64: AES-NI, PCLMULQDQ, SSSE3) are in `x86_64.rs` one
//! level up, imported as `arch`. Each backend instantiates the kernel
//! inside its own `#[target_feature]` entry points ([`backend!`]), so
//! every helper here is `#[inline(always)]` and compiles with the
//! caller's features.
//!
//! GHASH works on byte-reflected blocks with the key pre-multiplied by
//! x⁻¹ ("twisted" H), so one carry-less product needs no bit shift and one
//! reduction is two carry-less multiplies (Gueron's method, as in the Linux
//! and BoringSSL VAES code). Per key we store H¹…H^P highest first, and
//! where the engine keeps them each power's two 64-bit halves XOR-ed for
//! Karatsuba (three carry-less multiplies per block).
//!
//! Data flow of one seal, one batch per iteration (`Lanes::REGS` registers:
//! 128 bytes on xmm and NEON, 256 on ymm, 512 on zmm): AES-CTR of batch i
//! runs interleaved with GHASH of batch i−1 (stored ciphertext), one reduction per
//! batch; then a half batch if that much is left; then the tail and the
//! length block with one more reduction. Open hashes the batch it decrypts.
//! Records under 128 bytes take a short path: E(J0) and all keystream
//! blocks in one AES pass, then AAD, ciphertext and length block in one
//! GHASH with one reduction. On zmm (byte masks), records up to 432 bytes
//! with AAD of at most 64 run as one masked pass with E(J0) in it instead
//! (`partial::masked_short`).
//!
//! # Safety
//! Every `unsafe fn` here must only run on a CPU with the block features
//! (plus what the [`Lanes`] type needs): the backends call them only
//! from `#[target_feature]` functions that key setup selected after
//! detection. Raw pointers are derived from whole slices (or whole arrays),
//! and every function taking one states the bytes it must be valid for in
//! its `# Safety` section; each `unsafe` block says why its accesses are in
//! bounds.
//!
//! # Layout
//! [`lanes`] (the lane trait), [`key`] (the per-key data, wipes), [`setup`]
//! (GHASH powers, round keys alone), [`ghash`] (products and reduction),
//! [`ctr`] (AES-CTR side by side), [`partial`] (tails under a block),
//! [`batch`] (the stitched batch loops), [`record`] (one record, the entry
//! points) and [`backend`] (the macro each backend file instantiates).
#![allow(unsafe_code)]

/// Runs `$body` with `$r` bound to each round from 1 to `$nr - 1` (the
/// `aesenc` rounds; `$nr` at most 14): unrolled where `$unroll` (a
/// constant: `Lanes::UNROLL_ROUNDS`), else as a loop.
macro_rules! each_round {
    ($unroll:expr, $nr:expr, |$r:ident| $body:block) => {
        if $unroll {
            each_round!(@unrolled $nr, $r, $body, 1 2 3 4 5 6 7 8 9 10 11 12 13);
        } else {
            // The round index names the key: some bodies index two arrays.
            #[allow(clippy::needless_range_loop)]
            for $r in 1..$nr $body
        }
    };
    (@unrolled $nr:expr, $r:ident, $body:block, $($lit:literal)*) => {
        $( if $lit < $nr { let $r: usize = $lit; $body } )*
    };
}

mod backend;
mod batch;
mod ctr;
mod ghash;
mod key;
mod lanes;
mod partial;
mod record;
mod setup;

use crate::aead::Direction;

pub(crate) use backend::Entry;
pub(super) use backend::{backend, Key};
pub(super) use key::{KeyBox, KeyData};
#[cfg(target_arch = "x86_64")]
pub(super) use lanes::BatchKeys;
pub(super) use lanes::{Align16, Lanes, Loops};
#[cfg(target_arch = "x86_64")]
pub(super) use lanes::{Align32, Align64};
#[cfg(test)]
pub(super) use record::seal_with_j0;
pub(super) use record::{open, seal, seal_with_block, Extra};
use record::{open_loop, seal_loop, ALWAYS, BY_LENGTH, LAST, LOOP, NEVER};
pub(super) use setup::expand;
pub(crate) use setup::RoundKeys;

/// Records shorter than this take the short path (on zmm, the one pass in
/// the short path's frame).
const SHORT: usize = 128;

/// Scrubs the stack an entry point used after a record of `n` bytes with
/// `aad_len` bytes of AAD past the short path (which, but on zmm up to
/// 432 bytes, ran batches):
/// `frame`'s call reached `bottom`, the
/// entry point's stack pointer, as the ChaCha20 kernels scrub
/// (`secret::Frame`). The batch loops spill AES states
/// between rounds (AES-128 states in the xmm batches and the ymm open
/// batches compiled from the intrinsics at opt-level 3, where those records
/// run the assembly loops instead; many on zmm at opt-level 2:
/// `tests/stack_residue/`
/// searches every intermediate state), and with their public counter
/// blocks those are known inputs and outputs of reduced-round AES under
/// the key. The short path and the zmm one pass spill none, nor do the
/// records for which `Lanes::batches_spill` is false.
#[inline(always)]
pub(super) fn scrub_batches<V: Lanes, const NR: usize>(
    frame: &mut crate::aead::secret::Frame,
    dir: Direction,
    n: usize,
    aad_len: usize,
    bottom: usize,
) {
    if V::batches_spill(NR, dir) && !short(n, aad_len) {
        frame.reached(bottom);
    }
}

/// Whether a record of `n` bytes with `aad_len` bytes of AAD takes the
/// short path: E(J0) and its keystream in one AES pass, one GHASH reduction
/// (on zmm, `record.rs`'s one pass), from the entry point's own frame and
/// with no stack scrub after it.
#[inline(always)]
pub(super) fn short(n: usize, aad_len: usize) -> bool {
    n < SHORT && aad_len <= 64
}

/// Most registers of AES state in one batch.
const MAX_REGS: usize = 8;

/// Opens of at least this many bytes of whole batches hash with schoolbook
/// products where the lane type prefers them (`Lanes::KARATSUBA`).
const SCHOOLBOOK_OPEN_FROM: usize = 4096;
