//! Where the record's buffer lies, swept: one of our backends and ring,
//! one algorithm and size, with the buffer at every 64-byte offset of a
//! 4 KiB page, each offset timed for both in turn (best of 7 bursts of 300
//! records). It separates layout effects (a slow offset, every run) from
//! periods of the machine (a stretch of consecutive offsets, in some runs,
//! in which ring slows too).
//!
//! ```text
//! taskset -c 1 cargo bench -p rustls-fusion-benches --bench address_sweep -- ALG SIZE BACKEND [seal|open]
//! ```
//! e.g. `chacha 1350 x86-avx2 open`. Opens go through
//! `records::Toggle` (no copy between them). A row is marked `<<` where ours is over
//! 1.08× its fastest offset.

use std::hint::black_box;
use std::time::Instant;

use rustls_fusion_benches::records::{self, Alg, Imp, Toggle};
use rustls_fusion_benches::reference::Reference;

const BURSTS: usize = 7;
const CALLS: usize = 300;

/// Best ns per record of `imp` on `buf`, sealing or opening.
fn time(imp: &Imp, buf: &mut [u8], open: bool) -> f64 {
    let pt = buf.to_vec();
    let tag = imp.seal(buf);
    let mut toggle = Toggle::new(imp, buf, tag);
    let mut best = f64::MAX;
    for _ in 0..BURSTS {
        let t = Instant::now();
        for _ in 0..CALLS {
            if open {
                assert!(toggle.open(imp, buf), "the record opens");
            } else {
                black_box(imp.seal(buf));
                toggle.sealed();
            }
        }
        best = best.min(t.elapsed().as_nanos() as f64 / CALLS as f64);
    }
    buf.copy_from_slice(&pt);
    best
}

fn main() {
    let (alg, len, backend, open, _) = records::sweep_args("ALG SIZE BACKEND [seal|open]");
    let key = alg.key();
    let ours = Imp::ours(alg, &key, backend);
    let ring = Imp::Reference(Reference::ring(alg == Alg::ChaCha, &key));
    let mut page = vec![0xabu8; 2 * 4096 + len];
    let start = page.as_ptr().align_offset(4096);
    println!(
        "{} {len} B {}, {backend} and ring, buffer at each 64-byte offset of a page (ns per record)",
        alg.name(),
        if open { "open" } else { "seal" }
    );
    let mut rows = Vec::new();
    for off in (0..4096).step_by(64) {
        let buf = &mut page[start + off..start + off + len];
        let t_ours = time(&ours, buf, open);
        let t_ring = time(&ring, buf, open);
        rows.push((off, t_ours, t_ring));
    }
    let fastest = rows.iter().map(|r| r.1).fold(f64::MAX, f64::min);
    for (off, t_ours, t_ring) in rows {
        let mark = if t_ours > fastest * 1.08 { " <<" } else { "" };
        println!("{off:4}  ours {t_ours:7.1}  ring {t_ring:7.1}{mark}");
    }
}
