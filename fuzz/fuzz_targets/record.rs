//! The record layer: an in-memory rustls client/server pair on
//! rustls-fusion for a fuzzer-chosen suite, handshake done, some genuine
//! application data, then fuzzer bytes injected as TLS records in either
//! direction. No panic; no plaintext is delivered from a record that fails;
//! a record that fails to decrypt ends the connection with a
//! `bad_record_mac` alert the peer receives.
#![no_main]

use std::io::Read;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rustls::crypto::CryptoProvider;
use rustls::{AlertDescription, Connection, Error};
use rustls_fusion::cipher_suite::ALL_CIPHER_SUITES;
use tls_tests::memory::Pair;

fn provider() -> &'static CryptoProvider {
    static P: OnceLock<CryptoProvider> = OnceLock::new();
    P.get_or_init(rustls_fusion::default_provider)
}

fn drain(conn: &mut Connection) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match conn.reader().read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    let suite = ALL_CIPHER_SUITES[usize::from(ctl % 9)];
    let to_server = ctl & 0x10 == 0;
    let framed = ctl & 0x20 == 0;
    let mut pair = Pair::connect(provider(), provider(), suite);
    // Genuine traffic first, so sequence numbers are past zero (`send`
    // checks it arrived).
    pair.send(to_server, b"genuine");
    // The fuzzer's records: framed as application data by us, or raw.
    let mut wire = Vec::new();
    if framed {
        for chunk in rest.chunks(18_000) {
            wire.extend_from_slice(&[0x17, 0x03, 0x03]);
            wire.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            wire.extend_from_slice(chunk);
        }
    } else {
        wire.extend_from_slice(rest);
    }
    let (receiver, sender) = if to_server {
        (&mut pair.server, &mut pair.client)
    } else {
        (&mut pair.client, &mut pair.server)
    };
    let mut rd = &wire[..];
    let mut result = Ok(());
    while !rd.is_empty() {
        match receiver.read_tls(&mut rd) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => break,
        }
        if let Err(e) = receiver.process_new_packets() {
            result = Err(e);
            break;
        }
    }
    // Nothing the fuzzer wrote can decrypt: no plaintext is delivered.
    assert!(drain(receiver).is_empty(), "plaintext from a forged record");
    if let Err(e) = result {
        if e == Error::DecryptError {
            // The receiver's alert reaches the sender as bad_record_mac.
            let mut alert = Vec::new();
            while receiver.wants_write() {
                receiver.write_tls(&mut alert).unwrap();
            }
            let mut rd = &alert[..];
            while !rd.is_empty() && sender.read_tls(&mut rd).unwrap_or(0) > 0 {}
            assert_eq!(
                sender.process_new_packets().err(),
                Some(Error::AlertReceived(AlertDescription::BadRecordMac))
            );
        }
    }
});
