//! quinn over loopback with any rustls `CryptoProvider` on either end: one
//! bidirectional transfer, checked by hash at both ends, with forced key
//! updates, GSO on or off, an optional relay that corrupts a datagram, and
//! 0-RTT resumption. Counting wrappers around the providers' `quic`
//! objects report how many packets each end sealed and opened, so a test
//! can tell whose code protected the traffic.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_lc_rs::digest::{Context, SHA256};
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::{ClientConfig, Endpoint, ServerConfig, TransportConfig};
use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::crypto::{CipherSuiteCommon, CryptoProvider};
use rustls::quic::{self, Tag};
use rustls::{CipherSuite, SupportedCipherSuite, Tls13CipherSuite};

use crate::certs;

/// Calls into one end's `quic` objects.
#[derive(Debug, Default)]
pub struct Counts {
    pub packet_keys: AtomicUsize,
    pub seals: AtomicU64,
    pub opens: AtomicU64,
    pub failed_opens: AtomicU64,
    pub header_protects: AtomicU64,
    pub header_removals: AtomicU64,
}

struct CountingAlg(&'static dyn quic::Algorithm, Arc<Counts>);
struct CountingPk(Box<dyn quic::PacketKey>, Arc<Counts>);
struct CountingHp(Box<dyn quic::HeaderProtectionKey>, Arc<Counts>);

impl quic::Algorithm for CountingAlg {
    fn packet_key(&self, key: AeadKey, iv: Iv) -> Box<dyn quic::PacketKey> {
        self.1.packet_keys.fetch_add(1, Ordering::Relaxed);
        Box::new(CountingPk(self.0.packet_key(key, iv), self.1.clone()))
    }
    fn header_protection_key(&self, key: AeadKey) -> Box<dyn quic::HeaderProtectionKey> {
        Box::new(CountingHp(
            self.0.header_protection_key(key),
            self.1.clone(),
        ))
    }
    fn aead_key_len(&self) -> usize {
        self.0.aead_key_len()
    }
}

impl quic::PacketKey for CountingPk {
    fn encrypt_in_place(
        &self,
        pn: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        self.1.seals.fetch_add(1, Ordering::Relaxed);
        self.0.encrypt_in_place(pn, header, payload)
    }
    fn decrypt_in_place<'a>(
        &self,
        pn: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        self.1.opens.fetch_add(1, Ordering::Relaxed);
        let r = self.0.decrypt_in_place(pn, header, payload);
        if r.is_err() {
            self.1.failed_opens.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
    fn tag_len(&self) -> usize {
        self.0.tag_len()
    }
    fn confidentiality_limit(&self) -> u64 {
        self.0.confidentiality_limit()
    }
    fn integrity_limit(&self) -> u64 {
        self.0.integrity_limit()
    }
}

impl quic::HeaderProtectionKey for CountingHp {
    fn encrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        pn: &mut [u8],
    ) -> Result<(), rustls::Error> {
        self.1.header_protects.fetch_add(1, Ordering::Relaxed);
        self.0.encrypt_in_place(sample, first, pn)
    }
    fn decrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        pn: &mut [u8],
    ) -> Result<(), rustls::Error> {
        self.1.header_removals.fetch_add(1, Ordering::Relaxed);
        self.0.decrypt_in_place(sample, first, pn)
    }
    fn sample_len(&self) -> usize {
        self.0.sample_len()
    }
}

/// `provider` restricted to its own suite `id` (and, for QUIC Initial
/// packets, its AES-128-GCM suite), the suites' QUIC algorithms wrapped to
/// count into `counts`. Returns the provider and the Initial suite.
fn counted(
    provider: &CryptoProvider,
    id: CipherSuite,
    counts: &Arc<Counts>,
) -> (CryptoProvider, quic::Suite) {
    let wrap = |id: CipherSuite| -> &'static Tls13CipherSuite {
        let base = provider
            .cipher_suites
            .iter()
            .find(|s| s.suite() == id)
            .and_then(SupportedCipherSuite::tls13)
            .expect("the provider has the suite");
        let quic: &'static dyn quic::Algorithm = Box::leak(Box::new(CountingAlg(
            base.quic.expect("QUIC-capable"),
            counts.clone(),
        )));
        Box::leak(Box::new(Tls13CipherSuite {
            common: CipherSuiteCommon {
                suite: base.common.suite,
                hash_provider: base.common.hash_provider,
                confidentiality_limit: base.common.confidentiality_limit,
            },
            hkdf_provider: base.hkdf_provider,
            aead_alg: base.aead_alg,
            quic: Some(quic),
        }))
    };
    let suite = wrap(id);
    let initial = wrap(CipherSuite::TLS13_AES_128_GCM_SHA256);
    let provider = CryptoProvider {
        cipher_suites: vec![SupportedCipherSuite::Tls13(suite)],
        ..provider.clone()
    };
    (provider, initial.quic_suite().expect("QUIC suite"))
}

/// One transfer's setup.
pub struct Transfer {
    pub suite: CipherSuite,
    pub client: CryptoProvider,
    pub server: CryptoProvider,
    /// Bytes sent each way.
    pub bytes: usize,
    /// Key updates the client forces, spread over its sending.
    pub key_updates: usize,
    pub gso: bool,
    /// Corrupt the n-th datagram from client to server in a relay, and every
    /// `CORRUPT_EVERY`-th after it, `CORRUPT_COUNT` in all.
    pub corrupt: Option<usize>,
}

/// What a transfer did.
#[derive(Debug)]
pub struct Report {
    pub client: Arc<Counts>,
    pub server: Arc<Counts>,
    pub elapsed: Duration,
    /// Process CPU time (user + system) during the transfer.
    pub cpu: Duration,
    pub client_datagrams: u64,
    pub client_ios: u64,
    pub corrupted: usize,
    /// Key updates the client forced that took effect.
    pub key_updates: usize,
}

fn transport(gso: bool) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.enable_segmentation_offload(gso);
    t.stream_receive_window((16u32 << 20).into());
    t.receive_window((32u32 << 20).into());
    t.send_window(32 << 20);
    Arc::new(t)
}

fn configs(
    client: &CryptoProvider,
    server: &CryptoProvider,
    id: CipherSuite,
    gso: bool,
    zero_rtt: bool,
    full_handshakes: bool,
) -> (ClientConfig, ServerConfig, Arc<Counts>, Arc<Counts>) {
    let cert = certs::ecdsa();
    let (client_counts, server_counts) = (Arc::new(Counts::default()), Arc::new(Counts::default()));
    let (cp, c_initial) = counted(client, id, &client_counts);
    let (sp, s_initial) = counted(server, id, &server_counts);
    let mut server_tls = rustls::ServerConfig::builder_with_provider(Arc::new(sp))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.clone()], cert.key())
        .expect("server certificate");
    let mut client_tls = rustls::ClientConfig::builder_with_provider(Arc::new(cp))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_root_certificates(cert.roots())
        .with_no_client_auth();
    if zero_rtt {
        server_tls.max_early_data_size = u32::MAX;
        client_tls.enable_early_data = true;
    }
    if full_handshakes {
        client_tls.resumption = rustls::client::Resumption::disabled();
        server_tls.send_tls13_tickets = 0;
    }
    let qs = QuicServerConfig::with_initial(Arc::new(server_tls), s_initial)
        .expect("QUIC server config");
    let qc = QuicClientConfig::with_initial(Arc::new(client_tls), c_initial)
        .expect("QUIC client config");
    let mut sc = ServerConfig::with_crypto(Arc::new(qs));
    sc.transport_config(transport(gso));
    let mut cc = ClientConfig::new(Arc::new(qc));
    cc.transport_config(transport(gso));
    (cc, sc, client_counts, server_counts)
}

/// Deterministic data: chunk `i` of a stream seeded by `seed`.
fn fill(seed: u64, i: u64, chunk: &mut [u8]) {
    let mut x = seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for b in chunk.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.copy_from_slice(&x.to_le_bytes()[..b.len()]);
    }
}

const CHUNK: usize = 64 * 1024;

fn expected_hash(seed: u64, bytes: usize) -> Vec<u8> {
    let mut ctx = Context::new(&SHA256);
    let mut chunk = vec![0; CHUNK];
    let mut sent = 0;
    let mut i = 0;
    while sent < bytes {
        let n = CHUNK.min(bytes - sent);
        fill(seed, i, &mut chunk[..n]);
        ctx.update(&chunk[..n]);
        sent += n;
        i += 1;
    }
    ctx.finish().as_ref().to_vec()
}

async fn send(stream: &mut quinn::SendStream, seed: u64, bytes: usize, mut at: impl FnMut(usize)) {
    let mut chunk = vec![0; CHUNK];
    let mut sent = 0;
    let mut i = 0;
    while sent < bytes {
        let n = CHUNK.min(bytes - sent);
        fill(seed, i, &mut chunk[..n]);
        stream.write_all(&chunk[..n]).await.expect("write");
        sent += n;
        i += 1;
        at(sent);
    }
    stream.finish().expect("finish");
}

async fn receive(stream: &mut quinn::RecvStream) -> (usize, Vec<u8>) {
    let mut ctx = Context::new(&SHA256);
    let mut total = 0;
    while let Some(chunk) = stream.read_chunk(CHUNK, true).await.expect("read") {
        ctx.update(&chunk.bytes);
        total += chunk.bytes.len();
    }
    (total, ctx.finish().as_ref().to_vec())
}

/// Datagrams a corrupting relay corrupts, and their spacing: loopback UDP
/// drops datagrams when the receiver falls behind (seen under qemu), so a
/// single corrupted datagram may never reach the server's open.
pub const CORRUPT_COUNT: usize = 8;
pub const CORRUPT_EVERY: usize = 64;

/// A UDP relay between `client_side` and `server`; corrupts the `corrupt`-th
/// datagram from the client and every `CORRUPT_EVERY`-th after it,
/// `CORRUPT_COUNT` in all (one bit of the last byte: tag or payload).
async fn relay(
    relay: tokio::net::UdpSocket,
    server: SocketAddr,
    corrupt: Option<usize>,
    done: Arc<AtomicUsize>,
) {
    let upstream = tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("bind");
    upstream.connect(server).await.expect("connect");
    let mut client: Option<SocketAddr> = None;
    let (mut a, mut b) = (vec![0u8; 65536], vec![0u8; 65536]);
    let mut from_client = 0usize;
    loop {
        tokio::select! {
            r = relay.recv_from(&mut a) => {
                let Ok((n, peer)) = r else { return };
                client = Some(peer);
                from_client += 1;
                let hit = corrupt.is_some_and(|first| {
                    from_client >= first
                        && (from_client - first).is_multiple_of(CORRUPT_EVERY)
                        && (from_client - first) / CORRUPT_EVERY < CORRUPT_COUNT
                });
                if hit {
                    a[n - 1] ^= 0x01;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                let _ = upstream.send(&a[..n]).await;
            }
            r = upstream.recv(&mut b) => {
                let Ok(n) = r else { return };
                if let Some(c) = client {
                    let _ = relay.send_to(&b[..n], c).await;
                }
            }
        }
    }
}

fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields 14 and 15 (utime, stime) after the command name in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    let ticks = field(11) + field(12);
    Duration::from_millis(ticks * 10)
}

/// Runs `t` on a fresh two-thread runtime; panics if either end sees other
/// bytes than the peer sent.
pub fn run(t: &Transfer) -> Report {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run_async(t))
}

async fn run_async(t: &Transfer) -> Report {
    let (cc, sc, client_counts, server_counts) =
        configs(&t.client, &t.server, t.suite, t.gso, false, false);
    let server = Endpoint::server(sc, "127.0.0.1:0".parse().unwrap()).expect("server endpoint");
    let server_addr = server.local_addr().expect("server address");
    let corrupted = Arc::new(AtomicUsize::new(0));
    let target = if t.corrupt.is_some() {
        let sock = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("relay");
        let addr = sock.local_addr().expect("relay address");
        tokio::spawn(relay(sock, server_addr, t.corrupt, corrupted.clone()));
        addr
    } else {
        server_addr
    };
    let bytes = t.bytes;
    let server_task = tokio::spawn(async move {
        let conn = server
            .accept()
            .await
            .expect("incoming")
            .await
            .expect("server handshake");
        let (mut send_s, mut recv_s) = conn.accept_bi().await.expect("stream");
        let got = receive(&mut recv_s).await;
        assert_eq!(
            got,
            (bytes, expected_hash(1, bytes)),
            "server received what the client sent"
        );
        crate::quinn_link::send(&mut send_s, 2, bytes, |_| {}).await;
        let _ = send_s.stopped().await;
        conn.closed().await;
        server.wait_idle().await;
    });
    let mut client = Endpoint::client("127.0.0.1:0".parse().unwrap()).expect("client endpoint");
    client.set_default_client_config(cc);
    let (t0, cpu0) = (Instant::now(), cpu_time());
    let conn = client
        .connect(target, "localhost")
        .expect("connect")
        .await
        .expect("client handshake");
    let (mut send_c, mut recv_c) = conn.open_bi().await.expect("stream");
    // Forced key updates, spread over the sending. quinn ignores one while
    // the previous update's old keys are still kept (about three PTOs), so
    // the sender retries every few milliseconds until it takes: an update
    // that takes makes the next packet keys at once, which the counting
    // wrapper sees.
    let every = bytes / (t.key_updates + 1);
    let mut key_updates = 0;
    let reader = tokio::spawn(async move { receive(&mut recv_c).await });
    let mut chunk = vec![0; CHUNK];
    let (mut sent, mut i) = (0, 0);
    while sent < bytes {
        let n = CHUNK.min(bytes - sent);
        fill(1, i, &mut chunk[..n]);
        send_c.write_all(&chunk[..n]).await.expect("write");
        sent += n;
        i += 1;
        if key_updates < t.key_updates && sent >= every * (key_updates + 1) {
            loop {
                let before = client_counts.packet_keys.load(Ordering::Relaxed);
                conn.force_key_update();
                if client_counts.packet_keys.load(Ordering::Relaxed) > before {
                    key_updates += 1;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
    send_c.finish().expect("finish");
    let got = reader.await.expect("reader");
    assert_eq!(
        got,
        (bytes, expected_hash(2, bytes)),
        "client received what the server sent"
    );
    let (elapsed, cpu) = (t0.elapsed(), cpu_time().saturating_sub(cpu0));
    let stats = conn.stats();
    conn.close(0u32.into(), b"done");
    client.wait_idle().await;
    server_task.await.expect("server");
    Report {
        client: client_counts,
        server: server_counts,
        elapsed,
        cpu,
        client_datagrams: stats.udp_tx.datagrams,
        client_ios: stats.udp_tx.ios,
        corrupted: corrupted.load(Ordering::Relaxed),
        key_updates,
    }
}

/// A full handshake, then a resumed connection that sends `bytes` as 0-RTT
/// data; returns whether the server accepted the 0-RTT data.
pub fn zero_rtt(
    client: &CryptoProvider,
    server: &CryptoProvider,
    id: CipherSuite,
    bytes: usize,
) -> bool {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (cc, sc, _, _) = configs(client, server, id, true, true, false);
        let server = Endpoint::server(sc, "127.0.0.1:0".parse().unwrap()).expect("server endpoint");
        let addr = server.local_addr().unwrap();
        let server_task = tokio::spawn(async move {
            for round in 0..2 {
                let incoming = server.accept().await.expect("incoming");
                let conn = match incoming.accept().expect("accept").into_0rtt() {
                    Ok((conn, _)) => conn,
                    Err(connecting) => connecting.await.expect("handshake"),
                };
                let mut recv = conn.accept_uni().await.expect("stream");
                let got = receive(&mut recv).await;
                assert_eq!(
                    got,
                    (bytes, expected_hash(3 + round, bytes)),
                    "round {round}"
                );
                conn.closed().await;
            }
        });
        let mut endpoint = Endpoint::client("127.0.0.1:0".parse().unwrap()).expect("client");
        endpoint.set_default_client_config(cc);
        let mut accepted = false;
        for round in 0..2 {
            let connecting = endpoint.connect(addr, "localhost").expect("connect");
            let (conn, zero) = match connecting.into_0rtt() {
                Ok((conn, zero)) => (conn, Some(zero)),
                Err(connecting) => (connecting.await.expect("handshake"), None),
            };
            let mut s = conn.open_uni().await.expect("stream");
            send(&mut s, 3 + round, bytes, |_| {}).await;
            if let Some(zero) = zero {
                accepted = zero.await;
            }
            let _ = s.stopped().await;
            conn.close(0u32.into(), b"done");
            // Let the session ticket of round 0 arrive before round 1.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        endpoint.wait_idle().await;
        server_task.await.expect("server");
        accepted
    })
}

/// `n` QUIC connections in turn between one client endpoint and one server
/// endpoint over loopback, each a full handshake (no resumption; ECDSA P-256, the
/// providers' default key exchange, suite `id` after AES-128-GCM Initial
/// packets) followed by a close; returns the wall time of the `n`. Runs on
/// a current-thread runtime, so client, server and quinn share one core.
pub fn connection_time(
    client: &CryptoProvider,
    server: &CryptoProvider,
    id: CipherSuite,
    n: usize,
) -> Duration {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (cc, sc, _, _) = configs(client, server, id, false, false, true);
        let server = Endpoint::server(sc, "127.0.0.1:0".parse().unwrap()).expect("server endpoint");
        let addr = server.local_addr().unwrap();
        let server_task = tokio::spawn(async move {
            for _ in 0..n {
                let incoming = server.accept().await.expect("incoming");
                let conn = incoming.await.expect("handshake");
                tokio::spawn(async move { conn.closed().await });
            }
            server
        });
        let mut endpoint = Endpoint::client("127.0.0.1:0".parse().unwrap()).expect("client");
        endpoint.set_default_client_config(cc);
        let start = Instant::now();
        for _ in 0..n {
            let conn = endpoint
                .connect(addr, "localhost")
                .expect("connect")
                .await
                .expect("handshake");
            conn.close(0u32.into(), b"done");
        }
        let elapsed = start.elapsed();
        let server = server_task.await.expect("server");
        endpoint.wait_idle().await;
        server.wait_idle().await;
        elapsed
    })
}
