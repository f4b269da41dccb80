//! What is searched for: the secrets a key, a record or a header mask
//! derives, computed here apart from the crate (AES, GHASH, ChaCha20 and
//! Poly1305 models), as named 8-byte pieces.

use super::*;
/// Named 8-byte pieces of secrets, each searched for at every offset, by
/// value (little-endian `u64`): a value added twice keeps its first name,
/// and the byte offset of the piece within what it was added from.
#[derive(Default)]
pub(super) struct Secrets(HashMap<u64, (Name, u32), std::hash::BuildHasherDefault<Fold>>);

impl Secrets {
    /// Every 8-byte piece of `bytes` at offsets 0, 8, ... (a shorter tail
    /// is covered by the piece ending at the last byte).
    pub(super) fn add(&mut self, name: Name, bytes: &[u8]) {
        if bytes.len() < 8 {
            return;
        }
        let last = bytes.len() - 8;
        let tail = (!bytes.len().is_multiple_of(8)).then_some(last);
        for i in (0..=last).step_by(8).chain(tail) {
            let piece: [u8; 8] = bytes[i..i + 8].try_into().unwrap();
            // Runs of one byte value are not distinctive (zero padding).
            if piece.iter().all(|&b| b == piece[0]) {
                continue;
            }
            self.0
                .entry(u64::from_le_bytes(piece))
                .or_insert((name, i as u32));
        }
    }

    /// Every piece of `other` not already here.
    pub(super) fn extend(&mut self, other: &Secrets) {
        for (&piece, &named) in &other.0 {
            self.0.entry(piece).or_insert(named);
        }
    }

    /// These secrets with `prefix` before each name.
    pub(super) fn prefixed(mut self, prefix: &'static str) -> Self {
        for (name, _) in self.0.values_mut() {
            *name = name.prefixed(prefix);
        }
        self
    }

    /// Names of the secrets found in `dead`, with where (below the stack
    /// pointer of the frame that copied it).
    pub(super) fn found_in(&self, dead: &[u8]) -> Vec<String> {
        self.found(dead, |at| format!("at sp-{}", DEAD - at))
    }

    /// Names of the secrets found in an object's bytes, with the offset.
    pub(super) fn found_in_object(&self, bytes: &[u8]) -> Vec<String> {
        self.found(bytes, |at| format!("at byte {at}"))
    }

    /// Each piece found in `bytes`, once, at its first offset.
    pub(super) fn found(&self, bytes: &[u8], place: impl Fn(usize) -> String) -> Vec<String> {
        let mut reported = std::collections::HashSet::new();
        bytes
            .windows(8)
            .enumerate()
            .filter_map(|(at, w)| {
                let piece = u64::from_le_bytes(w.try_into().unwrap());
                let (name, i) = self.0.get(&piece)?;
                reported
                    .insert(piece)
                    .then(|| format!("{name}[{i}..] {}", place(at)))
            })
            .collect()
    }
}

/// Distinctive bytes (SplitMix64: no 8-byte window repeats by accident).
pub(super) fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    common::Rng::new(seed).bytes(n)
}

/// The AES S-box.
pub(super) fn sbox(x: u8) -> u8 {
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
pub(super) fn aes_round_keys(key: &[u8]) -> Vec<[u8; 16]> {
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
pub(super) fn aes_states(s: &mut Secrets, key: &[u8], nonce: &[u8; 12], first: u32, blocks: u32) {
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
        s.add(name!("AES block {} after round 0", counter), &x);
        for (i, k) in rk.iter().enumerate().skip(1) {
            x = xor(round(x, i == rk.len() - 1), k);
            if i < rk.len() - 1 {
                s.add(name!("AES block {} after round {}", counter, i), &x);
            }
        }
        assert_eq!(x, aes_block(key, block), "AES states");
    }
}

pub(super) fn aes_block(key: &[u8], mut block: [u8; 16]) -> [u8; 16] {
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
pub(super) fn key_secrets(aes: bool, key: &[u8]) -> Secrets {
    let mut s = Secrets::default();
    s.add(name!("key"), key);
    if !aes {
        // Vertical ChaCha20 kernels hold each key word broadcast to every
        // lane.
        for (i, w) in key.chunks(4).enumerate() {
            s.add(name!("key word {} broadcast", i), &[w, w].concat());
        }
    }
    if aes {
        for (i, rk) in aes_round_keys(key).iter().enumerate() {
            s.add(name!("round key {}", i), rk);
        }
        let h = aes_block(key, [0; 16]);
        s.add(name!("H"), &h);
        let mut reflected = h;
        reflected.reverse();
        s.add(name!("H reversed"), &reflected);
        // The engines keep H¹…H³² byte-reflected and multiplied by x⁻¹
        // ("twisted"), with the XOR of their halves for Karatsuba.
        let mut power = h;
        for k in 1..=32 {
            let t = twisted(power);
            s.add(name!("H^{} twisted", k), &t);
            let halves: [u8; 8] = std::array::from_fn(|i| t[i] ^ t[i + 8]);
            s.add(name!("H^{} halves", k), &halves);
            power = gf128_mul(power, h);
        }
    }
    s
}

/// Multiplication in GCM's GF(2¹²⁸) (SP 800-38D, Algorithm 1).
pub(super) fn gf128_mul(x: [u8; 16], y: [u8; 16]) -> [u8; 16] {
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
pub(super) fn twisted(h: [u8; 16]) -> [u8; 16] {
    let v = u128::from_be_bytes(h);
    let carry = (v >> 127).wrapping_neg();
    ((v << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001)).to_le_bytes()
}

/// A record's secrets: the key's, plus E(K, J0) or the Poly1305 key (with
/// r's powers and the accumulator after each block), every keystream
/// block (ciphertext XOR plaintext) and every plaintext block.
pub(super) fn record_secrets(
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
        s.add(name!("E(K, J0)"), &aes_block(key, j0));
        // The record was sealed with this key and nonce: its first
        // keystream block (counter 2) is plaintext XOR ciphertext.
        let mut ctr2 = j0;
        ctr2[15] = 2;
        let keystream = aes_block(key, ctr2);
        for (i, (p, c)) in pt.iter().zip(ct).take(16).enumerate() {
            assert_eq!(p ^ c, keystream[i], "AES-GCM nonce or key of the record");
        }
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
        s.add(name!("Poly1305 key"), &block0[..32]);
        let r = u128::from_le_bytes(block0[..16].try_into().unwrap())
            & 0x0ffffffc_0ffffffc_0ffffffc_0fffffff;
        s.add(name!("Poly1305 r clamped"), &r.to_le_bytes());
        // The powers r^L that join two Poly1305 chains (L up to a wide
        // pass's 62 steps, more for a long AAD), fully reduced (the engines' partially reduced
        // form is the same but with negligible probability); their low
        // 16 bytes (the top limb is a few bits, not distinctive).
        let mut power = r;
        let mut power_hi = 0u64;
        for k in 2..=128 {
            (power, power_hi) = mul_mod_p((power, power_hi), (r, 0));
            s.add(name!("Poly1305 r^{}", k), &power.to_le_bytes());
        }
        for (k, limbs) in ifma_powers(r).iter().enumerate() {
            let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
            s.add(name!("IFMA r^{}", k + 1), &bytes);
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
            s.add(name!("Poly1305 h after block {}", i), &h.0.to_le_bytes());
        }
        // The accumulators are the engine's: the last one plus s is the tag.
        let s_half = u128::from_le_bytes(block0[16..32].try_into().unwrap());
        assert_eq!(h.0.wrapping_add(s_half).to_le_bytes(), *tag, "accumulator");
    }
    let keystream: Vec<u8> = pt.iter().zip(ct).map(|(p, c)| p ^ c).collect();
    s.add(name!("keystream"), &keystream);
    s.add(name!("plaintext"), pt);
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
pub(super) fn chacha_rounds(
    s: &mut Secrets,
    key: &[u8; 32],
    nonce: &[u8; 12],
    first: u32,
    blocks: usize,
) {
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
    // Most steps leave most rows as they were: `Secrets` keeps each piece
    // once.
    let bytes = |a: u32, b: u32| (u64::from(a) | u64::from(b) << 32).to_le_bytes();
    for (b, block) in steps.iter().enumerate() {
        for (k, (x, secret)) in block.iter().enumerate() {
            for row in 0..4 {
                let w: [u32; 4] = x[4 * row..4 * row + 4].try_into().unwrap();
                for r in 0..4 {
                    let (i, j) = (4 * row + r, 4 * row + (r + 1) % 4);
                    if (secret >> i | secret >> j) & 1 == 0 {
                        continue;
                    }
                    let name = name!("ChaCha20 block {} step {} row {}", b, k, row);
                    s.add(name, &bytes(w[r], w[(r + 1) % 4]));
                }
            }
            if let Some(next) = steps.get(b + 1) {
                let (y, _) = next[k];
                for i in 0..16 {
                    if secret >> i & 1 == 1 {
                        let name = name!("ChaCha20 blocks {}-{} step {} word {}", b, b + 1, k, i);
                        s.add(name, &bytes(x[i], y[i]));
                    }
                }
            }
        }
    }
}

/// `a·b mod 2¹³⁰−5` for `a`, `b` below 2¹³⁰ as (low 128 bits, the rest).
pub(super) fn mul_mod_p(a: (u128, u64), b: (u128, u64)) -> (u128, u64) {
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
pub(super) fn ifma_powers(r: u128) -> Vec<[u64; 5]> {
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

/// The states of the header-protection block of `sample` under `hp`: AES
/// of the sample (`aes_states` of its 12-byte prefix and big-endian last
/// word), or the ChaCha20 block with counter `LE32(sample[..4])` and
/// nonce `sample[4..]` (`chacha_rounds`).
pub(super) fn header_block_states(s: &mut Secrets, aes: bool, hp: &[u8], sample: &[u8; 16]) {
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
