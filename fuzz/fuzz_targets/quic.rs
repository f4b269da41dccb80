//! QUIC receive path on fuzzer packets: header-protection removal and open,
//! through rustls's `quic` objects (Initial keys of a fuzzer-chosen
//! connection id) and through the standalone `Opener`, on a genuine packet
//! the fuzzer mutates or on bytes of its own. No panic; a packet that fails
//! to open has its payload zeroed; a packet that opens is authentic: it is
//! exactly what sealing its plaintext under its header and packet number
//! gives (the fuzzer's own bytes may be a genuine packet for another packet
//! number, which must open), and a mutated genuine packet never opens.
//! Arbitrary offsets, near `usize::MAX` too, are refused without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustls::quic::{Keys, Version};
use rustls::Side;
use rustls_fusion::cipher_suite::{
    TLS13_AES_128_GCM_SHA256, TLS13_AES_256_GCM_SHA384, TLS13_CHACHA20_POLY1305_SHA256,
};
use rustls_fusion::quic::{Cipher, Opener, Sealer};

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    let (suite, cipher) = match ctl % 3 {
        0 => (TLS13_AES_128_GCM_SHA256, Cipher::Aes128Gcm),
        1 => (TLS13_AES_256_GCM_SHA384, Cipher::Aes256Gcm),
        _ => (TLS13_CHACHA20_POLY1305_SHA256, Cipher::ChaCha20Poly1305),
    };
    let pn_len = usize::from(ctl >> 2 & 3) + 1;
    let pn = u64::from(ctl >> 4) + 1;
    let (mutations, payload) = rest.split_at(rest.len().min(8));
    // A genuine short-header packet: first byte, 4-byte connection id,
    // packet number, payload (at least 4 bytes after the number), tag.
    let mut header = vec![0x40 | (pn_len as u8 - 1), 1, 2, 3, 4];
    header.extend_from_slice(&pn.to_be_bytes()[8 - pn_len..]);
    let pn_offset = 5;
    let mut body = payload.to_vec();
    body.resize(body.len().max(4), 0);

    // Standalone API.
    let key = vec![7u8; cipher.key_len()];
    let (iv, hp) = ([9u8; 12], vec![11u8; cipher.key_len()]);
    let sealer = Sealer::new(cipher, &key, &iv, &hp).unwrap();
    let opener = Opener::new(cipher, &key, &iv, &hp).unwrap();
    let mut genuine = [&header[..], &body, &[0; 16]].concat();
    sealer.seal_packet(&mut genuine, pn_offset, pn).unwrap();
    let mut packet = genuine.clone();
    let raw = mutations.first().is_some_and(|m| m & 1 == 1);
    if raw {
        packet = rest.to_vec();
    } else {
        for pair in mutations.chunks(2) {
            if let [at, bits] = pair {
                if !packet.is_empty() {
                    let i = usize::from(*at) % packet.len();
                    packet[i] ^= bits;
                }
            }
        }
        if mutations.len() > 6 && packet.len() > 1 {
            packet.truncate(packet.len() - usize::from(mutations[6]) % packet.len());
        }
    }
    let changed = packet != genuine;
    let received = packet.clone();
    if let Ok(info) = opener.unprotect_header(&mut packet, pn_offset) {
        let full = u64::from(info.truncated_pn);
        let header = packet[..info.header_len].to_vec();
        match opener.open_packet(&mut packet, info.header_len, full) {
            Ok(plain) => {
                assert!(raw || !changed, "a changed packet opened");
                assert!(
                    changed || plain == &body[..],
                    "the genuine packet opened wrong"
                );
                // Authentic: sealing what it opened to reproduces it.
                let mut again = [&header[..], plain, &[0; 16]].concat();
                Sealer::new(cipher, &key, &iv, &hp)
                    .unwrap()
                    .seal_packet(&mut again, pn_offset, full)
                    .unwrap();
                assert_eq!(
                    again, received,
                    "an opened packet is not what sealing gives"
                );
            }
            Err(_) => assert!(packet[info.header_len.min(packet.len())..]
                .iter()
                .all(|&b| b == 0)),
        }
    }

    // Offsets a stack may take from a peer's length fields, near
    // `usize::MAX` too: an error, never a panic.
    if let Some(&o) = mutations.get(7) {
        let offset = match o {
            0x80.. => usize::MAX - usize::from(o & 0x7f),
            _ => usize::from(o),
        };
        let mut p = received.clone();
        let _ = opener.unprotect_header(&mut p, offset);
        let _ = opener.open_packet(&mut p, offset, pn);
        let _ = sealer.seal_packet(&mut p, offset, pn + 1);
    }

    // rustls's objects, Initial keys for a connection id from the fuzzer.
    let dcid = &mutations[..mutations.len().min(8)];
    let t13 = suite.tls13().unwrap();
    let client = Keys::initial(Version::V1, t13, t13.quic.unwrap(), dcid, Side::Client);
    let server = Keys::initial(Version::V1, t13, t13.quic.unwrap(), dcid, Side::Server);
    let genuine = rustls_seal(&client, &header, &body, pn, pn_offset);
    let mut packet = if raw { rest.to_vec() } else { genuine.clone() };
    if !raw {
        for pair in mutations.chunks(2) {
            if let [at, bits] = pair {
                let i = usize::from(*at) % packet.len();
                packet[i] ^= bits;
            }
        }
    }
    let changed = packet != genuine;
    let received = packet.clone();
    if packet.len() >= pn_offset + 4 + 16 {
        let (head, sample) = packet.split_at_mut(pn_offset + 4);
        let (first, rest) = head.split_at_mut(1);
        if server
            .remote
            .header
            .decrypt_in_place(&sample[..16], &mut first[0], &mut rest[pn_offset - 1..])
            .is_ok()
        {
            let header_len = pn_offset + usize::from(packet[0] & 3) + 1;
            let mut truncated = 0u64;
            for &b in &packet[pn_offset..header_len] {
                truncated = truncated << 8 | u64::from(b);
            }
            let (h, p) = packet.split_at_mut(header_len);
            match server.remote.packet.decrypt_in_place(truncated, h, p) {
                Ok(plain) => {
                    assert!(raw || !changed, "a changed packet opened");
                    assert!(
                        changed || plain == &body[..],
                        "the genuine packet opened wrong"
                    );
                    // Authentic: sealing what it opened, under the same
                    // header and packet number, reproduces it (fresh keys:
                    // the packet-number guard of `client` has moved on).
                    let fresh =
                        Keys::initial(Version::V1, t13, t13.quic.unwrap(), dcid, Side::Client);
                    let again = rustls_seal(&fresh, h, plain, truncated, pn_offset);
                    assert_eq!(
                        again, received,
                        "an opened packet is not what sealing gives"
                    );
                }
                Err(e) => {
                    assert_eq!(e, rustls::Error::DecryptError);
                    assert!(p.iter().all(|&b| b == 0), "payload not zeroed");
                }
            }
        }
    }
});

/// `header ‖ payload` sealed as packet `pn` with the `local` keys of
/// `keys`, then header-protected (the packet number at `pn_offset`).
fn rustls_seal(keys: &Keys, header: &[u8], payload: &[u8], pn: u64, pn_offset: usize) -> Vec<u8> {
    let mut packet = [header, payload].concat();
    let (h, p) = packet.split_at_mut(header.len());
    let tag = keys.local.packet.encrypt_in_place(pn, h, p).unwrap();
    packet.extend_from_slice(tag.as_ref());
    let (head, sample) = packet.split_at_mut(pn_offset + 4);
    let (first, rest) = head.split_at_mut(1);
    keys.local
        .header
        .encrypt_in_place(&sample[..16], &mut first[0], &mut rest[pn_offset - 1..])
        .unwrap();
    packet
}
