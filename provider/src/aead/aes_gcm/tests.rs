//! The 32-bit block counter wraps mod 2³² (GCM's inc32) inside the
//! engines. With 96-bit nonces that needs a 64 GiB message, so these
//! tests start from arbitrary pre-counter blocks and compare with a
//! reference GCM built from RustCrypto's AES block cipher and GHASH.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use ghash::universal_hash::UniversalHash;

#[cfg(target_arch = "aarch64")]
use super::aarch64_aes;
#[cfg(target_arch = "x86_64")]
use super::{x86_aesni, x86_vaes, x86_vaes512};
#[cfg(target_arch = "x86_64")]
use crate::aead::engine_check::seal_open_reject;
use crate::cpu::Features;

fn reference(key: &[u8], j0: [u8; 16], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    let encrypt = |block: &mut [u8; 16]| match key.len() {
        16 => aes::Aes128::new_from_slice(key)
            .unwrap()
            .encrypt_block(block.into()),
        _ => aes::Aes256::new_from_slice(key)
            .unwrap()
            .encrypt_block(block.into()),
    };
    let mut h = [0u8; 16];
    encrypt(&mut h);
    let mut ct = pt.to_vec();
    for (i, chunk) in ct.chunks_mut(16).enumerate() {
        let mut ctr = j0;
        let c = u32::from_be_bytes(j0[12..].try_into().unwrap()).wrapping_add(1 + i as u32);
        ctr[12..].copy_from_slice(&c.to_be_bytes());
        encrypt(&mut ctr);
        chunk.iter_mut().zip(ctr).for_each(|(b, k)| *b ^= k);
    }
    let mut ghash = ghash::GHash::new(&h.into());
    ghash.update_padded(aad);
    ghash.update_padded(&ct);
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(aad.len() as u64 * 8).to_be_bytes());
    lengths[8..].copy_from_slice(&(ct.len() as u64 * 8).to_be_bytes());
    ghash.update_padded(&lengths);
    let mut tag: [u8; 16] = ghash.finalize().into();
    let mut ek0 = j0;
    encrypt(&mut ek0);
    tag.iter_mut().zip(ek0).for_each(|(t, k)| *t ^= k);
    (ct, tag)
}

#[test]
fn block_counter_wraps_mod_2_32() {
    let cpu = Features::get();
    let aad = b"header";
    for key in [&[0x11u8; 16][..], &[0x22u8; 32][..]] {
        for start in [
            0xffff_fff0u32,
            0xffff_fffe,
            0xffff_ffff,
            0xffff_ff80,
            0x7fff_ffff,
            // The zmm assembly loop's batches from the second on (a
            // seal's first runs generic) start at counter `start + 33`:
            // low byte 224 (the last without a carry out of it) and 225.
            0x0000_00bf,
            0x0000_00c0,
        ] {
            let mut j0 = [0x5au8; 16];
            j0[12..].copy_from_slice(&start.to_be_bytes());
            for len in [0, 1, 16, 17, 100, 127, 128, 129, 300, 512, 1000, 4096 + 3] {
                let pt: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let want = reference(key, j0, aad, &pt);
                // One build's seal from `j0`: its module's key for this key size.
                macro_rules! sealed {
                    ($($m:ident)::+) => {{
                        let mut buf = pt.clone();
                        let mut stack = crate::aead::secret::SetupStack::new();
                        let tag = match key.len() {
                            16 => $($m)::+::Key::<10>::new(key, &mut stack)
                                .unwrap()
                                .seal_with_j0(&j0, aad, &mut buf),
                            _ => $($m)::+::Key::<14>::new(key, &mut stack)
                                .unwrap()
                                .seal_with_j0(&j0, aad, &mut buf),
                        };
                        (buf, tag)
                    }};
                }
                let mut got = Vec::new();
                #[cfg(target_arch = "aarch64")]
                if cpu.aes_pmull {
                    got.push(("aarch64-aes", sealed!(aarch64_aes::plain)));
                }
                #[cfg(target_arch = "aarch64")]
                if cpu.aes_pmull_sha3 {
                    got.push(("aarch64-aes sha3", sealed!(aarch64_aes::sha3)));
                }
                #[cfg(target_arch = "x86_64")]
                if cpu.aes_clmul_avx {
                    got.push(("aes-ni", sealed!(x86_aesni::avx)));
                }
                #[cfg(target_arch = "x86_64")]
                if cpu.aes_clmul {
                    // The SSE-only build of the AES-NI engine, which
                    // detection picks only on CPUs without AVX.
                    got.push(("aes-ni sse", sealed!(x86_aesni::sse)));
                }
                #[cfg(target_arch = "x86_64")]
                if cpu.vaes_clmul256 {
                    got.push(("vaes", sealed!(x86_vaes)));
                }
                #[cfg(target_arch = "x86_64")]
                if cpu.vaes_clmul512 {
                    got.push(("vaes512", sealed!(x86_vaes512::schoolbook)));
                    got.push(("vaes512-karatsuba", sealed!(x86_vaes512::karatsuba)));
                    got.push(("vaes512-hybrid", sealed!(x86_vaes512::hybrid)));
                }
                for (name, (ct, tag)) in got {
                    assert_eq!(
                        (ct, tag),
                        want,
                        "{name}, key {}, start {start:#x}, len {len}",
                        key.len()
                    );
                }
            }
        }
    }
}

/// A byte stream from `seed` (an LCG's top byte): test inputs.
#[cfg(target_arch = "x86_64")]
fn bytes(mut seed: u64) -> impl FnMut() -> u8 {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 56) as u8
    }
}

/// aws-lc-rs's AES-GCM seal (the key's length picks the key size):
/// ciphertext and tag.
#[cfg(target_arch = "x86_64")]
fn aws_lc_seal(key: &[u8], nonce: [u8; 12], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM};
    let alg = if key.len() == 16 {
        &AES_128_GCM
    } else {
        &AES_256_GCM
    };
    let mut ct = pt.to_vec();
    let tag = LessSafeKey::new(UnboundKey::new(alg, key).unwrap())
        .seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::from(aad), &mut ct)
        .unwrap();
    (ct, tag.as_ref().try_into().unwrap())
}

/// The SSE-only build of the AES-NI engine (not reachable through
/// `Backend` on a CPU with AVX) seals and opens like aws-lc-rs.
#[cfg(target_arch = "x86_64")]
#[test]
fn aesni_sse_build_matches_aws_lc_rs() {
    if !Features::get().aes_clmul {
        return;
    }
    let mut byte = bytes(7);
    for len in (0..=300).chain([511, 512, 513, 1350, 4096, 16384, 16401]) {
        for key_len in [16, 32] {
            let key: Vec<u8> = (0..key_len).map(|_| byte()).collect();
            let nonce: [u8; 12] = core::array::from_fn(|_| byte());
            let aad: Vec<u8> = (0..len % 70).map(|_| byte()).collect();
            let pt: Vec<u8> = (0..len).map(|_| byte()).collect();
            let (want, want_tag) = aws_lc_seal(&key, nonce, &aad, &pt);
            let mut buf = pt.clone();
            let (tag, opened) = if key_len == 16 {
                let k = x86_aesni::sse::Key::<10>::new(
                    &key,
                    &mut crate::aead::secret::SetupStack::new(),
                )
                .unwrap();
                let tag = k.seal(&nonce, &aad, &[], &mut buf);
                let mut ct = buf.clone();
                (tag, k.open(&nonce, &aad, &mut ct, &tag).map(|()| ct))
            } else {
                let k = x86_aesni::sse::Key::<14>::new(
                    &key,
                    &mut crate::aead::secret::SetupStack::new(),
                )
                .unwrap();
                let tag = k.seal(&nonce, &aad, &[], &mut buf);
                let mut ct = buf.clone();
                (tag, k.open(&nonce, &aad, &mut ct, &tag).map(|()| ct))
            };
            assert_eq!((&buf, &tag), (&want, &want_tag), "len {len}, key {key_len}");
            assert_eq!(
                opened.as_deref(),
                Ok(&pt[..]),
                "open, len {len}, key {key_len}"
            );
        }
    }
}

/// The hybrid zmm schedule's keys with each CPU's loop lengths (Intel's,
/// Zen 4's, and none: a key takes one of them for its CPU, and all run
/// here wherever the zmm engine runs), against aws-lc-rs, about each
/// length and past 16 KiB: the seal's ciphertext and tag, the open, and a
/// changed tag, which fails and zeroes the buffer; seals into outputs 0, 5
/// and 32 bytes into a cache line, whole and from a third of the plaintext
/// as `src` (the loop then stops at its end and runs again).
#[cfg(target_arch = "x86_64")]
#[test]
fn hybrid_keys_with_each_cpus_loops_match_aws_lc_rs() {
    use super::kernel::Loops;
    use x86_vaes512::hybrid_loops;
    if !Features::get().vaes_clmul512 {
        return;
    }
    let mut byte = bytes(11);
    let lengths = [
        0, 100, 1023, 1024, 1350, 1535, 1536, 2047, 2048, 3071, 3072, 3100, 4095, 4096, 4097, 6143,
        6144, 8192, 12345, 16384, 16401, 20000,
    ];
    let never = Loops {
        seal: usize::MAX,
        open: usize::MAX,
    };
    for len in lengths {
        for (key_len, nr) in [(16, 10), (32, 14)] {
            let key: Vec<u8> = (0..key_len).map(|_| byte()).collect();
            let nonce: [u8; 12] = core::array::from_fn(|_| byte());
            let aad: Vec<u8> = (0..len % 70).map(|_| byte()).collect();
            let pt: Vec<u8> = (0..len).map(|_| byte()).collect();
            let (ct, tag) = aws_lc_seal(&key, nonce, &aad, &pt);
            for loops in [hybrid_loops(nr, false), hybrid_loops(nr, true), never] {
                let what = format!("len {len}, key {key_len}, {loops:?}");
                macro_rules! key {
                    ($nr:literal) => {
                        x86_vaes512::hybrid::Key::<$nr>::new(
                            &key,
                            &mut crate::aead::secret::SetupStack::new(),
                        )
                        .unwrap()
                        .with_loops(loops)
                    };
                }
                // The plaintext's prefix `src`, the rest already in `buf`.
                let seal_from = |src: &[u8], buf: &mut [u8]| {
                    if key_len == 16 {
                        key!(10).seal(&nonce, &aad, src, buf)
                    } else {
                        key!(14).seal(&nonce, &aad, src, buf)
                    }
                };
                let seal = |buf: &mut [u8]| seal_from(&pt, buf);
                let open = |buf: &mut [u8], tag: &[u8; 16]| {
                    if key_len == 16 {
                        key!(10).open(&nonce, &aad, buf, tag)
                    } else {
                        key!(14).open(&nonce, &aad, buf, tag)
                    }
                };
                seal_open_reject(&what, &pt, (&ct, tag), seal, open);
                // Outputs 0, 5 and 32 bytes into a cache line: the loop's last
                // batch is kept aside where the output is not 32-byte aligned
                // (`Lanes::KEEP_LAST`), reloaded from the output where it is.
                let split = |buf: &mut [u8]| {
                    buf[len / 3..].copy_from_slice(&pt[len / 3..]);
                    seal_from(&pt[..len / 3], buf)
                };
                for off in [0, 5, 32] {
                    let mut store = vec![0u8; len + 128];
                    let at = store.as_ptr().align_offset(64) + off;
                    let buf = &mut store[at..at + len];
                    assert_eq!(seal(buf), tag, "seal {off} bytes into a line, {what}");
                    assert_eq!(buf, &ct[..], "ciphertext {off} bytes into a line, {what}");
                    buf.fill(0);
                    assert_eq!(
                        split(buf),
                        tag,
                        "split seal {off} bytes into a line, {what}"
                    );
                    assert_eq!(
                        buf,
                        &ct[..],
                        "split ciphertext {off} bytes into a line, {what}"
                    );
                }
            }
        }
    }
}

/// Keys placed at every offset into their allocation (`KeyBox`: malloc
/// gives 16-byte alignment, the zmm engine's key moves up to 48 bytes in to
/// a cache line, the ymm engine's up to 16 to 32 bytes) lie at their
/// alignment and seal and open like aws-lc-rs, both key sizes; a changed
/// tag fails and zeroes the buffer.
#[cfg(target_arch = "x86_64")]
#[test]
fn keys_at_every_offset_match_aws_lc_rs() {
    use crate::aead::secret::SetupStack;
    let cpu = Features::get();
    let mut byte = bytes(13);
    let lengths = [0, 16, 100, 432, 433, 1350, 4096, 16401];
    macro_rules! each_offset {
        ($key:ty, $key_len:literal, $offsets:literal, $detected:expr) => {
            if $detected {
                let mut seen = [false; $offsets];
                // Keys and fillers of 1-40 bytes kept alive: each key lands elsewhere
                // (glibc's malloc, the system allocator the tests run on, places the
                // fillers' 32- and 48-byte chunks between them).
                let mut held = Vec::new();
                for attempt in 0..1000 {
                    if seen.iter().all(|&s| s) {
                        break;
                    }
                    let key: [u8; $key_len] = core::array::from_fn(|_| byte());
                    let k = <$key>::new(&key, &mut SetupStack::new()).unwrap();
                    let (addr, lead, align) = k.placement();
                    assert_eq!(addr % align, 0, "{}", stringify!($key));
                    // As many offsets as the engine's loads need (zmm 64-byte alignment:
                    // 4; ymm 32: 2; AES-NI 16: 1), not only as its type asks.
                    assert_eq!(align / 16, $offsets, "{}", stringify!($key));
                    if !seen[lead / 16] {
                        seen[lead / 16] = true;
                        for len in lengths {
                            let what = format!("{}, lead {lead}, len {len}", stringify!($key));
                            let nonce: [u8; 12] = core::array::from_fn(|_| byte());
                            let aad: Vec<u8> = (0..len % 70).map(|_| byte()).collect();
                            let pt: Vec<u8> = (0..len).map(|_| byte()).collect();
                            let (ct, tag) = aws_lc_seal(&key, nonce, &aad, &pt);
                            seal_open_reject(
                                &what,
                                &pt,
                                (&ct, tag),
                                |buf| k.seal(&nonce, &aad, &pt, buf),
                                |buf, tag| k.open(&nonce, &aad, buf, tag),
                            );
                        }
                    }
                    held.push((k, vec![0u8; 1 + attempt % 40]));
                }
                assert!(seen.iter().all(|&s| s), "{}: {seen:?}", stringify!($key));
            }
        };
    }
    each_offset!(x86_vaes512::hybrid::Key<10>, 16, 4, cpu.vaes_clmul512);
    each_offset!(x86_vaes512::hybrid::Key<14>, 32, 4, cpu.vaes_clmul512);
    each_offset!(x86_vaes512::schoolbook::Key<10>, 16, 4, cpu.vaes_clmul512);
    each_offset!(x86_vaes512::karatsuba::Key<14>, 32, 4, cpu.vaes_clmul512);
    each_offset!(x86_vaes::Key<10>, 16, 2, cpu.vaes_clmul256);
    each_offset!(x86_vaes::Key<14>, 32, 2, cpu.vaes_clmul256);
    each_offset!(x86_aesni::avx::Key<10>, 16, 1, cpu.aes_clmul_avx);
}
