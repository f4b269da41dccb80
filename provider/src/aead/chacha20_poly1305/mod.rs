//! ChaCha20-Poly1305 (RFC 8439).
//!
//! Backends, best first: on x86-64 `X86Avx512Ifma` and `X86Avx512` (16
//! blocks per pass on zmm), `X86Avx2` (8 on ymm), `X86Ssse3` (4 on xmm, for
//! x86-64 CPUs without AVX2), then `Base`; on aarch64 `Base`, then
//! `Aarch64Neon` (8 on NEON register pairs; not yet the default). All are
//! one kernel (`kernel/`, no architecture in it) over their lane type,
//! with scalar Poly1305 stitched in; each architecture's row register is
//! in `x86_64.rs` or `aarch64.rs`. `Base` is the base provider's
//! ChaCha20-Poly1305.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
mod aarch64_neon;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod kernel;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod poly1305;
#[cfg(target_arch = "x86_64")]
mod poly1305_ifma;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
mod x86_avx2;
#[cfg(target_arch = "x86_64")]
mod x86_avx512;
#[cfg(target_arch = "x86_64")]
mod x86_avx512_ifma;
#[cfg(target_arch = "x86_64")]
mod x86_ssse3;

/// The kernel's row register, for this architecture.
#[cfg(target_arch = "aarch64")]
use aarch64 as arch;
#[cfg(target_arch = "x86_64")]
use x86_64 as arch;

use super::base::Base;
use super::secret::SetupStack;
use super::{aead_type, Algorithm, Backend, Engine, Hardening, OpenError, NONCE_LEN, TAG_LEN};
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use crate::cpu::Features;

/// The ChaCha20-Poly1305 engines.
pub(crate) enum Engines {
    Base(Base),
    #[cfg(target_arch = "x86_64")]
    Avx2(x86_avx2::Key),
    #[cfg(target_arch = "x86_64")]
    Avx512(x86_avx512::Key),
    #[cfg(target_arch = "x86_64")]
    Avx512Ifma(x86_avx512_ifma::Key),
    #[cfg(target_arch = "x86_64")]
    Ssse3(x86_ssse3::Key),
    #[cfg(target_arch = "aarch64")]
    Neon(aarch64_neon::Key),
}

/// Runs `$body` with `$k` bound to whichever of our engines `$self` holds, or
/// `$base` for `Base`.
macro_rules! each_engine {
    ($self:expr, $k:ident => $body:expr, $b:ident => $base:expr) => {
        match $self {
            Engines::Base($b) => $base,
            #[cfg(target_arch = "x86_64")]
            Engines::Avx2($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Engines::Avx512($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Engines::Avx512Ifma($k) => $body,
            #[cfg(target_arch = "x86_64")]
            Engines::Ssse3($k) => $body,
            #[cfg(target_arch = "aarch64")]
            Engines::Neon($k) => $body,
        }
    };
}

/// ChaCha20's block function on one of our engines' widths (QUIC header
/// protection, RFC 9001 §5.4.4): the key words inline, with no allocation
/// of its own.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) enum Blocks {
    #[cfg(target_arch = "x86_64")]
    Avx2(x86_avx2::Blocks),
    #[cfg(target_arch = "x86_64")]
    Avx512(x86_avx512::Blocks),
    #[cfg(target_arch = "x86_64")]
    Avx512Ifma(x86_avx512_ifma::Blocks),
    #[cfg(target_arch = "x86_64")]
    Ssse3(x86_ssse3::Blocks),
    #[cfg(target_arch = "aarch64")]
    Neon(aarch64_neon::Blocks),
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
impl Blocks {
    /// The block function on the width of `backend`'s engine, or `None` if
    /// `backend` is not one of our ChaCha20 engines or cannot run here.
    /// Inlined into the caller's setup frame, so the words can go from the
    /// key straight to where the caller writes the block key.
    #[inline(always)]
    pub(crate) fn new(key: &[u8; 32], backend: Backend) -> Option<Self> {
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx2 => x86_avx2::Blocks::new(key).map(Self::Avx2),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512 => x86_avx512::Blocks::new(key).map(Self::Avx512),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512Ifma => x86_avx512_ifma::Blocks::new(key).map(Self::Avx512Ifma),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Ssse3 => x86_ssse3::Blocks::new(key).map(Self::Ssse3),
            #[cfg(target_arch = "aarch64")]
            Backend::Aarch64Neon => aarch64_neon::Blocks::new(key).map(Self::Neon),
            _ => None,
        }
    }

    /// Whether a lone input runs in vector rows (`kernel::Blocks`).
    #[cfg(test)]
    pub(crate) fn rows(&self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(k) => k.rows(),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512(k) => k.rows(),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512Ifma(k) => k.rows(),
            #[cfg(target_arch = "x86_64")]
            Self::Ssse3(k) => k.rows(),
            #[cfg(target_arch = "aarch64")]
            Self::Neon(k) => k.rows(),
        }
    }

    /// This block key with lone inputs in vector rows or in general
    /// registers where its engine has the rows (`kernel::Blocks`): the
    /// tests run both on every CPU with AVX2.
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn with_rows(self, rows: bool) -> Self {
        match self {
            Self::Avx2(k) => Self::Avx2(k.with_rows(rows)),
            Self::Avx512(k) => Self::Avx512(k.with_rows(rows)),
            Self::Avx512Ifma(k) => Self::Avx512Ifma(k.with_rows(rows)),
            Self::Ssse3(k) => Self::Ssse3(k.with_rows(rows)),
        }
    }

    /// The first `B` bytes of the ChaCha20 block of each 16-byte
    /// `LE32(counter) ‖ nonce` input (RFC 8439 §2.3).
    ///
    /// # Panics
    /// If the lengths differ, or `B > 16`.
    pub(crate) fn apply<const B: usize>(&self, inputs: &[[u8; 16]], out: &mut [[u8; B]]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(k) => k.apply(inputs, out),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512(k) => k.apply(inputs, out),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512Ifma(k) => k.apply(inputs, out),
            #[cfg(target_arch = "x86_64")]
            Self::Ssse3(k) => k.apply(inputs, out),
            #[cfg(target_arch = "aarch64")]
            Self::Neon(k) => k.apply(inputs, out),
        }
    }
}

impl Engines {
    /// The key on `backend`, its words in a box of their own on our
    /// engines (a standalone key, which its caller moves freely).
    fn make(key: &[u8; 32], backend: Backend) -> Option<Self> {
        match backend {
            Backend::Base => Some(Self::Base(Base::new(Algorithm::ChaCha20Poly1305, key))),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx2 => x86_avx2::Key::new(key).map(Self::Avx2),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512 => x86_avx512::Key::new(key).map(Self::Avx512),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512Ifma => x86_avx512_ifma::Key::new(key).map(Self::Avx512Ifma),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Ssse3 => x86_ssse3::Key::new(key).map(Self::Ssse3),
            #[cfg(target_arch = "aarch64")]
            Backend::Aarch64Neon => aarch64_neon::Key::new(key).map(Self::Neon),
            _ => None,
        }
    }

    /// An unkeyed key with inline words on one of our engines
    /// (`Key::unkeyed`); `None` for `Base` and engines that cannot run here.
    fn unkeyed(backend: Backend) -> Option<Self> {
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx2 => x86_avx2::Key::unkeyed().map(Self::Avx2),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512 => x86_avx512::Key::unkeyed().map(Self::Avx512),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Avx512Ifma => x86_avx512_ifma::Key::unkeyed().map(Self::Avx512Ifma),
            #[cfg(target_arch = "x86_64")]
            Backend::X86Ssse3 => x86_ssse3::Key::unkeyed().map(Self::Ssse3),
            #[cfg(target_arch = "aarch64")]
            Backend::Aarch64Neon => aarch64_neon::Key::unkeyed().map(Self::Neon),
            _ => None,
        }
    }
}

impl Engine for Engines {
    type Key = [u8; 32];

    #[cfg(target_arch = "x86_64")]
    const ORDER: &'static [Backend] = &[
        Backend::X86Avx512Ifma,
        Backend::X86Avx512,
        Backend::X86Avx2,
        Backend::X86Ssse3,
        Backend::Base,
    ];
    #[cfg(target_arch = "aarch64")]
    const ORDER: &'static [Backend] = &[Backend::Aarch64Neon, Backend::Base];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const ORDER: &'static [Backend] = &[Backend::Base];

    fn runs(backend: Backend) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = Features::get();
            match backend {
                Backend::X86Avx512Ifma => cpu.avx2 && cpu.avx512ifma,
                Backend::X86Avx512 => cpu.avx2 && cpu.avx512,
                Backend::X86Avx2 => cpu.avx2,
                Backend::X86Ssse3 => cpu.ssse3,
                _ => backend == Backend::Base,
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            match backend {
                Backend::Aarch64Neon => Features::get().neon,
                _ => backend == Backend::Base,
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            backend == Backend::Base
        }
    }

    /// The NEON engine is listed, pinnable and tested, but demoted below
    /// `Base` until hardware, or both the cycle models and the instruction
    /// counts, show it at least as fast as the base provider's
    /// (docs/decisions.md, "ChaCha20 on NEON").
    #[cfg(target_arch = "aarch64")]
    fn demoted(backend: Backend) -> bool {
        backend == Backend::Aarch64Neon
    }

    fn new(key: &[u8; 32], backend: Backend, _: &mut SetupStack) -> Option<Self> {
        // No setup frame holds the words (`Key::new`): nothing to mark.
        Self::make(key, backend)
    }

    // Where `Base` is the only engine, the pattern cannot fail.
    #[allow(irrefutable_let_patterns)]
    fn harden(&mut self, hardening: Hardening) {
        if let Self::Base(k) = self {
            k.harden(hardening);
        }
    }

    fn backend(&self) -> Backend {
        match self {
            Self::Base(_) => Backend::Base,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2(_) => Backend::X86Avx2,
            #[cfg(target_arch = "x86_64")]
            Self::Avx512(_) => Backend::X86Avx512,
            #[cfg(target_arch = "x86_64")]
            Self::Avx512Ifma(_) => Backend::X86Avx512Ifma,
            #[cfg(target_arch = "x86_64")]
            Self::Ssse3(_) => Backend::X86Ssse3,
            #[cfg(target_arch = "aarch64")]
            Self::Neon(_) => Backend::Aarch64Neon,
        }
    }

    // Inlined: the match runs in the caller's frame (docs/decisions.md,
    // "One dispatch frame").
    #[inline(always)]
    fn seal(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        src: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_LEN] {
        each_engine!(self, k => k.seal(nonce, aad, src, buf), b => b.seal(nonce, aad, src, buf))
    }

    // Inlined: the match runs in the caller's frame (docs/decisions.md,
    // "One dispatch frame").
    #[inline(always)]
    fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), OpenError> {
        each_engine!(self, k => k.open(nonce, aad, buf, tag), b => b.open(nonce, aad, buf, tag))
    }
}

aead_type!(
    /// ChaCha20-Poly1305: 32-byte key, 12-byte nonce, 16-byte tag.
    ChaCha20Poly1305,
    Engines,
    32
);

impl ChaCha20Poly1305 {
    /// The key on one of our engines with `hardening`, its words inline and
    /// still zero: made only for a holder's box, where
    /// [`ChaCha20Poly1305::key_in_place`] keys it (`AnyKey::boxed_in`).
    /// `None` for `Base` and engines that cannot run here.
    pub(crate) fn unkeyed(backend: Backend, hardening: Hardening) -> Option<Self> {
        let mut engine = Engines::unkeyed(backend)?;
        engine.harden(hardening);
        Some(Self(engine))
    }

    /// Writes `key`'s words into this key where it lies (`Key::key_in_place`).
    /// A `Base` key was keyed when made and is left as it is.
    #[inline(always)]
    pub(crate) fn key_in_place(&mut self, key: &[u8; 32]) {
        match &mut self.0 {
            Engines::Base(_) => {}
            #[cfg(target_arch = "x86_64")]
            Engines::Avx2(k) => k.key_in_place(key),
            #[cfg(target_arch = "x86_64")]
            Engines::Avx512(k) => k.key_in_place(key),
            #[cfg(target_arch = "x86_64")]
            Engines::Avx512Ifma(k) => k.key_in_place(key),
            #[cfg(target_arch = "x86_64")]
            Engines::Ssse3(k) => k.key_in_place(key),
            #[cfg(target_arch = "aarch64")]
            Engines::Neon(k) => k.key_in_place(key),
        }
    }
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::{Blocks, ChaCha20Poly1305};

    /// The AVX-512 engines' records under each choice a key makes for its
    /// CPU (both run here on every CPU with AVX-512): the fused 2-block
    /// call on and off, 0–80 bytes (the fused call ends at 64), and both
    /// routings of mid-size records (`zmm_takes_ymm`) and both bounds of
    /// the IFMA engine's phases (1984 bytes on Zen 4, 4 KiB elsewhere),
    /// about those bounds from 400 bytes to 4 KiB; against ring, AAD of
    /// 0–20 bytes; a record opened with a changed tag fails and leaves the
    /// buffer zeroed.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_cpu_choice_matches_ring() {
        use super::{x86_avx512, x86_avx512_ifma};
        use crate::aead::engine_check::seal_open_reject;
        use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};
        let mut seed = 0x0f05_ed00u64;
        let mut byte = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 56) as u8
        };
        let mid = [
            400, 448, 449, 500, 576, 577, 640, 832, 833, 900, 959, 960, 1024, 1350, 1664, 1665,
            1792, 1793, 1984, 1985, 2000, 3000, 4096, 4097,
        ];
        let lengths: Vec<usize> = (0..=80).chain(mid).collect();
        let mut ran = 0;
        for (fused, split) in [(false, false), (true, false), (false, true), (true, true)] {
            for &n in &lengths {
                let key: [u8; 32] = core::array::from_fn(|_| byte());
                let nonce: [u8; 12] = core::array::from_fn(|_| byte());
                let aad: Vec<u8> = (0..n % 21).map(|_| byte()).collect();
                let pt: Vec<u8> = (0..n).map(|_| byte()).collect();
                let ring_key = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &key).unwrap());
                let mut want = pt.clone();
                let want_tag: [u8; 16] = ring_key
                    .seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::from(&aad),
                        &mut want,
                    )
                    .unwrap()
                    .as_ref()
                    .try_into()
                    .unwrap();
                macro_rules! check {
                    ($key:expr, $name:literal) => {
                        if let Some(k) = $key.map(|k| k.with_fused(fused).with_zmm_split(split)) {
                            ran += 1;
                            let what = format!("{} fused {fused} split {split}, {n} bytes", $name);
                            seal_open_reject(
                                &what,
                                &pt,
                                (&want, want_tag),
                                |buf| k.seal(&nonce, &aad, &pt, buf),
                                |buf, tag| k.open(&nonce, &aad, buf, tag),
                            );
                        }
                    };
                }
                check!(x86_avx512::Key::new(&key), "X86Avx512");
                check!(x86_avx512_ifma::Key::new(&key), "X86Avx512Ifma");
            }
        }
        // Every engine this CPU runs (`X86Avx512`, and `X86Avx512Ifma` with
        // IFMA) at every length and choice.
        let cpu = crate::cpu::Features::get();
        let engines = usize::from(cpu.avx512) + usize::from(cpu.avx512ifma);
        assert_eq!(ran, engines * 4 * lengths.len());
    }

    /// Independent blocks (header protection): RFC 8439 §2.3.2's block, and
    /// random inputs against RustCrypto's ChaCha20 seeked to each input's
    /// counter, on every backend of ours, for batch sizes 0..=40; a lone
    /// input (1 of the batch sizes, 16 or 5 bytes out) both in vector rows
    /// and in general registers where the engine has the rows
    /// (`Blocks::with_rows`: the AVX2 and AVX-512 engines, whatever this
    /// CPU's choice).
    #[test]
    fn independent_blocks_match_rfc_8439_and_rustcrypto() {
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
        let mut rows_ran = 0;
        for (backend, rows) in ChaCha20Poly1305::backends()
            .into_iter()
            .flat_map(|b| [(b, false), (b, true)])
        {
            let Some(k) = Blocks::new(&key, backend) else {
                continue; // Base: no block call
            };
            #[cfg(target_arch = "x86_64")]
            let k = k.with_rows(rows);
            rows_ran += usize::from(k.rows());
            if rows && !k.rows() {
                continue; // no rows on this engine: the lone input ran above
            }
            let mut out = [[0u8; 16]];
            k.apply(&[input], &mut out);
            assert_eq!(out[0], want, "{backend}, rows {rows}");
            // Batches run vertical passes either way: once.
            let sizes = if rows { 1..=1 } else { 0..=40 };
            for n in sizes {
                let inputs: Vec<[u8; 16]> =
                    (0..n).map(|_| core::array::from_fn(|_| byte())).collect();
                let mut out = vec![[0u8; 16]; n];
                k.apply(&inputs, &mut out);
                let mut five = vec![[0u8; 5]; n];
                k.apply(&inputs, &mut five);
                for ((i, o), f) in inputs.iter().zip(&out).zip(&five) {
                    let counter = u32::from_le_bytes(i[..4].try_into().unwrap());
                    let mut c = chacha20::ChaCha20::new(&key.into(), i[4..].try_into().unwrap());
                    c.seek(u64::from(counter) * 64);
                    let mut ks = [0u8; 16];
                    c.apply_keystream(&mut ks);
                    assert_eq!(*o, ks, "{backend}, rows {rows}, batch of {n}");
                    assert_eq!(
                        f[..],
                        ks[..5],
                        "{backend}, rows {rows}, batch of {n}, 5 bytes"
                    );
                }
            }
        }
        // The rows ran on every AVX2 and AVX-512 engine this CPU runs.
        #[cfg(target_arch = "x86_64")]
        {
            let cpu = crate::cpu::Features::get();
            assert_eq!(
                rows_ran,
                usize::from(cpu.avx2) + usize::from(cpu.avx512) + usize::from(cpu.avx512ifma)
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(rows_ran, 0);
    }
}
