//! Adversarial: the relay corrupts one record; the receiver must fail
//! cleanly and deliver nothing past the fault.

use super::*;

pub(crate) const WARMUP: usize = 64;
/// Three application records sent after the relay is armed; the fault hits
/// the second (B), and for Swap also the third (C).
pub(crate) const ATTACK_SIZES: [usize; 3] = [100, 200, 300];

#[derive(Debug)]
pub(crate) enum Role {
    Receiver {
        /// Bytes delivered after A (only a prefix of B is allowed, and only
        /// for a replay).
        delivered_after_a: usize,
        failure: Failure,
    },
    Sender {
        /// What the sender read after B and C: the receiver's alert, or EOF.
        tail: String,
    },
}

pub(crate) fn attack_messages() -> [Vec<u8>; 3] {
    ATTACK_SIZES.map(|n| pattern(n, n as u64))
}

/// Sends A, waits for the receiver's one-byte ack (so A arrives on its own),
/// then B and C back to back, then reads what comes back.
pub(crate) fn attack_sender(tls: &mut Tls) -> Role {
    let [a, b, c] = attack_messages();
    tls.write_all(&a).expect("sender write A");
    let mut ack = [0u8; 1];
    tls.read_exact(&mut ack).expect("ack of A");
    tls.write_all(&b).expect("sender write B");
    // The receiver may already have hung up on B.
    let _ = tls.write_all(&c);
    let mut buf = [0u8; 64];
    let tail = match tls.read_some(&mut buf) {
        Ok(0) => "close_notify".to_string(),
        Ok(n) => format!("{n} bytes of data"),
        Err(e) => e.short(),
    };
    Role::Sender { tail }
}

pub(crate) fn attack_receiver(tls: &mut Tls, fault: Fault) -> Role {
    let [a, b, _] = attack_messages();
    let mut got = vec![0u8; a.len()];
    tls.read_exact(&mut got)
        .unwrap_or_else(|e| panic!("{fault:?}: record A before the fault: {e:?}"));
    assert_eq!(got, a, "{fault:?}: record A differs");
    tls.write_all(b"k").expect("ack A");
    // A replay may deliver the genuine B before the copy fails; nothing else
    // may ever come out.
    let allowed: &[u8] = if fault == Fault::Duplicate { &b } else { &[] };
    let mut delivered = Vec::new();
    let mut buf = vec![0u8; 1 << 15];
    let failure = loop {
        match tls.read_some(&mut buf) {
            Ok(0) => panic!("{fault:?}: receiver saw close_notify instead of an error"),
            Ok(n) => {
                delivered.extend_from_slice(&buf[..n]);
                assert!(
                    allowed.starts_with(&delivered),
                    "{fault:?}: receiver delivered {} bytes past the fault",
                    delivered.len()
                );
            }
            Err(e) => break e,
        }
    };
    // Let our alert reach the sender, then wait for it to hang up, so no
    // RST can discard the alert.
    let sock = tls.sock();
    let _ = sock.shutdown(Shutdown::Write);
    let _ = io::copy(sock, &mut io::sink());
    Role::Receiver {
        delivered_after_a: delivered.len(),
        failure,
    }
}

pub(crate) fn adversarial_case(suite: &Suite, fault: Fault) {
    for backends in backend_pairs(suite) {
        for topology in [Topology::FusionClient, Topology::FusionServer] {
            for dir in [Dir::ClientToServer, Dir::ServerToClient] {
                adversarial_run(suite, fault, topology, dir, backends);
            }
        }
    }
}

pub(crate) fn adversarial_run(
    suite: &Suite,
    fault: Fault,
    topology: Topology,
    dir: Dir,
    backends: (Backend, Backend),
) {
    let armed = Arc::new(AtomicBool::new(false));
    let arm = armed.clone();
    let client_sends = dir == Dir::ClientToServer;
    let out = connect(
        suite,
        topology,
        backends,
        Some((dir, fault)),
        armed,
        move |tls| {
            let info = side_info(tls);
            let warm = pattern(WARMUP, 7);
            tls.write_all(&warm).expect("warm-up");
            let mut back = vec![0u8; WARMUP];
            tls.read_exact(&mut back).expect("warm-up echo");
            assert_eq!(back, warm);
            // Everything from the handshake (tickets included) has passed
            // the relay; count application records from here.
            arm.store(true, Ordering::SeqCst);
            let role = if client_sends {
                attack_sender(tls)
            } else {
                tls.write_all(b"go").expect("go");
                attack_receiver(tls, fault)
            };
            (info, role)
        },
        move |tls| {
            let info = side_info(tls);
            let mut warm = vec![0u8; WARMUP];
            tls.read_exact(&mut warm).expect("warm-up");
            tls.write_all(&warm).expect("warm-up echo");
            let role = if client_sends {
                attack_receiver(tls, fault)
            } else {
                let mut go = [0u8; 2];
                tls.read_exact(&mut go).expect("go");
                attack_sender(tls)
            };
            (info, role)
        },
    );
    check_sides(suite, topology, &out.client.0, &out.server.0);
    let faulted = match dir {
        Dir::ClientToServer => &out.c2s,
        Dir::ServerToClient => &out.s2c,
    };
    assert!(faulted.fault_applied, "relay never applied {fault:?}");

    let (receiver, sender) = if client_sends {
        (&out.server.1, &out.client.1)
    } else {
        (&out.client.1, &out.server.1)
    };
    let receiver_is_fusion = matches!(
        (topology, dir),
        (Topology::FusionClient, Dir::ServerToClient)
            | (Topology::FusionServer, Dir::ClientToServer)
    );
    let Role::Receiver {
        delivered_after_a,
        failure,
    } = receiver
    else {
        unreachable!()
    };
    let Role::Sender { tail } = sender else {
        unreachable!()
    };
    // The alert the receiver sent, as seen by BoringSSL (either as the
    // receiver that sent it or the sender that got it).
    let bssl_alert = if receiver_is_fusion {
        BsslStats::alert(&out.bssl.alert_received)
    } else {
        BsslStats::alert(&out.bssl.alert_sent)
    };
    let mac_fault = matches!(
        fault,
        Fault::BitFlip | Fault::TruncateShort | Fault::Duplicate | Fault::Swap
    );
    if mac_fault {
        assert!(
            failure.is_bad_record_mac(),
            "{fault:?}: receiver failed with {failure:?}, want bad_record_mac"
        );
        assert_eq!(
            bssl_alert,
            Some(ALERT_BAD_RECORD_MAC),
            "{fault:?}: alert on the wire (sender saw: {tail})"
        );
        if !receiver_is_fusion {
            assert!(
                tail.contains("BadRecordMac"),
                "{fault:?}: rustls-fusion sender saw {tail}, want a bad_record_mac alert"
            );
        }
    }
    report(format!(
        "adversarial\t{}\t{}\t{:?}\t{}\t{:?}\treceiver={}\tdelivered_after_A={delivered_after_a}\t\
         receiver_error={}\talert={}\tsender_saw={tail}",
        suite.name,
        topology.label(),
        dir,
        backend_of(suite, backends).name(),
        fault,
        if receiver_is_fusion {
            "rustls-fusion"
        } else {
            "boringssl"
        },
        failure.short(),
        bssl_alert.map_or("none".to_string(), |a| a.to_string()),
    ));
}

macro_rules! adversarial {
    ($($name:ident: $suite:ident, $fault:ident;)*) => {$(
        #[test]
        fn $name() {
            adversarial_case(&$suite, Fault::$fault);
        }
    )*};
}

macro_rules! adversarial_suite {
    ($prefix:ident: $suite:ident) => {
        mod $prefix {
            use super::*;
            adversarial! {
                bit_flip: $suite, BitFlip;
                truncate_short: $suite, TruncateShort;
                truncate_eof: $suite, TruncateEof;
                inflate_fill: $suite, InflateFill;
                inflate_huge: $suite, InflateHuge;
                duplicate: $suite, Duplicate;
                swap: $suite, Swap;
            }
        }
    };
}

adversarial_suite!(adv_tls13_aes_128_gcm: TLS13_AES_128_GCM_SHA256);
adversarial_suite!(adv_tls13_chacha20_poly1305: TLS13_CHACHA20_POLY1305_SHA256);
adversarial_suite!(adv_tls12_ecdhe_ecdsa_aes_128_gcm: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256);
adversarial_suite!(adv_tls12_ecdhe_ecdsa_chacha20: TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256);
