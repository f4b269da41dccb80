//! The nonce guards against simple reference models, on fuzzer-chosen
//! sequences of nonces: the TLS `SealGuard` (masked and salted) and the
//! QUIC `PacketNumberGuard` (single packets and batches).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustls_fusion::nonce_guard::SealGuard;
use rustls_fusion::quic::{PacketNumberGuard, MAX_PACKET_NUMBER};

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*b)
    }
    fn u64(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for _ in 0..8 {
            v = v << 8 | u64::from(self.byte()?);
        }
        Some(v)
    }
}

fn nonce(iv: &[u8; 12], path: u32, c: u64) -> [u8; 12] {
    let mut n = *iv;
    for (b, p) in n
        .iter_mut()
        .zip(path.to_be_bytes().into_iter().chain(c.to_be_bytes()))
    {
        *b ^= p;
    }
    n
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let Some(mode) = input.byte() else { return };
    let iv: [u8; 12] = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ mode);
    // Counters near the interesting edges: small, around 2^62 and 2^64.
    let counter = |input: &mut Input<'_>| -> Option<u64> {
        let sel = input.byte()?;
        let v = input.u64()?;
        Some(match sel % 4 {
            0 => v % 64,
            1 => MAX_PACKET_NUMBER.wrapping_sub(v % 8).wrapping_add(4),
            2 => u64::MAX - v % 8,
            _ => v,
        })
    };
    match mode % 3 {
        // TLS 1.3 / ChaCha (masked) and TLS 1.2 GCM (salted).
        0 | 1 => {
            let masked = mode % 3 == 0;
            let mut guard = if masked {
                SealGuard::masked(&iv)
            } else {
                SealGuard::salted(iv[..4].try_into().unwrap())
            };
            let (mut next, mut started) = (0u64, false);
            while let Some(c) = counter(&mut input) {
                let wrong_fixed = input.byte().unwrap_or(0) == 0xff;
                let mut n = if masked {
                    nonce(&iv, 0, c)
                } else {
                    let mut n = [0u8; 12];
                    n[..4].copy_from_slice(&iv[..4]);
                    n[4..].copy_from_slice(&c.to_be_bytes());
                    n
                };
                if wrong_fixed {
                    n[1] ^= 0x40;
                }
                let model_ok = !wrong_fixed && c != u64::MAX && c >= next && (started || c == 0);
                assert_eq!(
                    guard.check(&n).is_ok(),
                    model_ok,
                    "TLS guard at counter {c}, next {next}"
                );
                if model_ok {
                    next = c + 1;
                    started = true;
                }
                assert_eq!(guard.next_counter(), next);
            }
        }
        // QUIC: packets and batches, one path each.
        _ => {
            let path = u32::from(input.byte().unwrap_or(0) % 3);
            let guard = PacketNumberGuard::new(&iv, path);
            let mut next = 0u64;
            while let Some(op) = input.byte() {
                if op % 4 == 0 {
                    // A batch of up to 6.
                    let k = usize::from(op >> 2) % 7;
                    let mut cs = Vec::new();
                    for _ in 0..k {
                        match counter(&mut input) {
                            Some(c) => cs.push(c),
                            None => return,
                        }
                    }
                    let model_ok = cs.is_empty()
                        || (cs.windows(2).all(|w| w[0] < w[1])
                            && cs[0] >= next
                            && *cs.last().unwrap() <= MAX_PACKET_NUMBER);
                    let ok = guard
                        .check_batch(cs.iter().map(|&c| nonce(&iv, path, c)))
                        .is_ok();
                    assert_eq!(ok, model_ok, "QUIC batch {cs:?}, next {next}");
                    if model_ok && !cs.is_empty() {
                        next = cs.last().unwrap() + 1;
                    }
                } else {
                    let Some(c) = counter(&mut input) else { return };
                    let other_path = op % 4 == 1;
                    let n = nonce(&iv, if other_path { path + 1 } else { path }, c);
                    let model_ok = !other_path && c <= MAX_PACKET_NUMBER && c >= next;
                    assert_eq!(
                        guard.check(&n).is_ok(),
                        model_ok,
                        "QUIC pn {c}, next {next}"
                    );
                    if model_ok {
                        next = c + 1;
                    }
                }
                assert_eq!(guard.next_packet_number(), next);
            }
        }
    }
});
