//! The man-in-the-middle relay that parses TLS records between the
//! endpoints (and injects faults), and running one connection through it.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    ClientToServer,
    ServerToClient,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// One bit flipped in the middle of the record body.
    BitFlip,
    /// Body cut to half, length field rewritten to match.
    TruncateShort,
    /// Header and half the body, then the relay closes that direction.
    TruncateEof,
    /// Length field set to 2^14 + 256 + 1, body padded with zeros to match.
    InflateFill,
    /// Length field set to 0xffff (body not padded).
    InflateHuge,
    /// The record is forwarded twice (replay).
    Duplicate,
    /// The record and the next one are forwarded in swapped order.
    Swap,
}

/// What the relay saw in one direction.
#[derive(Default, Debug)]
pub(crate) struct DirReport {
    pub(crate) records: u64,
    pub(crate) app_data_records: u64,
    /// TLS 1.2 AES-GCM: the explicit nonce of every record after ChangeCipherSpec.
    pub(crate) explicit_nonces: Vec<u64>,
    pub(crate) max_body: usize,
    pub(crate) fault_applied: bool,
}

impl DirReport {
    /// Checks that the explicit nonces are exactly 0, 1, 2, ... and unique.
    pub(crate) fn check_sequential_nonces(&self) -> Result<(), String> {
        if self.explicit_nonces.is_empty() {
            return Err("no encrypted records".into());
        }
        let unique: HashSet<u64> = self.explicit_nonces.iter().copied().collect();
        if unique.len() != self.explicit_nonces.len() {
            return Err(format!(
                "{} repeated explicit nonces",
                self.explicit_nonces.len() - unique.len()
            ));
        }
        for (i, &n) in self.explicit_nonces.iter().enumerate() {
            if n != i as u64 {
                return Err(format!("record {i} after CCS has explicit nonce {n:#x}"));
            }
        }
        Ok(())
    }
}

pub(crate) struct Relay {
    pub(crate) addr: SocketAddr,
    pub(crate) handle: thread::JoinHandle<(DirReport, DirReport)>,
}

/// Accepts with a deadline instead of blocking forever.
pub(crate) fn accept(listener: &TcpListener) -> TcpStream {
    listener.set_nonblocking(true).expect("nonblocking");
    let deadline = Instant::now() + IO_TIMEOUT;
    loop {
        match listener.accept() {
            Ok((tcp, _)) => {
                tcp.set_nonblocking(false).expect("blocking");
                return tcp;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                thread::sleep(Duration::from_millis(2));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
}

pub(crate) fn start_relay(
    server: SocketAddr,
    fault: Option<(Dir, Fault)>,
    armed: Arc<AtomicBool>,
    record_nonces: bool,
) -> Relay {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind relay");
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        let client = accept(&listener);
        let server = TcpStream::connect(server).expect("relay connect");
        timeouts(&client, RELAY_TIMEOUT);
        timeouts(&server, RELAY_TIMEOUT);
        let fault_for = |dir: Dir| fault.filter(|f| f.0 == dir).map(|f| f.1);
        let (c_in, s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        let c2s_fault = fault_for(Dir::ClientToServer);
        let c2s_armed = armed.clone();
        let c2s = thread::spawn(move || pump(c_in, s_out, c2s_fault, &c2s_armed, record_nonces));
        let s2c = pump(
            server,
            client,
            fault_for(Dir::ServerToClient),
            &armed,
            record_nonces,
        );
        (c2s.join().expect("relay pump"), s2c)
    });
    Relay { addr, handle }
}

pub(crate) fn record(content_type: u8, version: [u8; 2], body: &[u8], len_field: u16) -> Vec<u8> {
    let mut r = vec![content_type, version[0], version[1]];
    r.extend_from_slice(&len_field.to_be_bytes());
    r.extend_from_slice(body);
    r
}

/// Forwards TLS records from `src` to `dst`, parsing each header; applies
/// `fault` to the second application-data record seen after `armed`.
pub(crate) fn pump(
    mut src: TcpStream,
    mut dst: TcpStream,
    fault: Option<Fault>,
    armed: &AtomicBool,
    record_nonces: bool,
) -> DirReport {
    let mut rep = DirReport::default();
    let mut inbuf: Vec<u8> = Vec::with_capacity(1 << 17);
    let mut out: Vec<u8> = Vec::with_capacity(1 << 17);
    let mut tmp = vec![0u8; 1 << 16];
    let mut ccs_seen = false;
    let mut armed_index = 0u64;
    let mut held: Option<Vec<u8>> = None;
    let mut stop = false;
    'outer: loop {
        let n = match src.read(&mut tmp) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        inbuf.extend_from_slice(&tmp[..n]);
        let mut off = 0;
        while inbuf.len() - off >= 5 {
            let len = usize::from(u16::from_be_bytes([inbuf[off + 3], inbuf[off + 4]]));
            if inbuf.len() - off < 5 + len {
                break;
            }
            let rec = &inbuf[off..off + 5 + len];
            off += 5 + len;
            let (ty, ver, body) = (rec[0], [rec[1], rec[2]], &rec[5..]);
            rep.records += 1;
            rep.max_body = rep.max_body.max(len);
            if ty == 20 {
                ccs_seen = true;
            } else if ccs_seen && record_nonces && len >= 8 {
                rep.explicit_nonces
                    .push(u64::from_be_bytes(body[..8].try_into().unwrap()));
            }
            let mut target = None;
            if ty == 23 {
                rep.app_data_records += 1;
                if armed.load(Ordering::SeqCst) {
                    target = Some(armed_index);
                    armed_index += 1;
                }
            }
            match (fault, target) {
                (Some(Fault::BitFlip), Some(1)) => {
                    let mut r = rec.to_vec();
                    r[5 + len / 2] ^= 0x10;
                    out.extend_from_slice(&r);
                }
                (Some(Fault::TruncateShort), Some(1)) => {
                    out.extend_from_slice(&record(ty, ver, &body[..len / 2], (len / 2) as u16));
                }
                (Some(Fault::TruncateEof), Some(1)) => {
                    out.extend_from_slice(&rec[..5 + len / 2]);
                    stop = true;
                }
                (Some(Fault::InflateFill), Some(1)) => {
                    let inflated = (1 << 14) + 256 + 1;
                    let mut padded = body.to_vec();
                    padded.resize(inflated, 0);
                    out.extend_from_slice(&record(ty, ver, &padded, inflated as u16));
                }
                (Some(Fault::InflateHuge), Some(1)) => {
                    out.extend_from_slice(&record(ty, ver, body, 0xffff));
                }
                (Some(Fault::Duplicate), Some(1)) => {
                    out.extend_from_slice(rec);
                    out.extend_from_slice(rec);
                }
                (Some(Fault::Swap), Some(1)) => {
                    held = Some(rec.to_vec());
                }
                (Some(Fault::Swap), Some(2)) => {
                    out.extend_from_slice(rec);
                    out.extend_from_slice(&held.take().expect("held record"));
                }
                _ => {
                    out.extend_from_slice(rec);
                    continue;
                }
            }
            rep.fault_applied = true;
            if stop {
                break;
            }
        }
        inbuf.drain(..off);
        if dst.write_all(&out).is_err() {
            break 'outer;
        }
        out.clear();
        if stop {
            break;
        }
    }
    if !stop {
        let _ = dst.write_all(&inbuf);
    }
    let _ = dst.shutdown(Shutdown::Write);
    rep
}

// ---------------------------------------------------------------------------
// Running one connection
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Topology {
    /// rustls-fusion client <-> BoringSSL server.
    FusionClient,
    /// BoringSSL client <-> rustls-fusion server.
    FusionServer,
}

impl Topology {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::FusionClient => "fusion client -> bssl server",
            Self::FusionServer => "bssl client -> fusion server",
        }
    }
}

pub(crate) struct Outcome<C, S> {
    pub(crate) client: C,
    pub(crate) server: S,
    pub(crate) c2s: DirReport,
    pub(crate) s2c: DirReport,
    pub(crate) bssl: &'static BsslStats,
}

/// One connection through the relay, `client` and `server` run on their own
/// threads with the connected (handshaken) endpoint.
pub(crate) fn connect<C: Send, S: Send>(
    suite: &Suite,
    topology: Topology,
    backends: (Backend, Backend),
    fault: Option<(Dir, Fault)>,
    armed: Arc<AtomicBool>,
    client: impl FnOnce(&mut Tls) -> C + Send,
    server: impl FnOnce(&mut Tls) -> S + Send,
) -> Outcome<C, S> {
    let provider = fusion_provider(suite, backends);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind server");
    let relay = start_relay(
        listener.local_addr().unwrap(),
        fault,
        armed,
        suite.explicit_nonce(),
    );
    let (bssl_acceptor, bssl_connector, bssl) = match topology {
        Topology::FusionClient => {
            let (a, s) = bssl_acceptor(suite);
            (Some(a), None, s)
        }
        Topology::FusionServer => {
            let (c, s) = bssl_connector(suite);
            (None, Some(c), s)
        }
    };
    let (client_result, server_result) = thread::scope(|scope| {
        let server_thread = scope.spawn(|| {
            let tcp = accept(&listener);
            timeouts(&tcp, IO_TIMEOUT);
            let mut tls = match &bssl_acceptor {
                Some(a) => Tls::bssl_server(a, tcp),
                None => Tls::fusion_server(fusion_server_config(suite, provider.clone()), tcp),
            };
            server(&mut tls)
        });
        let client_thread = scope.spawn(|| {
            let tcp = TcpStream::connect(relay.addr).expect("connect relay");
            timeouts(&tcp, IO_TIMEOUT);
            let mut tls = match &bssl_connector {
                Some(c) => Tls::bssl_client(c, tcp),
                None => Tls::fusion_client(fusion_client_config(suite, provider.clone()), tcp),
            };
            client(&mut tls)
        });
        (client_thread.join(), server_thread.join())
    });
    let (c2s, s2c) = relay.handle.join().expect("relay thread");
    match (client_result, server_result) {
        (Ok(client), Ok(server)) => Outcome {
            client,
            server,
            c2s,
            s2c,
            bssl,
        },
        (Err(e), _) | (_, Err(e)) => std::panic::resume_unwind(e),
    }
}
