//! Every ChaCha20-Poly1305 engine entry point that spills vector rows runs
//! inside the half page below its caller's frame, which the keystream
//! scratch aligns to 2048 bytes: no spill slot can then straddle a page
//! boundary (docs/decisions.md, "Engine frames inside one page"). The
//! frames are measured as the stack scrub measures them, on every backend
//! this CPU runs, at lengths that reach each path that spills: a ymm
//! short seal (321–448 bytes) and short open (449–576), mid-size records
//! on the zmm engines' ymm lanes, and long records.
//!
//! Release builds only (an unoptimised frame is far larger); built with
//! feature `audit` (part of the test command).
#![cfg(feature = "audit")]

use rustls_fusion::aead::audit::take_entry_frame;
use rustls_fusion::aead::{Backend, ChaCha20Poly1305};

/// The half page the `Key` frame's alignment leaves below it.
const HALF_PAGE: usize = 2048;
const LENGTHS: [usize; 8] = [400, 500, 600, 900, 1350, 2000, 4103, 16384];

#[test]
fn chacha_entry_frames_fit_in_half_a_page() {
    if cfg!(debug_assertions) {
        return;
    }
    let key = [0x42u8; 32];
    let nonce = [7u8; 12];
    let engines: Vec<Backend> = ChaCha20Poly1305::backends()
        .into_iter()
        .filter(|&b| b != Backend::Base)
        .collect();
    let mut checked = 0;
    for &backend in &engines {
        let k = ChaCha20Poly1305::with_backend(&key, backend).expect("detected");
        for n in LENGTHS {
            let mut buf = vec![0x5au8; n];
            take_entry_frame();
            let tag = k.seal_in_place(&nonce, b"aad", &mut buf);
            let seal = take_entry_frame();
            k.open_in_place(&nonce, b"aad", &mut buf, &tag)
                .expect("opens");
            let open = take_entry_frame();
            for (op, used) in [("seal", seal), ("open", open)] {
                assert!(
                    used <= HALF_PAGE,
                    "{backend} {op} of {n} bytes: entry frame {used} bytes, more than half a page"
                );
                // 0: a path that spills nothing, so measures nothing.
                checked += usize::from(used > 0);
            }
        }
    }
    assert!(
        engines.is_empty() || checked > 0,
        "no entry point measured: the hook in `Frame::reached` is not called"
    );
}
