//! The matrix: every suite in both directions on every backend; echo,
//! stream, KeyUpdate, close_notify.

use super::*;

/// Message sizes echoed in every matrix run.
pub(crate) const SIZES: [usize; 13] = [
    0,
    1,
    15,
    16,
    17,
    255,
    1350,
    16383,
    16384,
    16385,
    65543,
    1 << 20,
    4 << 20,
];
/// Small records streamed each way in every matrix run.
pub(crate) const STREAM_RECORDS: u64 = 10_000;

pub(crate) const OP_END: u8 = 0;
pub(crate) const OP_ECHO: u8 = 1;
pub(crate) const OP_STREAM: u8 = 2;
/// The client starts a KeyUpdate halfway through sending.
pub(crate) const KU_CLIENT: u8 = 1;
/// The server starts a KeyUpdate halfway through echoing.
pub(crate) const KU_SERVER: u8 = 2;

/// Which messages carry a KeyUpdate (TLS 1.3 only); one initiator per
/// message, so each KeyUpdate gets exactly one answer before the next.
pub(crate) fn ku_flags(index: usize) -> u8 {
    match index {
        4 | 7 | 9 | 11 => KU_CLIENT,
        5 | 8 | 10 | 12 => KU_SERVER,
        _ => 0,
    }
}

/// KeyUpdates started per side per session: the message schedule plus one in
/// each direction's record stream.
pub(crate) fn key_updates_per_side() -> (u32, u32) {
    let count = |flag| (0..SIZES.len()).filter(|&i| ku_flags(i) == flag).count() as u32;
    (count(KU_CLIENT) + 1, count(KU_SERVER) + 1)
}

/// Deterministic, non-periodic test data.
pub(crate) fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

pub(crate) fn stream_record(i: u64, seed: u8) -> Vec<u8> {
    let len = 1 + (i * 7 % 64) as usize;
    (0..len)
        .map(|j| (i as u8).wrapping_mul(31).wrapping_add(j as u8) ^ seed)
        .collect()
}

pub(crate) fn stream_total(n: u64, seed: u8) -> Vec<u8> {
    (0..n).flat_map(|i| stream_record(i, seed)).collect()
}

pub(crate) fn frame(op: u8, flags: u8, len: u64) -> [u8; 10] {
    let mut f = [0u8; 10];
    f[0] = op;
    f[1] = flags;
    f[2..].copy_from_slice(&len.to_le_bytes());
    f
}

pub(crate) fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Writes `data`, with a KeyUpdate halfway if `ku`.
pub(crate) fn send_message(tls: &mut Tls, data: &[u8], ku: bool) -> Result<(), Failure> {
    if ku {
        let (a, b) = data.split_at(data.len() / 2);
        assert!(
            !a.is_empty() && !b.is_empty(),
            "KeyUpdate needs data after it"
        );
        tls.write_all(a)?;
        tls.key_update();
        tls.write_all(b)
    } else {
        tls.write_all(data)
    }
}

pub(crate) fn send_stream(tls: &mut Tls, seed: u8, ku: bool) -> Result<(), Failure> {
    for i in 0..STREAM_RECORDS {
        if ku && i == STREAM_RECORDS / 2 {
            tls.key_update();
        }
        tls.write_all(&stream_record(i, seed))?;
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Server,
}

/// Close with close_notify, `closer` first; both sides check the other's.
pub(crate) fn close(tls: &mut Tls, me: Side, closer: Side) {
    if me == closer {
        tls.send_close_notify().expect("send close_notify");
        tls.await_close_notify()
            .expect("peer answers with close_notify");
    } else {
        tls.await_close_notify()
            .expect("peer initiated close_notify");
        tls.send_close_notify().expect("answer close_notify");
    }
}

#[derive(Debug)]
pub(crate) struct SideInfo {
    pub(crate) suite_id: u16,
    pub(crate) version: u16,
    pub(crate) group: String,
}

pub(crate) fn side_info(tls: &Tls) -> SideInfo {
    SideInfo {
        suite_id: tls.suite_id(),
        version: tls.version(),
        group: tls.group(),
    }
}

pub(crate) fn matrix_client(tls: &mut Tls, suite: &Suite, closer: Side, full: bool) -> SideInfo {
    let info = side_info(tls);
    let sizes: &[usize] = if full { &SIZES } else { &[1000] };
    for (i, &size) in sizes.iter().enumerate() {
        let flags = if suite.tls13 && full { ku_flags(i) } else { 0 };
        let msg = pattern(size, i as u64 + 1);
        tls.write_all(&frame(OP_ECHO, flags, size as u64))
            .expect("write frame");
        send_message(tls, &msg, flags & KU_CLIENT != 0).expect("send message");
        let mut back = vec![0u8; size];
        tls.read_exact(&mut back)
            .unwrap_or_else(|e| panic!("echo of {size} bytes: {e:?}"));
        if let Some(at) = first_difference(&msg, &back) {
            panic!("echo of {size} bytes differs at offset {at}");
        }
    }
    if full {
        let flags = if suite.tls13 {
            KU_CLIENT | KU_SERVER
        } else {
            0
        };
        tls.write_all(&frame(OP_STREAM, flags, STREAM_RECORDS))
            .expect("write frame");
        send_stream(tls, 0x5a, flags & KU_CLIENT != 0).expect("client record stream");
        let want = stream_total(STREAM_RECORDS, 0xa5);
        let mut got = vec![0u8; want.len()];
        tls.read_exact(&mut got).expect("server record stream");
        assert_eq!(first_difference(&want, &got), None, "server stream differs");
    }
    tls.write_all(&frame(OP_END, 0, 0)).expect("write end");
    close(tls, Side::Client, closer);
    info
}

pub(crate) fn matrix_server(tls: &mut Tls, closer: Side) -> SideInfo {
    let info = side_info(tls);
    loop {
        let mut f = [0u8; 10];
        tls.read_exact(&mut f).expect("read frame");
        let len = u64::from_le_bytes(f[2..].try_into().unwrap());
        match f[0] {
            OP_ECHO => {
                let mut msg = vec![0u8; len as usize];
                tls.read_exact(&mut msg).expect("read message");
                send_message(tls, &msg, f[1] & KU_SERVER != 0).expect("echo");
            }
            OP_STREAM => {
                let want = stream_total(len, 0x5a);
                let mut got = vec![0u8; want.len()];
                tls.read_exact(&mut got).expect("client record stream");
                assert_eq!(first_difference(&want, &got), None, "client stream differs");
                send_stream(tls, 0xa5, f[1] & KU_SERVER != 0).expect("server record stream");
            }
            OP_END => break,
            op => panic!("unknown op {op}"),
        }
    }
    close(tls, Side::Server, closer);
    info
}

pub(crate) fn check_sides(suite: &Suite, topology: Topology, client: &SideInfo, server: &SideInfo) {
    for (who, info) in [("client", client), ("server", server)] {
        assert_eq!(
            info.suite_id,
            suite.id,
            "{} {who} negotiated {:#06x}, want {:#06x} ({})",
            topology.label(),
            info.suite_id,
            suite.id,
            suite.name
        );
        assert_eq!(info.version, suite.version(), "{who} protocol version");
    }
}

pub(crate) fn matrix_case(suite: &Suite, topology: Topology) {
    for backends in backend_pairs(suite) {
        let backend = backend_of(suite, backends);
        let start = Instant::now();

        // Main session: all sizes, the record stream, KeyUpdates, client closes.
        let out = connect(
            suite,
            topology,
            backends,
            None,
            Arc::new(AtomicBool::new(false)),
            |tls| matrix_client(tls, suite, Side::Client, true),
            |tls| matrix_server(tls, Side::Client),
        );
        check_sides(suite, topology, &out.client, &out.server);
        let ku_sent = out.bssl.key_updates_sent.load(Ordering::SeqCst);
        let ku_received = out.bssl.key_updates_received.load(Ordering::SeqCst);
        if suite.tls13 {
            // Every KeyUpdate is update_requested and answered once, so
            // BoringSSL sends (and receives) one per KeyUpdate either side starts.
            let (by_client, by_server) = key_updates_per_side();
            assert_eq!(
                (ku_sent, ku_received),
                (by_client + by_server, by_client + by_server),
                "BoringSSL KeyUpdate counts (sent, received)"
            );
        } else {
            assert_eq!((ku_sent, ku_received), (0, 0));
        }
        let bssl_records = (
            out.bssl.records_sent.load(Ordering::SeqCst),
            out.bssl.records_received.load(Ordering::SeqCst),
        );
        assert!(
            bssl_records.0 >= STREAM_RECORDS && bssl_records.1 >= STREAM_RECORDS,
            "BoringSSL records (sent, received) = {bssl_records:?}"
        );
        for (dir, rep) in [("client->server", &out.c2s), ("server->client", &out.s2c)] {
            assert!(
                rep.app_data_records >= STREAM_RECORDS,
                "{dir}: only {} application-data records on the wire",
                rep.app_data_records
            );
            assert!(
                rep.max_body <= (1 << 14) + 256,
                "{dir}: record body of {} bytes",
                rep.max_body
            );
        }
        let (ours, theirs) = match topology {
            Topology::FusionClient => (&out.c2s, &out.s2c),
            Topology::FusionServer => (&out.s2c, &out.c2s),
        };
        let nonces = if suite.explicit_nonce() {
            ours.check_sequential_nonces()
                .unwrap_or_else(|e| panic!("rustls-fusion explicit nonces: {e}"));
            let bssl_seq = match theirs.check_sequential_nonces() {
                Ok(()) => "sequential",
                Err(_) => "not sequential",
            };
            format!(
                "ours 0..{} sequential+unique, bssl {bssl_seq}",
                ours.explicit_nonces.len() - 1
            )
        } else {
            "implicit".to_string()
        };

        // Second session: one echo, the server closes first.
        let short = connect(
            suite,
            topology,
            backends,
            None,
            Arc::new(AtomicBool::new(false)),
            |tls| matrix_client(tls, suite, Side::Server, false),
            |tls| matrix_server(tls, Side::Server),
        );
        check_sides(suite, topology, &short.client, &short.server);

        let bytes: u64 = SIZES.iter().map(|&s| s as u64).sum::<u64>()
            + stream_total(STREAM_RECORDS, 0).len() as u64;
        report(format!(
            "matrix\t{}\t{}\t{}\t{}\tok\tbytes_each_way={bytes}\trecords c2s={} s2c={}\t\
             keyupdates bssl sent={ku_sent} received={ku_received}\tnonces: {nonces}\t\
             close_notify client-first+server-first ok\t{:.2}s",
            suite.name,
            topology.label(),
            backend.name(),
            out.client.group,
            out.c2s.records,
            out.s2c.records,
            start.elapsed().as_secs_f64()
        ));
    }
}

macro_rules! matrix {
    ($($module:ident: $suite:ident;)*) => {$(
        mod $module {
            use super::*;
            #[test]
            fn fusion_client() {
                matrix_case(&$suite, Topology::FusionClient);
            }
            #[test]
            fn fusion_server() {
                matrix_case(&$suite, Topology::FusionServer);
            }
        }
    )*};
}

matrix! {
    tls13_aes_128_gcm_sha256: TLS13_AES_128_GCM_SHA256;
    tls13_aes_256_gcm_sha384: TLS13_AES_256_GCM_SHA384;
    tls13_chacha20_poly1305_sha256: TLS13_CHACHA20_POLY1305_SHA256;
    tls12_ecdhe_ecdsa_aes_128_gcm_sha256: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
    tls12_ecdhe_ecdsa_aes_256_gcm_sha384: TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384;
    tls12_ecdhe_ecdsa_chacha20_poly1305_sha256: TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256;
    tls12_ecdhe_rsa_aes_128_gcm_sha256: TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256;
    tls12_ecdhe_rsa_aes_256_gcm_sha384: TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384;
    tls12_ecdhe_rsa_chacha20_poly1305_sha256: TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256;
}
