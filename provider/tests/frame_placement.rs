//! Every engine entry point that spills runs inside one half page: the
//! frame it is called from is aligned to 2048 bytes (the ChaCha20-Poly1305
//! keystream scratch, the AES-GCM `HalfPage`), so no spill slot can
//! straddle a page boundary (docs/decisions.md, "Engine frames inside one
//! page"). The frames are measured as the stack scrub measures them, on
//! every backend this CPU runs, at lengths that reach each path that
//! spills: for ChaCha20-Poly1305 a ymm short open (449–576 bytes),
//! mid-size records on the zmm engines' ymm lanes (on Zen 4; zmm lanes
//! elsewhere: each CPU checks the routes its keys take), and long records; for
//! AES-GCM every record past the short path that scrubs (at opt-level 3
//! those that spill nothing, `Lanes::batches_spill`, measure nothing; the
//! hoisted ymm seals from 4 KiB scrub a fixed depth and are not measured;
//! nor is the QUIC seal
//! with a header-protection block, `seal_with_block_placed`, which takes
//! the same placement but is not public).
//!
//! Release builds only (an unoptimised frame is far larger); built with
//! feature `audit` (part of the test command).
#![cfg(feature = "audit")]

use rustls_fusion::aead::audit::{take_entry_frame, EntryFrame};
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305};

const HALF_PAGE: usize = 2048;
const LENGTHS: [usize; 10] = [128, 256, 400, 500, 600, 900, 1350, 2000, 4103, 16384];
const NONCE: [u8; 12] = [7; 12];

/// Checks one measured frame; true if there was one (a path that spills
/// nothing measures nothing).
fn check(what: &str, frame: Option<EntryFrame>) -> bool {
    let Some(EntryFrame { top, bottom }) = frame else {
        return false;
    };
    assert_eq!(
        top % HALF_PAGE,
        0,
        "{what}: called from {top:#x}, not from a frame aligned to half a page"
    );
    assert!(
        top - bottom <= HALF_PAGE,
        "{what}: entry frame {} bytes, more than half a page",
        top - bottom
    );
    true
}

/// Seals and opens each length on each backend but `Base`; returns how
/// many frames were measured.
fn sweep<K>(
    alg: &str,
    backends: Vec<Backend>,
    key: impl Fn(Backend) -> K,
    seal: impl Fn(&K, &mut Vec<u8>) -> [u8; 16],
    open: impl Fn(&K, &mut Vec<u8>, &[u8; 16]),
) -> usize {
    let mut checked = 0;
    for backend in backends.into_iter().filter(|&b| b != Backend::Base) {
        let k = key(backend);
        for n in LENGTHS {
            let mut buf = vec![0x5au8; n];
            take_entry_frame();
            let tag = seal(&k, &mut buf);
            checked += usize::from(check(
                &format!("{alg} {backend} seal of {n} bytes"),
                take_entry_frame(),
            ));
            open(&k, &mut buf, &tag);
            checked += usize::from(check(
                &format!("{alg} {backend} open of {n} bytes"),
                take_entry_frame(),
            ));
        }
    }
    checked
}

/// `$measured`: whether some record path here scrubs a measured frame (then
/// some frame must be measured: the audit hook is called), or none does
/// (then none may be).
macro_rules! engines {
    ($test:ident, $ty:ident, $key_len:literal, $measured:expr) => {
        #[test]
        fn $test() {
            if cfg!(debug_assertions) {
                return;
            }
            let backends = $ty::backends();
            let engines = backends.iter().filter(|&&b| b != Backend::Base).count();
            let checked = sweep(
                stringify!($ty),
                backends,
                |b| $ty::with_backend(&[0x42; $key_len], b).expect("detected"),
                |k, buf| k.seal_in_place(&NONCE, b"aad", buf),
                |k, buf, tag| k.open_in_place(&NONCE, b"aad", buf, tag).expect("opens"),
            );
            if $measured {
                assert!(
                    engines == 0 || checked > 0,
                    "no entry point measured: the hook in `Frame::reached` is not called"
                );
            } else {
                assert_eq!(
                    checked, 0,
                    "a record that skips the scrub measured its frame"
                );
            }
        }
    };
}

engines!(
    chacha20_poly1305_entry_frames_in_half_a_page,
    ChaCha20Poly1305,
    32,
    true
);
engines!(
    aes_128_gcm_entry_frames_in_half_a_page,
    Aes128Gcm,
    16,
    aes_records_scrub()
);
engines!(
    aes_256_gcm_entry_frames_in_half_a_page,
    Aes256Gcm,
    32,
    aes_records_scrub()
);

/// Whether AES-GCM records here scrub a measured frame: everywhere but at
/// opt-level 3 on an x86-64 CPU with AVX, where every engine's records
/// spill nothing and skip the scrub (`Lanes::batches_spill`; the hoisted
/// ymm seals' fixed-depth scrub is not measured). There the hook is
/// checked by the ChaCha20-Poly1305 test, and these check that nothing is
/// measured.
fn aes_records_scrub() -> bool {
    #[cfg(target_arch = "x86_64")]
    if cfg!(fusion_opt3) && std::arch::is_x86_feature_detected!("avx") {
        return false;
    }
    true
}
