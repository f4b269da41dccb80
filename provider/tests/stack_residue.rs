//! No key material left behind on the stack: after key setup, seal, open
//! and a failed open, on every backend this CPU runs, the dead stack just
//! below the caller (where those calls' frames lay) is searched for the raw
//! key, every AES round key, the GHASH key H, E(K, J0), the Poly1305
//! one-time key, its powers and its accumulator after every block, every
//! intermediate ChaCha20 state, every keystream block and every plaintext
//! block. Each
//! operation runs at the bottom of a fresh thread, so anything found was
//! left by that operation. A canary checks that the probe sees what a
//! careless function leaves.
//!
//! Built only with feature `audit` (`cargo test --features audit`, part of
//! the test command).
#![cfg(feature = "audit")]

mod common;

use std::collections::HashMap;

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use rustls_fusion::aead::audit::{dead_stack, object_bytes, stack_pointer};
use rustls_fusion::aead::{Aes128Gcm, Aes256Gcm, Backend, ChaCha20Poly1305, Hardening};

/// How much dead stack to search: far more than any of these calls uses.
const DEAD: usize = 64 * 1024;
/// Record lengths: the short path (321–448: the ymm split seal), block
/// edges, every engine's batch edges, the zmm engines' ymm-lane records
/// on Zen 4 (512, 1350; 1024 and 1152: the ymm split open) and their zmm
/// records around them (900: an open; 2000: phased on IFMA); elsewhere
/// (`Features::zmm_split` unset) the ymm-lane records end at 576 and
/// these lengths reach the zmm records (each CPU checks the routes its
/// keys take: the routing, like the fused ChaCha20 rounds and the lengths
/// from which the hybrid AES-GCM schedule takes its loop, is chosen per key
/// from the CPU), the ymm AES-GCM
/// engine's assembly-loop seals (3000), the ymm records whose tails take
/// three whole registers (224, 255, 383, 895: unfenced, one build spilled
/// round keys there; `Lanes::fence`), the xmm AES-128 seals of one
/// compiled batch (128, 192: below the assembly loop's 256 B), the zmm
/// engine's masked passes of 5 to 8 registers (300, 480, 496) and the half
/// batch after them (500), a TLS record.
const LENGTHS: [usize; 26] = [
    0, 1, 16, 100, 128, 192, 224, 255, 300, 321, 383, 400, 448, 480, 496, 500, 512, 895, 900, 1024,
    1152, 1350, 2000, 3000, 4103, 16384,
];
/// Lengths sealed with a 70-byte AAD: past the short path, the record is
/// all tail (on zmm one right-aligned masked register, whose lanes below
/// the data hold the AES states of the counters before the first block).
const LONG_AAD_LENGTHS: [usize; 2] = [16, 40];

/// Runs `op` in a new thread, on stack zeroed first (the C library may
/// hand out a cached stack), then copies the dead stack below the frame
/// that called it.
fn residue<T: Send + 'static>(op: impl FnOnce() -> T + Send + 'static) -> (T, Vec<u8>) {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let mut dead = vec![0u8; DEAD];
            clear_below();
            let out = call(op);
            // SAFETY: this thread's stack is 1 MiB; `clear_below` and the
            // operation used well under that, and `dead` is 64 KiB.
            unsafe { dead_stack(&mut dead) };
            (out, dead)
        })
        .unwrap()
        .join()
        .unwrap()
}

/// As [`residue`], but what is returned is only the dead stack below
/// `op`'s own frame (`op` is given where to write its stack pointer, and
/// writes it first): the frames of what `op` called. The copies `op` makes
/// itself (a by-value argument built in its frame) are the caller's, not
/// the callee's, and are left out.
fn residue_of_calls<T: Send + 'static>(
    op: impl FnOnce(&mut usize) -> T + Send + 'static,
) -> (T, Vec<u8>) {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let mut dead = vec![0u8; DEAD];
            clear_below();
            let top = stack_pointer();
            let mut below = 0;
            let out = call(|| op(&mut below));
            // SAFETY: as in `residue`.
            unsafe { dead_stack(&mut dead) };
            let keep = DEAD - (top - below).min(DEAD);
            dead.truncate(keep);
            (out, dead)
        })
        .unwrap()
        .join()
        .unwrap()
}

/// Zeroes the stack below the caller, further than [`DEAD`].
#[inline(never)]
fn clear_below() {
    let mut zeros = [0u8; DEAD + 4096];
    std::hint::black_box(&mut zeros);
}

#[inline(never)]
fn call<T>(op: impl FnOnce() -> T) -> T {
    std::hint::black_box(op())
}

/// How deep below the caller `op` wrote: the deepest non-zero byte.
fn depth(dead: &[u8]) -> usize {
    dead.iter().position(|&b| b != 0).map_or(0, |i| DEAD - i)
}

/// Named 8-byte pieces of secrets, each searched for at every offset.
#[derive(Default)]
struct Secrets(Vec<(String, [u8; 8])>);

impl Secrets {
    /// Every 8-byte piece of `bytes` at offsets 0, 8, ... (a shorter tail
    /// is covered by the piece ending at the last byte).
    fn add(&mut self, name: &str, bytes: &[u8]) {
        if bytes.len() < 8 {
            return;
        }
        let mut at: Vec<usize> = (0..=bytes.len() - 8).step_by(8).collect();
        if !bytes.len().is_multiple_of(8) {
            at.push(bytes.len() - 8);
        }
        for i in at {
            let piece: [u8; 8] = bytes[i..i + 8].try_into().unwrap();
            // Runs of one byte value are not distinctive (zero padding).
            if piece.iter().all(|&b| b == piece[0]) {
                continue;
            }
            self.0.push((format!("{name}[{i}..]"), piece));
        }
    }

    /// Names of the secrets found in `dead`, with where (below the stack
    /// pointer of the frame that copied it).
    fn found_in(&self, dead: &[u8]) -> Vec<String> {
        self.found(dead, |at| format!("at sp-{}", DEAD - at))
    }

    /// Names of the secrets found in an object's bytes, with the offset.
    fn found_in_object(&self, bytes: &[u8]) -> Vec<String> {
        self.found(bytes, |at| format!("at byte {at}"))
    }

    fn found(&self, bytes: &[u8], place: impl Fn(usize) -> String) -> Vec<String> {
        let windows: HashMap<[u8; 8], usize> = bytes
            .windows(8)
            .enumerate()
            .map(|(i, w)| (w.try_into().unwrap(), i))
            .collect();
        self.0
            .iter()
            .filter_map(|(name, piece)| {
                windows
                    .get(piece)
                    .map(|&at| format!("{name} {}", place(at)))
            })
            .collect()
    }
}

/// Distinctive bytes (SplitMix64: no 8-byte window repeats by accident).
fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    common::Rng::new(seed).bytes(n)
}

/// The AES S-box.
fn sbox(x: u8) -> u8 {
    // Inverse in GF(2^8) by exponentiation (x^254), then the affine map.
    let mul = |mut a: u8, mut b: u8| {
        let mut p = 0u8;
        while b != 0 {
            if b & 1 != 0 {
                p ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        p
    };
    let mut inv = 1u8;
    for _ in 0..254 {
        inv = mul(inv, x);
    }
    let mut s = inv;
    for r in 1..5 {
        s ^= inv.rotate_left(r);
    }
    s ^ 0x63
}

/// FIPS 197 key expansion: every round key.
fn aes_round_keys(key: &[u8]) -> Vec<[u8; 16]> {
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w: Vec<[u8; 4]> = key.chunks(4).map(|c| c.try_into().unwrap()).collect();
    let mut rcon = 1u8;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = [sbox(t[1]) ^ rcon, sbox(t[2]), sbox(t[3]), sbox(t[0])];
            rcon = (rcon << 1) ^ if rcon & 0x80 != 0 { 0x1b } else { 0 };
        } else if nk > 6 && i % nk == 4 {
            t = t.map(sbox);
        }
        let prev = w[i - nk];
        w.push(std::array::from_fn(|j| prev[j] ^ t[j]));
    }
    w.chunks(4)
        .map(|c| std::array::from_fn(|j| c[j / 4][j % 4]))
        .collect()
}

/// Every AES state of the counter blocks `first..first + blocks` under
/// `nonce` (GCM's `nonce ‖ BE32(counter)`), as an AES-NI or VAES register
/// holds it between rounds: after the first AddRoundKey and after each
/// `aesenc`. Known counter blocks and these states give the round keys
/// back, so each is key material. The last round's output is the
/// keystream, searched already; it is checked against `aes_block`.
fn aes_states(s: &mut Secrets, key: &[u8], nonce: &[u8; 12], first: u32, blocks: u32) {
    static SBOX: std::sync::OnceLock<[u8; 256]> = std::sync::OnceLock::new();
    let sb = SBOX.get_or_init(|| std::array::from_fn(|x| sbox(x as u8)));
    let rk = aes_round_keys(key);
    let xtime = |a: u8| (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
    let round = |x: [u8; 16], last: bool| -> [u8; 16] {
        // SubBytes and ShiftRows (column-major state: byte 4c + r).
        let t: [u8; 16] = std::array::from_fn(|i| {
            let (c, r) = (i / 4, i % 4);
            sb[x[4 * ((c + r) % 4) + r] as usize]
        });
        if last {
            return t;
        }
        std::array::from_fn(|i| {
            let (c, r) = (i / 4, i % 4);
            let a = |k: usize| t[4 * c + (r + k) % 4];
            xtime(a(0)) ^ xtime(a(1)) ^ a(1) ^ a(2) ^ a(3)
        })
    };
    let xor = |a: [u8; 16], b: &[u8; 16]| -> [u8; 16] { std::array::from_fn(|i| a[i] ^ b[i]) };
    for counter in (0..blocks).map(|i| first.wrapping_add(i)) {
        let mut block = [0u8; 16];
        block[..12].copy_from_slice(nonce);
        block[12..].copy_from_slice(&counter.to_be_bytes());
        let mut x = xor(block, &rk[0]);
        s.add(&format!("AES block {counter} after round 0"), &x);
        for (i, k) in rk.iter().enumerate().skip(1) {
            x = xor(round(x, i == rk.len() - 1), k);
            if i < rk.len() - 1 {
                s.add(&format!("AES block {counter} after round {i}"), &x);
            }
        }
        assert_eq!(x, aes_block(key, block), "AES states");
    }
}

fn aes_block(key: &[u8], mut block: [u8; 16]) -> [u8; 16] {
    match key.len() {
        16 => aes::Aes128::new_from_slice(key)
            .unwrap()
            .encrypt_block((&mut block).into()),
        _ => aes::Aes256::new_from_slice(key)
            .unwrap()
            .encrypt_block((&mut block).into()),
    }
    block
}

/// The key's own secrets: raw key and round keys, H (both byte orders) for
/// AES; raw key for ChaCha20.
fn key_secrets(aes: bool, key: &[u8]) -> Secrets {
    let mut s = Secrets::default();
    s.add("key", key);
    if !aes {
        // Vertical ChaCha20 kernels hold each key word broadcast to every
        // lane.
        for (i, w) in key.chunks(4).enumerate() {
            s.add(&format!("key word {i} broadcast"), &[w, w].concat());
        }
    }
    if aes {
        for (i, rk) in aes_round_keys(key).iter().enumerate() {
            s.add(&format!("round key {i}"), rk);
        }
        let h = aes_block(key, [0; 16]);
        s.add("H", &h);
        let mut reflected = h;
        reflected.reverse();
        s.add("H reversed", &reflected);
        // The engines keep H¹…H³² byte-reflected and multiplied by x⁻¹
        // ("twisted"), with the XOR of their halves for Karatsuba.
        let mut power = h;
        for k in 1..=32 {
            let t = twisted(power);
            s.add(&format!("H^{k} twisted"), &t);
            let halves: [u8; 8] = std::array::from_fn(|i| t[i] ^ t[i + 8]);
            s.add(&format!("H^{k} halves"), &halves);
            power = gf128_mul(power, h);
        }
    }
    s
}

/// Multiplication in GCM's GF(2¹²⁸) (SP 800-38D, Algorithm 1).
fn gf128_mul(x: [u8; 16], y: [u8; 16]) -> [u8; 16] {
    let (x, mut v) = (u128::from_be_bytes(x), u128::from_be_bytes(y));
    let mut z = 0u128;
    for i in 0..128 {
        if (x >> (127 - i)) & 1 == 1 {
            z ^= v;
        }
        v = (v >> 1) ^ if v & 1 == 1 { 0xe1 << 120 } else { 0 };
    }
    z.to_be_bytes()
}

/// The engines' form of a hash-key power (see `expand` in aes_gcm/x86_64/key.rs).
fn twisted(h: [u8; 16]) -> [u8; 16] {
    let v = u128::from_be_bytes(h);
    let carry = (v >> 127).wrapping_neg();
    ((v << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001)).to_le_bytes()
}

/// A record's secrets: the key's, plus E(K, J0) or the Poly1305 key (with
/// r's powers and the accumulator after each block), every keystream
/// block (ciphertext XOR plaintext) and every plaintext block.
fn record_secrets(
    aes: bool,
    key: &[u8],
    nonce: &[u8; 12],
    aad: &[u8],
    (pt, ct, tag): (&[u8], &[u8], &[u8; 16]),
) -> Secrets {
    let mut s = key_secrets(aes, key);
    if aes {
        let mut j0 = [0u8; 16];
        j0[..12].copy_from_slice(nonce);
        j0[15] = 1;
        s.add("E(K, J0)", &aes_block(key, j0));
        // From counter 2^32 - 1 (two before J0): the zmm engine's masked
        // tail runs its right-aligned register's lanes below the data on the
        // counters before the first block, J0 and the two before it when the
        // tail is the whole record.
        aes_states(
            &mut s,
            key,
            nonce,
            u32::MAX,
            pt.len().div_ceil(16) as u32 + 35,
        );
    } else {
        let mut block0 = [0u8; 64];
        let key: &[u8; 32] = key.try_into().unwrap();
        chacha20::ChaCha20::new(key.into(), nonce.into()).apply_keystream(&mut block0);
        s.add("Poly1305 key", &block0[..32]);
        let r = u128::from_le_bytes(block0[..16].try_into().unwrap())
            & 0x0ffffffc_0ffffffc_0ffffffc_0fffffff;
        s.add("Poly1305 r clamped", &r.to_le_bytes());
        // The powers r^L that join two Poly1305 chains (L up to a wide
        // pass's 62 steps, more for a long AAD), fully reduced (the engines' partially reduced
        // form is the same but with negligible probability); their low
        // 16 bytes (the top limb is a few bits, not distinctive).
        let mut power = r;
        let mut power_hi = 0u64;
        for k in 2..=128 {
            (power, power_hi) = mul_mod_p((power, power_hi), (r, 0));
            s.add(&format!("Poly1305 r^{k}"), &power.to_le_bytes());
        }
        for (k, limbs) in ifma_powers(r).iter().enumerate() {
            let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
            s.add(&format!("IFMA r^{}", k + 1), &bytes);
        }
        chacha_rounds(&mut s, key, nonce, 0, ct.len().div_ceil(64) + 16);
        // The accumulator h after each block of the message, as one Horner
        // chain holds it (the two-chain and IFMA forms differ): with the
        // block it reveals r. Fully reduced, low 16 bytes, as for r^k.
        let mut message = aad.to_vec();
        message.resize(aad.len().next_multiple_of(16), 0);
        message.extend_from_slice(ct);
        message.resize(message.len().next_multiple_of(16), 0);
        message.extend_from_slice(&(aad.len() as u64).to_le_bytes());
        message.extend_from_slice(&(ct.len() as u64).to_le_bytes());
        let mut h = (0u128, 0u64);
        for (i, block) in message.chunks(16).enumerate() {
            let m = u128::from_le_bytes(block.try_into().unwrap());
            let (lo, c) = h.0.overflowing_add(m);
            h = mul_mod_p((lo, h.1 + 1 + u64::from(c)), (r, 0));
            s.add(&format!("Poly1305 h after block {i}"), &h.0.to_le_bytes());
        }
        // The accumulators are the engine's: the last one plus s is the tag.
        let s_half = u128::from_le_bytes(block0[16..32].try_into().unwrap());
        assert_eq!(h.0.wrapping_add(s_half).to_le_bytes(), *tag, "accumulator");
    }
    let keystream: Vec<u8> = pt.iter().zip(ct).map(|(p, c)| p ^ c).collect();
    s.add("keystream", &keystream);
    s.add("plaintext", pt);
    s
}

/// Every intermediate ChaCha20 state of blocks `0..blocks` (the key block,
/// the record's, and as many as a wide vertical pass makes past its end):
/// the rounds are a permutation, so a whole state in the middle of them
/// gives the key back, and any key-dependent part of one is key material.
/// Searched as a register would hold it: a row of one block (horizontal
/// layout) as 8-byte windows in each of the row's rotations (diagonal
/// rounds rotate rows b, c and d), and a word across two consecutive
/// blocks (vertical layout, one word of every block per register). Rows
/// and words still holding only public input are left out. The last state
/// plus the input is checked against the `chacha20` crate's keystream.
fn chacha_rounds(s: &mut Secrets, key: &[u8; 32], nonce: &[u8; 12], first: u32, blocks: usize) {
    let word = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    // For each block, the state after every vector step (all four columns
    // or diagonals at once), with a mask of the key-dependent words.
    let mut steps: Vec<Vec<([u32; 16], u16)>> = Vec::new();
    for counter in (0..blocks as u32).map(|i| first.wrapping_add(i)) {
        let mut x = [0u32; 16];
        x[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
        for i in 0..8 {
            x[4 + i] = word(key, i);
        }
        x[12] = counter;
        for i in 0..3 {
            x[13 + i] = word(nonce, i);
        }
        let input = x;
        // Key words are secret from the start; the rest once touched by them.
        let mut secret: u16 = 0x0ff0;
        let mut block = Vec::new();
        for round in 0..20 {
            let idx: [[usize; 4]; 4] = if round % 2 == 0 {
                [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
            } else {
                [[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]]
            };
            // One quarter-round step on all four groups: (dst, src, rotate).
            for (dst, src, rot) in [
                (0, 1, 0),
                (3, 0, 16),
                (2, 3, 0),
                (1, 2, 12),
                (0, 1, 0),
                (3, 0, 8),
                (2, 3, 0),
                (1, 2, 7),
            ] {
                for g in idx {
                    let (d, v) = (g[dst], x[g[src]]);
                    x[d] = if rot == 0 {
                        x[d].wrapping_add(v)
                    } else {
                        x[d] ^= v;
                        block.push((x, secret | 1 << d));
                        x[d].rotate_left(rot)
                    };
                    secret |= (secret >> g[src] & 1) << d;
                }
                block.push((x, secret));
            }
        }
        // The states are the cipher's: the last plus the input is the
        // block's keystream.
        let mut keystream = [0u8; 64];
        let mut cipher = chacha20::ChaCha20::new(key.into(), nonce.into());
        cipher.seek(64 * u64::from(counter));
        cipher.apply_keystream(&mut keystream);
        for (i, (&w, &v)) in x.iter().zip(&input).enumerate() {
            assert_eq!(w.wrapping_add(v), word(&keystream, i), "ChaCha20 states");
        }
        steps.push(block);
    }
    // Most steps leave most rows as they were: each piece is added once.
    let mut seen = std::collections::HashSet::new();
    let mut add = |s: &mut Secrets, name: &dyn Fn() -> String, bytes: Vec<u8>| {
        if seen.insert(bytes.clone()) {
            s.add(&name(), &bytes);
        }
    };
    for (b, block) in steps.iter().enumerate() {
        for (k, (x, secret)) in block.iter().enumerate() {
            for row in 0..4 {
                let w: [u32; 4] = x[4 * row..4 * row + 4].try_into().unwrap();
                for r in 0..4 {
                    let (i, j) = (4 * row + r, 4 * row + (r + 1) % 4);
                    if (secret >> i | secret >> j) & 1 == 0 {
                        continue;
                    }
                    let piece = [w[r], w[(r + 1) % 4]];
                    let bytes: Vec<u8> = piece.iter().flat_map(|v| v.to_le_bytes()).collect();
                    add(
                        s,
                        &|| format!("ChaCha20 block {b} step {k} row {row}"),
                        bytes,
                    );
                }
            }
            if let Some(next) = steps.get(b + 1) {
                let (y, _) = next[k];
                for i in 0..16 {
                    if secret >> i & 1 == 1 {
                        let bytes: Vec<u8> =
                            [x[i], y[i]].iter().flat_map(|v| v.to_le_bytes()).collect();
                        let name = || format!("ChaCha20 blocks {b}-{} step {k} word {i}", b + 1);
                        add(s, &name, bytes);
                    }
                }
            }
        }
    }
}

/// `a·b mod 2¹³⁰−5` for `a`, `b` below 2¹³⁰ as (low 128 bits, the rest).
fn mul_mod_p(a: (u128, u64), b: (u128, u64)) -> (u128, u64) {
    let limbs = |(lo, hi): (u128, u64)| [lo as u64, (lo >> 64) as u64, hi];
    let (x, y) = (limbs(a), limbs(b));
    let mut t = [0u128; 6];
    for i in 0..3 {
        for j in 0..3 {
            let p = u128::from(x[i]) * u128::from(y[j]);
            t[i + j] += p & u128::from(u64::MAX);
            t[i + j + 1] += p >> 64;
        }
    }
    let mut w = [0u64; 6];
    let mut carry = 0u128;
    for k in 0..6 {
        let v = t[k] + carry;
        w[k] = v as u64;
        carry = v >> 64;
    }
    // w = low 130 bits + 2¹³⁰·q ≡ low + 5·q.
    let reduce = |w: [u64; 6]| -> [u64; 6] {
        let low = [w[0], w[1], w[2] & 3];
        let q = [
            (w[2] >> 2) | (w[3] << 62),
            (w[3] >> 2) | (w[4] << 62),
            (w[4] >> 2) | (w[5] << 62),
            w[5] >> 2,
        ];
        let mut out = [0u64; 6];
        let mut c = 0u128;
        for (k, o) in out.iter_mut().enumerate().take(5) {
            let v =
                u128::from(*low.get(k).unwrap_or(&0)) + 5 * u128::from(*q.get(k).unwrap_or(&0)) + c;
            *o = v as u64;
            c = v >> 64;
        }
        out
    };
    let mut w = reduce(reduce(w));
    // Now below 2¹³⁰ + small: subtract p once if it is at least p.
    let v = (u128::from(w[0]) | u128::from(w[1]) << 64, w[2]);
    let (sum, c) = v.0.overflowing_add(5);
    if (v.1 + u64::from(c)) >> 2 != 0 {
        w = [
            sum as u64,
            (sum >> 64) as u64,
            (v.1 + u64::from(c)) & 3,
            0,
            0,
            0,
        ];
    }
    (u128::from(w[0]) | u128::from(w[1]) << 64, w[2])
}

/// r, r², …, r⁸ as the IFMA Poly1305 (`X86Avx512Ifma`) holds them: 44-bit
/// limbs, partially reduced exactly as its `mul_limbs` leaves them, with
/// the 20× forms of the upper two (each 8-byte limb is searched alone, so
/// the powers are found in any of the forms the code keeps: three-limb
/// values, the last step's lane rows, broadcast registers).
fn ifma_powers(r: u128) -> Vec<[u64; 5]> {
    const M44: u64 = (1 << 44) - 1;
    const M42: u64 = (1 << 42) - 1;
    let mul = |a: [u64; 3], b: [u64; 3]| {
        let m = |x: u64, y: u64| u128::from(x) * u128::from(y);
        let (s1, s2) = (20 * b[1], 20 * b[2]);
        let d0 = m(a[0], b[0]) + m(a[1], s2) + m(a[2], s1);
        let d1 = m(a[0], b[1]) + m(a[1], b[0]) + m(a[2], s2) + (d0 >> 44);
        let d2 = m(a[0], b[2]) + m(a[1], b[1]) + m(a[2], b[0]) + (d1 >> 44);
        let h0 = (d0 as u64 & M44) + 5 * (d2 >> 42) as u64;
        let h1 = (d1 as u64 & M44) + (h0 >> 44);
        [h0 & M44, h1, d2 as u64 & M42]
    };
    let (lo, hi) = (r as u64, (r >> 64) as u64);
    let r = [lo & M44, ((lo >> 44) | (hi << 20)) & M44, hi >> 24];
    let p2 = mul(r, r);
    let p3 = mul(p2, r);
    let p4 = mul(p2, p2);
    let powers = [
        r,
        p2,
        p3,
        p4,
        mul(p4, r),
        mul(p4, p2),
        mul(p4, p3),
        mul(p4, p4),
    ];
    powers
        .iter()
        .map(|p| [p[0], p[1], p[2], 20 * p[1], 20 * p[2]])
        .collect()
}

/// What each backend is tested with: `Base` with its opt-in stack scrub
/// (without it, the base provider's code leaves what it leaves without
/// rustls-fusion), our engines as they always run.
fn hardening(b: Backend) -> Hardening {
    Hardening::NONE.scrub_base_stack(b == Backend::Base)
}

/// The engines under test, as one shape.
trait Engine: Send + Sync + Sized + 'static {
    const AES: bool;
    const KEY_LEN: usize;
    fn backends() -> Vec<Backend>;
    fn make(key: &[u8], b: Backend) -> Self;
    fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16];
    fn open(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool;
}

macro_rules! engine {
    ($t:ty, $aes:expr, $len:expr) => {
        impl Engine for $t {
            const AES: bool = $aes;
            const KEY_LEN: usize = $len;
            fn backends() -> Vec<Backend> {
                <$t>::backends()
            }
            fn make(key: &[u8], b: Backend) -> Self {
                <$t>::with_hardening(key.try_into().unwrap(), b, hardening(b)).unwrap()
            }
            fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
                self.seal_in_place(nonce, aad, buf)
            }
            fn open(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
                self.open_in_place(nonce, aad, buf, tag).is_ok()
            }
        }
    };
}
engine!(Aes128Gcm, true, 16);
engine!(Aes256Gcm, true, 32);
engine!(ChaCha20Poly1305, false, 32);

/// Key setup, then seal, open and a failed open at every length, each in
/// its own fresh thread; returns what was found, by phase.
fn check<E: Engine>(name: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for (bi, b) in E::backends().into_iter().enumerate() {
        let key = random_bytes(E::KEY_LEN, 0x5eed + bi as u64);
        let nonce: [u8; 12] = random_bytes(12, 0x4e0ce).try_into().unwrap();
        let tls_aad = [0x17, 3, 3, 0x40, 0x11];
        let long_aad: [u8; 80] = core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0x5a);
        // An array, not a Vec: freeing it after the call would run the
        // allocator's frames over the dead stack the call left (they spill
        // whatever their registers held; see the canary).
        let mut k = [0u8; 32];
        k[..key.len()].copy_from_slice(&key);
        let (engine, dead) = residue(move || E::make(&k[..E::KEY_LEN], b));
        let mut deepest = [depth(&dead), 0, 0];
        for f in key_secrets(E::AES, &key).found_in(&dead) {
            failures.push(format!("{name} {b} key setup: {f}"));
        }
        // The key object itself, which its owner moves freely, holds no
        // key material inline (padding and unused variant space included).
        for f in key_secrets(E::AES, &key).found_in_object(&object_bytes(&engine)) {
            failures.push(format!("{name} {b} key object: {f}"));
        }
        let engine = std::sync::Arc::new(engine);
        let runs = LENGTHS.map(|l| (l, 5)).into_iter();
        for (len, aad_len) in runs.chain(LONG_AAD_LENGTHS.map(|l| (l, 70))) {
            let mut aad_store = [0u8; 80];
            if aad_len == 5 {
                aad_store[..5].copy_from_slice(&tls_aad);
            } else {
                aad_store = long_aad;
            }
            let aad = &aad_store[..aad_len];
            let len_name = if aad_len == 5 {
                format!("{len}")
            } else {
                format!("{len} (AAD {aad_len})")
            };
            let pt = random_bytes(len, 0x9e37 + len as u64);
            let (e, p) = (engine.clone(), pt.clone());
            let ((ct, tag), dead) = residue(move || {
                let mut buf = p;
                let tag = e.seal(&nonce, &aad_store[..aad_len], &mut buf);
                (buf, tag)
            });
            let secrets = record_secrets(E::AES, &key, &nonce, aad, (&pt, &ct, &tag));
            deepest[1] = deepest[1].max(depth(&dead));
            for f in secrets.found_in(&dead) {
                failures.push(format!("{name} {b} seal {len_name}: {f}"));
            }
            let (e, c) = (engine.clone(), ct.clone());
            let (opened, dead) = residue(move || {
                let mut buf = c;
                assert!(e.open(&nonce, &aad_store[..aad_len], &mut buf, &tag));
                buf
            });
            assert_eq!(opened, pt, "{name} {b} {len_name}");
            deepest[2] = deepest[2].max(depth(&dead));
            for f in secrets.found_in(&dead) {
                failures.push(format!("{name} {b} open {len_name}: {f}"));
            }
            let (e, c) = (engine.clone(), ct.clone());
            let mut forged = tag;
            forged[15] ^= 0x80;
            // Nothing allocates or frees after the call under test: the
            // allocator's frames would run over its dead stack.
            let ((opened, buf), dead) = residue(move || {
                let mut buf = c;
                (
                    e.open(&nonce, &aad_store[..aad_len], &mut buf, &forged),
                    buf,
                )
            });
            assert!(
                !opened && buf.iter().all(|&x| x == 0),
                "{name} {b} {len_name}: forged tag"
            );
            deepest[2] = deepest[2].max(depth(&dead));
            for f in secrets.found_in(&dead) {
                failures.push(format!("{name} {b} failed open {len_name}: {f}"));
            }
        }
        println!(
            "{name}: dead stack searched on {b} (deepest write below the caller: key setup {} B, seal {} B, open {} B)",
            deepest[0], deepest[1], deepest[2]
        );
    }
    failures
}

#[test]
fn no_key_material_left_on_the_stack() {
    let mut failures = check::<Aes128Gcm>("AES-128-GCM");
    failures.extend(check::<Aes256Gcm>("AES-256-GCM"));
    failures.extend(check::<ChaCha20Poly1305>("ChaCha20-Poly1305"));
    assert_none_found(&failures);
}

/// QUIC packet payload lengths: a short packet, one past a half batch
/// (the fused pass that carries the header-protection block on ymm and
/// xmm), common datagram payloads (the fused pass on zmm, the tail pass on
/// ymm) and one on the ymm assembly loop.
const QUIC_LENGTHS: [usize; 5] = [300, 400, 1200, 1350, 1600];

/// QUIC: key setup, sealing a packet (with header protection, in the same
/// call on AES-GCM), removing header protection and opening, for every
/// cipher and backend at each of `QUIC_LENGTHS`; searched for the packet
/// key, the header-protection key (with its AES round keys or broadcast
/// ChaCha20 words) and the packet's record secrets (every AES state or
/// ChaCha20 state and Poly1305 value, keystream, payload).
#[test]
fn no_quic_key_material_left_on_the_stack() {
    use rustls_fusion::quic::{Cipher, Opener, Sealer};
    let ciphers = [
        (Cipher::Aes128Gcm, 16, true, Aes128Gcm::backends()),
        (Cipher::Aes256Gcm, 32, true, Aes256Gcm::backends()),
        (
            Cipher::ChaCha20Poly1305,
            32,
            false,
            ChaCha20Poly1305::backends(),
        ),
    ];
    let mut failures = Vec::new();
    for (cipher, key_len, aes, backends) in ciphers {
        for (bi, b) in backends.into_iter().enumerate() {
            let key = random_bytes(key_len, 0xabc + bi as u64);
            let hp = random_bytes(key_len, 0xdef + bi as u64);
            let iv: [u8; 12] = random_bytes(12, 0x1f).try_into().unwrap();
            let mut key_and_hp = key_secrets(aes, &key);
            for (name, piece) in key_secrets(aes, &hp).0 {
                key_and_hp.0.push((format!("hp {name}"), piece));
            }
            // Arrays, not Vecs, as in `check`.
            let (mut k, mut h) = ([0u8; 32], [0u8; 32]);
            k[..key_len].copy_from_slice(&key);
            h[..key_len].copy_from_slice(&hp);
            let ((sealer, opener), dead) = residue(move || {
                let (k, h) = (&k[..key_len], &h[..key_len]);
                (
                    Sealer::with_hardening(cipher, k, &iv, h, Some(b), hardening(b)).unwrap(),
                    Opener::with_hardening(cipher, k, &iv, h, Some(b), hardening(b)).unwrap(),
                )
            });
            // The objects the caller moves freely hold no key inline.
            for (what, bytes) in [
                ("Sealer", object_bytes(&sealer)),
                ("Opener", object_bytes(&opener)),
            ] {
                for f in key_and_hp.found_in_object(&bytes) {
                    failures.push(format!("QUIC {cipher:?} {b} {what} object: {f}"));
                }
            }
            for f in key_and_hp.found_in(&dead) {
                failures.push(format!("QUIC {cipher:?} {b} key setup: {f}"));
            }
            let sealer = std::sync::Arc::new(sealer);
            let opener = std::sync::Arc::new(opener);
            for len in QUIC_LENGTHS {
                let pn = 7u64 + len as u64;
                let payload = random_bytes(len, 0x77 + len as u64);
                let mut packet = vec![0u8; 9 + 2 + len + 16];
                packet[0] = 0x41;
                packet[9..11].copy_from_slice(&(pn as u16).to_be_bytes());
                packet[11..11 + len].copy_from_slice(&payload);
                let header: Vec<u8> = packet[..11].to_vec();
                let s = sealer.clone();
                let (packet, dead_seal) = residue(move || {
                    let mut p = packet;
                    s.seal_packet(&mut p, 9, pn).unwrap();
                    p
                });
                // The packet's nonce (RFC 9001 §5.3) and its record secrets.
                let nonce = common::masked_nonce(&iv, pn);
                let tag: [u8; 16] = packet[11 + len..].try_into().unwrap();
                let mut secrets = record_secrets(
                    aes,
                    &key,
                    &nonce,
                    &header,
                    (&payload, &packet[11..11 + len], &tag),
                );
                secrets.0.extend(key_and_hp.0.iter().cloned());
                // The header-protection block of the packet's sample (RFC 9001
                // §5.4.2, at the packet number's offset + 4): every AES or
                // ChaCha20 state it passes through.
                let sample: [u8; 16] = packet[13..29].try_into().unwrap();
                header_block_states(&mut secrets, aes, &hp, &sample);
                let mut report = |phase: &str, dead: &[u8]| {
                    for f in secrets.found_in(dead) {
                        failures.push(format!("QUIC {cipher:?} {b} {phase} {len}: {f}"));
                    }
                };
                report("seal_packet", &dead_seal);
                let o = opener.clone();
                let ((packet, header_len), dead) = residue(move || {
                    let mut p = packet;
                    let info = o.unprotect_header(&mut p, 9).unwrap();
                    (p, info.header_len)
                });
                report("unprotect_header", &dead);
                let o = opener.clone();
                let ((p, range), dead) = residue(move || {
                    let mut p = packet;
                    let base = p.as_ptr() as usize;
                    let plain = o.open_packet(&mut p, header_len, pn).unwrap();
                    let start = plain.as_ptr() as usize - base;
                    let range = start..start + plain.len();
                    (p, range)
                });
                assert_eq!(p[range], payload[..], "QUIC {cipher:?} {b} {len}");
                report("open_packet", &dead);
            }
            println!("QUIC {cipher:?}: dead stack searched on {b}");
        }
    }
    assert_none_found(&failures);
}

/// The states of the header-protection block of `sample` under `hp`: AES
/// of the sample (`aes_states` of its 12-byte prefix and big-endian last
/// word), or the ChaCha20 block with counter `LE32(sample[..4])` and
/// nonce `sample[4..]` (`chacha_rounds`).
fn header_block_states(s: &mut Secrets, aes: bool, hp: &[u8], sample: &[u8; 16]) {
    if aes {
        let nonce: [u8; 12] = sample[..12].try_into().unwrap();
        let counter = u32::from_be_bytes(sample[12..].try_into().unwrap());
        aes_states(s, hp, &nonce, counter, 1);
    } else {
        let key: &[u8; 32] = hp.try_into().unwrap();
        let counter = u32::from_le_bytes(sample[..4].try_into().unwrap());
        chacha_rounds(s, key, sample[4..].try_into().unwrap(), counter, 1);
    }
}

/// A provider with `aes` or ChaCha20 suites pinned to backend `b`.
fn provider_on(aes: bool, b: Backend) -> rustls::crypto::CryptoProvider {
    let builder = rustls_fusion::ProviderBuilder::new().hardening(hardening(b));
    let builder = if aes {
        builder.aes_gcm(b)
    } else {
        builder.chacha20_poly1305(b)
    };
    builder.build().expect("a backend this CPU runs")
}

/// Our suites with 32-byte keys, which `AeadKey::from` makes (AES-128-GCM
/// keys go through the same generic setup as AES-256-GCM's): (suite, AES,
/// backends).
fn rustls_suites(tls13: bool) -> Vec<(rustls::CipherSuite, bool, Vec<Backend>)> {
    use rustls::CipherSuite as S;
    let (aes, chacha) = if tls13 {
        (
            S::TLS13_AES_256_GCM_SHA384,
            S::TLS13_CHACHA20_POLY1305_SHA256,
        )
    } else {
        (
            S::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            S::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        )
    };
    vec![
        (aes, true, Aes256Gcm::backends()),
        (chacha, false, ChaCha20Poly1305::backends()),
    ]
}

/// QUIC keys made through rustls (`quic::Algorithm::packet_key` and
/// `header_protection_key`), which our provider builds in the one box it
/// returns (the ChaCha20 words inline in it): for every suite and
/// backend, the frames below the call are searched for the raw key and
/// everything setup derives from it. rustls passes the key by value, a
/// copy in the caller's frame, which `residue_of_calls` leaves out.
#[test]
fn no_rustls_quic_key_material_left_on_the_stack() {
    use rustls::crypto::cipher::{AeadKey, Iv};
    let mut failures = Vec::new();
    for (id, aes, backends) in rustls_suites(true) {
        for (bi, b) in backends.into_iter().enumerate() {
            let provider = provider_on(aes, b);
            let quic = provider
                .cipher_suites
                .iter()
                .find(|s| s.suite() == id)
                .and_then(|s| s.tls13())
                .and_then(|s| s.quic)
                .expect("a QUIC-capable TLS 1.3 suite");
            let key = random_bytes(32, 0x9a + bi as u64);
            let k: [u8; 32] = key.clone().try_into().unwrap();
            let (keys, dead) = residue_of_calls(move |below| {
                *below = stack_pointer();
                let hp = quic.header_protection_key(AeadKey::from(k));
                let packet = quic.packet_key(AeadKey::from(k), Iv::new([7; 12]));
                (hp, packet)
            });
            for f in key_secrets(aes, &key).found_in(&dead) {
                failures.push(format!("rustls QUIC {id:?} {b} key setup: {f}"));
            }
            drop(keys);
            println!("rustls QUIC {id:?}: dead stack searched on {b}");
        }
    }
    assert_none_found(&failures);
}

/// TLS record keys made through rustls (`encrypter` and `decrypter` of
/// every TLS 1.3 and TLS 1.2 suite), each built with its holder in one
/// box: searched as the QUIC keys are, on every backend.
#[test]
fn no_rustls_record_key_material_left_on_the_stack() {
    use rustls::crypto::cipher::{AeadKey, Iv};
    use rustls::SupportedCipherSuite;
    let mut failures = Vec::new();
    for tls13 in [true, false] {
        for (id, aes, backends) in rustls_suites(tls13) {
            for (bi, b) in backends.into_iter().enumerate() {
                let provider = provider_on(aes, b);
                let suite = *provider
                    .cipher_suites
                    .iter()
                    .find(|s| s.suite() == id)
                    .expect("the suite");
                let key = random_bytes(32, 0x7c + bi as u64);
                let k: [u8; 32] = key.clone().try_into().unwrap();
                let (keys, dead) = residue_of_calls(move |below| {
                    *below = stack_pointer();
                    let key = || AeadKey::from(k);
                    match suite {
                        SupportedCipherSuite::Tls13(s) => (
                            s.aead_alg.encrypter(key(), Iv::new([7; 12])),
                            s.aead_alg.decrypter(key(), Iv::new([7; 12])),
                        ),
                        SupportedCipherSuite::Tls12(s) => {
                            let iv = [7u8; 12];
                            let iv = &iv[..s.aead_alg.key_block_shape().fixed_iv_len];
                            (
                                s.aead_alg.encrypter(key(), iv, &[9; 8]),
                                s.aead_alg.decrypter(key(), iv),
                            )
                        }
                    }
                });
                for f in key_secrets(aes, &key).found_in(&dead) {
                    failures.push(format!("rustls {id:?} {b} record key setup: {f}"));
                }
                drop(keys);
                println!("rustls {id:?}: dead stack searched on {b}");
            }
        }
    }
    assert_none_found(&failures);
}

fn assert_none_found(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} secrets left on the stack:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The probe sees what a careless function leaves: a copy of a key in a
/// local array that is never wiped.
#[test]
fn canary_a_key_copy_left_on_the_stack_is_found() {
    #[inline(never)]
    fn careless(key: &[u8]) -> u8 {
        let mut copy = [0u8; 32];
        copy.copy_from_slice(std::hint::black_box(key));
        std::hint::black_box(&mut copy);
        copy.iter().fold(0, |a, b| a ^ b)
    }
    let key = random_bytes(32, 77);
    // An array, not a Vec: freeing a Vec after `careless` returns would run
    // the allocator's frames over the dead copy (glibc's `free` on aarch64
    // reaches that deep).
    let k: [u8; 32] = key.clone().try_into().unwrap();
    let (_, dead) = residue(move || careless(&k));
    let mut s = Secrets::default();
    s.add("key", &key);
    assert!(!s.found_in(&dead).is_empty(), "the probe missed a key copy");
}
