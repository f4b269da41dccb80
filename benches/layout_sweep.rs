//! Where the stack lies, swept: one of our backends, one algorithm and
//! size, called with the stack moved down by each 16-byte step of a 4 KiB
//! page (best of 5 bursts of 200 records at each). A frame that reaches a
//! page boundary at a bad place shows as a window of consecutive slow
//! steps, the same in every run of the same binary with address
//! randomisation off; a period of the machine shows as slow steps that
//! move between runs.
//!
//! ```text
//! setarch -R taskset -c 1 cargo bench -p rustls-fusion-benches --bench layout_sweep -- ALG SIZE BACKEND [seal|open] [RECORD_OFFSET]
//! ```
//! e.g. `chacha 1350 x86-avx2 open`. The record's buffer starts
//! `RECORD_OFFSET` bytes (default 0) into a page. Opens go through
//! `records::Toggle` (no copy between them). A step is listed where it is over 1.08× the fastest.
//! `ALL=1` also prints every step's time in the order they ran: a period
//! of the machine shows as a run of slow steps, wherever the stack is.

use std::hint::black_box;
use std::time::Instant;

use rustls_fusion_benches::records::{self, Imp, Toggle};

const BURSTS: usize = 5;
const CALLS: usize = 200;

/// Best ns per record of `imp` on `buf` (holding `sealed`), sealing or opening.
#[inline(never)]
fn time(imp: &Imp, buf: &mut [u8], sealed: &[u8], toggle: Toggle, open: bool) -> f64 {
    buf.copy_from_slice(sealed);
    let mut toggle = toggle;
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
    best
}

/// [`time`] with `K` more bytes of stack above its frame.
#[inline(never)]
fn shifted<const K: usize>(
    imp: &Imp,
    buf: &mut [u8],
    sealed: &[u8],
    toggle: Toggle,
    open: bool,
) -> f64 {
    let pad = [0u8; K];
    black_box(&pad);
    let t = time(imp, buf, sealed, toggle, open);
    black_box(&pad);
    t
}

type Shifted = fn(&Imp, &mut [u8], &[u8], Toggle, bool) -> f64;

macro_rules! steps {
    ($($k:literal)*) => { [$(shifted::<{ $k * 16 }> as Shifted),*] };
}

const STEPS: [Shifted; 256] = steps!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
    64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
    96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127
    128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152 153 154 155 156 157 158 159
    160 161 162 163 164 165 166 167 168 169 170 171 172 173 174 175 176 177 178 179 180 181 182 183 184 185 186 187 188 189 190 191
    192 193 194 195 196 197 198 199 200 201 202 203 204 205 206 207 208 209 210 211 212 213 214 215 216 217 218 219 220 221 222 223
    224 225 226 227 228 229 230 231 232 233 234 235 236 237 238 239 240 241 242 243 244 245 246 247 248 249 250 251 252 253 254 255
);

fn main() {
    let usage = "ALG SIZE BACKEND [seal|open] [RECORD_OFFSET]";
    let (alg, len, backend, open, rest) = records::sweep_args(usage);
    let offset: usize = rest.first().map_or(0, |s| s.parse().expect(usage)) % 4096;
    let ours = Imp::ours(alg, &alg.key(), backend);
    let mut page = vec![0xabu8; 2 * 4096 + len];
    let start = page.as_ptr().align_offset(4096) + offset;
    let buf = &mut page[start..start + len];
    let tag = ours.seal(buf);
    let sealed = buf.to_vec();
    let toggle = Toggle::new(&ours, &sealed, tag);
    let times: Vec<f64> = STEPS
        .iter()
        .map(|f| f(&ours, buf, &sealed, toggle, open))
        .collect();
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let fastest = sorted[0];
    let slow: Vec<String> = times
        .iter()
        .enumerate()
        .filter(|(_, &t)| t > fastest * 1.08)
        .map(|(i, t)| format!("{}:{t:.0}", i * 16))
        .collect();
    println!(
        "{} {len} B {} on {backend}, record at page offset {offset}: fastest {fastest:.0} ns, median {:.0}, slowest {:.0}",
        alg.name(),
        if open { "open" } else { "seal" },
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1],
    );
    println!("slow steps (bytes of stack moved: ns): {}", slow.join(" "));
    if std::env::var("ALL").is_ok_and(|v| v == "1") {
        let all: Vec<String> = times.iter().map(|t| format!("{t:.0}")).collect();
        println!("all: {}", all.join(" "));
    }
}
