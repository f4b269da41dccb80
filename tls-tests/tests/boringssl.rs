//! Conformance against a real BoringSSL peer (issue 5).
//!
//! rustls with the rustls-fusion provider on one side, BoringSSL (the `boring`
//! crate, which builds BoringSSL from source) on the other, over loopback TCP
//! through a small man-in-the-middle relay that parses TLS records. Every test
//! binds its own `127.0.0.1:0` ports, so the tests run in parallel.
//!
//! * Matrix (`<suite>::fusion_client` / `<suite>::fusion_server`): 9 suites x
//!   2 directions, each repeated for every AEAD backend this CPU runs. Each run
//!   echoes 13 message sizes (0 B .. 4 MiB) byte for byte, streams 10 000
//!   small records each way, does TLS 1.3 KeyUpdates from both sides mid-message
//!   (counted by BoringSSL's message callback), closes with close_notify from
//!   the client, then a second short connection closes from the server. The
//!   relay checks that our TLS 1.2 AES-GCM explicit nonces are 0, 1, 2, ...
//! * Adversarial (`adv_<suite>::<fault>`): the relay corrupts one record
//!   (bit flip, truncation, inflated length, duplicate, swap) in each
//!   direction and both topologies, so both rustls-fusion and BoringSSL act as
//!   the receiver; the receiver must fail cleanly and deliver nothing past
//!   the fault.
//!
//! Run: `scripts/conformance.sh`, or
//! `cargo test -p tls-tests --features boringssl --test boringssl`.
//! Set `CONFORMANCE_REPORT=<file>` to append one tab-separated line per run.

use std::collections::HashSet;
use std::ffi::{c_int, c_void};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use boring::pkey::PKey;
use boring::ssl::{
    ErrorCode, ShutdownResult, SslAcceptor, SslConnector, SslContextBuilder, SslMethod, SslStream,
    SslVersion,
};
use boring::x509::X509;
use foreign_types::ForeignTypeRef;
use rustls::crypto::CryptoProvider;
use rustls::{
    ClientConfig, ClientConnection, ServerConfig, ServerConnection, StreamOwned,
    SupportedCipherSuite,
};
use rustls_fusion::aead::{Aes128Gcm, Backend, ChaCha20Poly1305};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

/// How long a peer waits on a socket before the test fails instead of hanging.
const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// The relay waits longer than the peers, so a peer reports the hang.
const RELAY_TIMEOUT: Duration = Duration::from_secs(60);

/// Message sizes echoed in every matrix run.
const SIZES: [usize; 13] = [
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
const STREAM_RECORDS: u64 = 10_000;

// ---------------------------------------------------------------------------
// Suites, certificates, providers
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aead {
    AesGcm,
    ChaCha,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CertKind {
    EcdsaP256,
    Rsa2048,
}

struct Suite {
    name: &'static str,
    /// IANA id.
    id: u16,
    tls13: bool,
    aead: Aead,
    cert: CertKind,
    /// BoringSSL's name, for `set_strict_cipher_list` (TLS 1.2 only: BoringSSL
    /// cannot restrict TLS 1.3 suites, so those are forced on our side).
    bssl_name: &'static str,
}

impl Suite {
    /// TLS 1.2 AES-GCM: the record carries an 8-byte explicit nonce.
    fn explicit_nonce(&self) -> bool {
        !self.tls13 && self.aead == Aead::AesGcm
    }
    fn version(&self) -> u16 {
        if self.tls13 {
            0x0304
        } else {
            0x0303
        }
    }
}

const fn suite(
    name: &'static str,
    id: u16,
    tls13: bool,
    aead: Aead,
    cert: CertKind,
    bssl_name: &'static str,
) -> Suite {
    Suite {
        name,
        id,
        tls13,
        aead,
        cert,
        bssl_name,
    }
}

use Aead::{AesGcm, ChaCha};
use CertKind::{EcdsaP256, Rsa2048};

static TLS13_AES_128_GCM_SHA256: Suite = suite(
    "TLS13_AES_128_GCM_SHA256",
    0x1301,
    true,
    AesGcm,
    EcdsaP256,
    "",
);
static TLS13_AES_256_GCM_SHA384: Suite = suite(
    "TLS13_AES_256_GCM_SHA384",
    0x1302,
    true,
    AesGcm,
    EcdsaP256,
    "",
);
static TLS13_CHACHA20_POLY1305_SHA256: Suite = suite(
    "TLS13_CHACHA20_POLY1305_SHA256",
    0x1303,
    true,
    ChaCha,
    EcdsaP256,
    "",
);
static TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: Suite = suite(
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    0xc02b,
    false,
    AesGcm,
    EcdsaP256,
    "ECDHE-ECDSA-AES128-GCM-SHA256",
);
static TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: Suite = suite(
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    0xc02c,
    false,
    AesGcm,
    EcdsaP256,
    "ECDHE-ECDSA-AES256-GCM-SHA384",
);
static TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: Suite = suite(
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    0xcca9,
    false,
    ChaCha,
    EcdsaP256,
    "ECDHE-ECDSA-CHACHA20-POLY1305",
);
static TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: Suite = suite(
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    0xc02f,
    false,
    AesGcm,
    Rsa2048,
    "ECDHE-RSA-AES128-GCM-SHA256",
);
static TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: Suite = suite(
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    0xc030,
    false,
    AesGcm,
    Rsa2048,
    "ECDHE-RSA-AES256-GCM-SHA384",
);
static TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: Suite = suite(
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    0xcca8,
    false,
    ChaCha,
    Rsa2048,
    "ECDHE-RSA-CHACHA20-POLY1305",
);

struct TestCert {
    der: Vec<u8>,
    key_pkcs8: Vec<u8>,
}

/// A self-signed `localhost` certificate, generated once per test process.
fn cert(kind: CertKind) -> &'static TestCert {
    fn generate(alg: &'static rcgen::SignatureAlgorithm) -> TestCert {
        let key = rcgen::KeyPair::generate_for(alg).expect("key generation");
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .expect("certificate params")
            .self_signed(&key)
            .expect("self-signed certificate");
        TestCert {
            der: cert.der().to_vec(),
            key_pkcs8: key.serialize_der(),
        }
    }
    static ECDSA: OnceLock<TestCert> = OnceLock::new();
    static RSA: OnceLock<TestCert> = OnceLock::new();
    match kind {
        CertKind::EcdsaP256 => ECDSA.get_or_init(|| generate(&rcgen::PKCS_ECDSA_P256_SHA256)),
        CertKind::Rsa2048 => RSA.get_or_init(|| generate(&rcgen::PKCS_RSA_SHA256)),
    }
}

/// (AES-GCM backend, ChaCha20-Poly1305 backend) pairs for one suite: every
/// backend of the suite's AEAD, the other AEAD on its best backend.
fn backend_pairs(suite: &Suite) -> Vec<(Backend, Backend)> {
    let aes = Aes128Gcm::backends();
    let chacha = ChaCha20Poly1305::backends();
    assert!(!aes.is_empty() && !chacha.is_empty(), "no backend at all");
    match suite.aead {
        Aead::AesGcm => aes.iter().map(|&a| (a, chacha[0])).collect(),
        Aead::ChaCha => chacha.iter().map(|&c| (aes[0], c)).collect(),
    }
}

fn backend_of(suite: &Suite, backends: (Backend, Backend)) -> Backend {
    match suite.aead {
        Aead::AesGcm => backends.0,
        Aead::ChaCha => backends.1,
    }
}

/// rustls-fusion pinned to `backends`, offering exactly `suite`.
fn fusion_provider(suite: &Suite, backends: (Backend, Backend)) -> Arc<CryptoProvider> {
    let base = rustls_fusion::provider_with_backends(backends.0, backends.1)
        .expect("backend listed by backends() must run");
    let one: Vec<SupportedCipherSuite> = base
        .cipher_suites
        .iter()
        .copied()
        .filter(|s| u16::from(s.suite()) == suite.id)
        .collect();
    assert_eq!(one.len(), 1, "{} not in rustls-fusion", suite.name);
    assert_eq!(format!("{:?}", one[0].suite()), suite.name);
    Arc::new(CryptoProvider {
        cipher_suites: one,
        ..base
    })
}

fn versions(suite: &Suite) -> &'static [&'static rustls::SupportedProtocolVersion] {
    static TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
    static TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
    if suite.tls13 {
        &TLS13
    } else {
        &TLS12
    }
}

fn fusion_client_config(suite: &Suite, provider: Arc<CryptoProvider>) -> Arc<ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(cert(suite.cert).der.clone()))
        .expect("trust anchor");
    Arc::new(
        ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions(suite))
            .expect("protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

fn fusion_server_config(suite: &Suite, provider: Arc<CryptoProvider>) -> Arc<ServerConfig> {
    let c = cert(suite.cert);
    Arc::new(
        ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions(suite))
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(c.der.clone())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(c.key_pkcs8.clone())),
            )
            .expect("server certificate"),
    )
}

// ---------------------------------------------------------------------------
// BoringSSL: configuration and the message-callback counters
// ---------------------------------------------------------------------------

/// What BoringSSL's message callback saw on one connection.
#[derive(Default)]
struct BsslStats {
    key_updates_sent: AtomicU32,
    key_updates_received: AtomicU32,
    records_sent: AtomicU64,
    records_received: AtomicU64,
    /// `0x1_0000 | level << 8 | description` of the last alert, 0 if none.
    alert_sent: AtomicU32,
    alert_received: AtomicU32,
}

impl BsslStats {
    fn alert(v: &AtomicU32) -> Option<u8> {
        match v.load(Ordering::SeqCst) {
            0 => None,
            x => Some(x as u8),
        }
    }
}

const SSL3_RT_HEADER: c_int = 0x100;
const SSL3_RT_ALERT: c_int = 21;
const SSL3_RT_HANDSHAKE: c_int = 22;
const SSL3_MT_KEY_UPDATE: u8 = 24;
const ALERT_BAD_RECORD_MAC: u8 = 20;

/// `SSL_CTX_set_msg_callback` callback: counts KeyUpdate messages, record
/// headers and alerts in each direction into the `BsslStats` behind `arg`.
unsafe extern "C" fn count_messages(
    is_write: c_int,
    _version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    _ssl: *mut boring_sys::SSL,
    arg: *mut c_void,
) {
    if arg.is_null() {
        return;
    }
    // SAFETY: `arg` is the leaked `&'static BsslStats` that `install_stats`
    // registered with this callback, so it is valid for the whole process.
    let stats = unsafe { &*(arg as *const BsslStats) };
    let msg: &[u8] = if buf.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: BoringSSL passes `len` readable bytes at `buf` for the
        // duration of the call; we only read them here.
        unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) }
    };
    let sent = is_write != 0;
    match content_type {
        SSL3_RT_HEADER => {
            let counter = if sent {
                &stats.records_sent
            } else {
                &stats.records_received
            };
            counter.fetch_add(1, Ordering::SeqCst);
        }
        SSL3_RT_HANDSHAKE if msg.first() == Some(&SSL3_MT_KEY_UPDATE) => {
            let counter = if sent {
                &stats.key_updates_sent
            } else {
                &stats.key_updates_received
            };
            counter.fetch_add(1, Ordering::SeqCst);
        }
        SSL3_RT_ALERT if msg.len() == 2 => {
            let value = 0x1_0000 | (u32::from(msg[0]) << 8) | u32::from(msg[1]);
            let slot = if sent {
                &stats.alert_sent
            } else {
                &stats.alert_received
            };
            slot.store(value, Ordering::SeqCst);
        }
        _ => {}
    }
}

fn install_stats(ctx: &mut SslContextBuilder) -> &'static BsslStats {
    // Leaked on purpose: a few dozen bytes per connection, and the callback
    // can never outlive its counters.
    let stats: &'static BsslStats = Box::leak(Box::default());
    // SAFETY: `ctx.as_ptr()` is a live SSL_CTX owned by the builder; the
    // callback only dereferences `arg`, which points to 'static counters.
    unsafe {
        boring_sys::SSL_CTX_set_msg_callback(ctx.as_ptr(), Some(count_messages));
        boring_sys::SSL_CTX_set_msg_callback_arg(
            ctx.as_ptr(),
            stats as *const BsslStats as *mut c_void,
        );
    }
    stats
}

fn bssl_version(suite: &Suite) -> SslVersion {
    if suite.tls13 {
        SslVersion::TLS1_3
    } else {
        SslVersion::TLS1_2
    }
}

fn bssl_restrict(ctx: &mut SslContextBuilder, suite: &Suite) {
    ctx.set_min_proto_version(Some(bssl_version(suite)))
        .expect("min version");
    ctx.set_max_proto_version(Some(bssl_version(suite)))
        .expect("max version");
    if !suite.tls13 {
        ctx.set_strict_cipher_list(suite.bssl_name)
            .expect("cipher list");
    }
}

fn bssl_acceptor(suite: &Suite) -> (SslAcceptor, &'static BsslStats) {
    let c = cert(suite.cert);
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls()).expect("acceptor");
    b.set_private_key(&PKey::private_key_from_der(&c.key_pkcs8).expect("key"))
        .expect("set key");
    b.set_certificate(&X509::from_der(&c.der).expect("cert"))
        .expect("set cert");
    bssl_restrict(&mut b, suite);
    let stats = install_stats(&mut b);
    (b.build(), stats)
}

fn bssl_connector(suite: &Suite) -> (SslConnector, &'static BsslStats) {
    let mut b = SslConnector::builder(SslMethod::tls()).expect("connector");
    b.cert_store_mut()
        .add_cert(X509::from_der(&cert(suite.cert).der).expect("cert"))
        .expect("trust anchor");
    bssl_restrict(&mut b, suite);
    let stats = install_stats(&mut b);
    (b.build(), stats)
}

// ---------------------------------------------------------------------------
// One TLS endpoint, either implementation, as a blocking stream
// ---------------------------------------------------------------------------

/// Why a read or write failed.
#[derive(Debug)]
enum Failure {
    Rustls(rustls::Error),
    /// BoringSSL: `SSL_ERROR_*` code and the error-queue reasons.
    Bssl(String),
    /// Transport EOF without close_notify.
    Eof,
    Io(io::Error),
}

impl Failure {
    fn is_bad_record_mac(&self) -> bool {
        match self {
            Self::Rustls(e) => *e == rustls::Error::DecryptError,
            Self::Bssl(s) => s.contains("DECRYPTION_FAILED_OR_BAD_RECORD_MAC"),
            _ => false,
        }
    }

    fn from_rustls_io(e: io::Error) -> Self {
        if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
            return Self::Rustls(inner.clone());
        }
        match e.kind() {
            io::ErrorKind::UnexpectedEof => Self::Eof,
            _ => Self::Io(e),
        }
    }

    fn from_bssl(e: boring::ssl::Error) -> Self {
        if e.code() == ErrorCode::SYSCALL && e.io_error().is_none() {
            return Self::Eof;
        }
        if let Some(stack) = e.ssl_error() {
            let reasons: Vec<&str> = stack
                .errors()
                .iter()
                .map(|x| x.reason().unwrap_or("?"))
                .collect();
            return Self::Bssl(format!("{}: {}", e.code().as_raw(), reasons.join(",")));
        }
        let code = e.code();
        match e.into_io_error() {
            Ok(io) => Self::Io(io),
            Err(e) => Self::Bssl(format!("{}: {e}", code.as_raw())),
        }
    }

    /// Short form for the report.
    fn short(&self) -> String {
        match self {
            Self::Rustls(e) => format!("rustls {e:?}"),
            Self::Bssl(s) => format!("bssl {}", s.split(": ").nth(1).unwrap_or(s)),
            Self::Eof => "EOF without close_notify".into(),
            Self::Io(e) => format!("io {:?}", e.kind()),
        }
    }
}

enum Tls {
    FusionClient(Box<StreamOwned<ClientConnection, TcpStream>>),
    FusionServer(Box<StreamOwned<ServerConnection, TcpStream>>),
    Bssl {
        stream: Box<SslStream<TcpStream>>,
        sent_close: bool,
    },
}

/// Runs `$body` with `$s` bound to the rustls `StreamOwned` of either side.
macro_rules! rustls_side {
    ($tls:expr, $s:ident => $body:expr, $bssl:pat => $other:expr) => {
        match $tls {
            Tls::FusionClient($s) => $body,
            Tls::FusionServer($s) => $body,
            $bssl => $other,
        }
    };
}

fn timeouts(tcp: &TcpStream, t: Duration) {
    tcp.set_read_timeout(Some(t)).expect("read timeout");
    tcp.set_write_timeout(Some(t)).expect("write timeout");
    tcp.set_nodelay(true).expect("nodelay");
}

impl Tls {
    fn fusion_client(config: Arc<ClientConfig>, mut tcp: TcpStream) -> Self {
        let mut conn = ClientConnection::new(config, ServerName::try_from("localhost").unwrap())
            .expect("client connection");
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp)
                .unwrap_or_else(|e| panic!("rustls-fusion client handshake: {e}"));
        }
        Self::FusionClient(Box::new(StreamOwned::new(conn, tcp)))
    }

    fn fusion_server(config: Arc<ServerConfig>, mut tcp: TcpStream) -> Self {
        let mut conn = ServerConnection::new(config).expect("server connection");
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp)
                .unwrap_or_else(|e| panic!("rustls-fusion server handshake: {e}"));
        }
        Self::FusionServer(Box::new(StreamOwned::new(conn, tcp)))
    }

    fn bssl_server(acceptor: &SslAcceptor, tcp: TcpStream) -> Self {
        let stream = acceptor
            .accept(tcp)
            .unwrap_or_else(|e| panic!("BoringSSL server handshake: {e}"));
        Self::Bssl {
            stream: Box::new(stream),
            sent_close: false,
        }
    }

    fn bssl_client(connector: &SslConnector, tcp: TcpStream) -> Self {
        let stream = connector
            .configure()
            .expect("configure")
            .connect("localhost", tcp)
            .unwrap_or_else(|e| panic!("BoringSSL client handshake: {e}"));
        Self::Bssl {
            stream: Box::new(stream),
            sent_close: false,
        }
    }

    fn suite_id(&self) -> u16 {
        rustls_side!(self,
            s => u16::from(s.conn.negotiated_cipher_suite().expect("suite").suite()),
            Self::Bssl { stream, .. } =>
                stream.ssl().current_cipher().expect("cipher").protocol_id())
    }

    fn version(&self) -> u16 {
        rustls_side!(self,
        s => u16::from(s.conn.protocol_version().expect("version")),
        Self::Bssl { stream, .. } => match stream.ssl().version2() {
            Some(v) if v == SslVersion::TLS1_3 => 0x0304,
            Some(v) if v == SslVersion::TLS1_2 => 0x0303,
            other => panic!("unexpected BoringSSL version {other:?}"),
        })
    }

    fn group(&self) -> String {
        rustls_side!(self,
            s => s.conn.negotiated_key_exchange_group()
                .map(|g| format!("{:?}", g.name()))
                .unwrap_or_else(|| "?".into()),
            Self::Bssl { stream, .. } => stream.ssl().curve_name().unwrap_or("?").to_string())
    }

    fn sock(&mut self) -> &mut TcpStream {
        rustls_side!(self, s => &mut s.sock, Self::Bssl { stream, .. } => stream.get_mut())
    }

    /// `Ok(0)` only for a received close_notify.
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, Failure> {
        assert!(!buf.is_empty());
        rustls_side!(self,
        s => s.read(buf).map_err(Failure::from_rustls_io),
        Self::Bssl { stream, .. } => loop {
            match stream.ssl_read(buf) {
                Ok(n) => break Ok(n),
                Err(e) if e.code() == ErrorCode::ZERO_RETURN => break Ok(0),
                Err(e) if e.code() == ErrorCode::WANT_READ && e.io_error().is_none() => {}
                Err(e) => break Err(Failure::from_bssl(e)),
            }
        })
    }

    fn read_exact(&mut self, mut buf: &mut [u8]) -> Result<(), Failure> {
        while !buf.is_empty() {
            match self.read_some(buf)? {
                0 => {
                    return Err(Failure::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "close_notify in the middle of a message",
                    )))
                }
                n => buf = &mut buf[n..],
            }
        }
        Ok(())
    }

    fn write_all(&mut self, mut data: &[u8]) -> Result<(), Failure> {
        rustls_side!(self,
        s => s.write_all(data).and_then(|()| s.flush()).map_err(Failure::from_rustls_io),
        Self::Bssl { stream, .. } => {
            while !data.is_empty() {
                match stream.ssl_write(data) {
                    Ok(n) => data = &data[n..],
                    Err(e) if e.code() == ErrorCode::WANT_WRITE && e.io_error().is_none() => {}
                    Err(e) => return Err(Failure::from_bssl(e)),
                }
            }
            Ok(())
        })
    }

    /// Starts a TLS 1.3 KeyUpdate (update_requested); it goes out with the
    /// next write.
    fn key_update(&mut self) {
        rustls_side!(self,
        s => s.conn.refresh_traffic_keys().expect("refresh_traffic_keys"),
        Self::Bssl { stream, .. } => {
            // SAFETY: `stream.ssl()` is the live SSL of this stream, which
            // finished a TLS 1.3 handshake; SSL_key_update only queues a
            // message and does not retain the pointer.
            let rc = unsafe {
                boring_sys::SSL_key_update(
                    stream.ssl().as_ptr(),
                    boring_sys::SSL_KEY_UPDATE_REQUESTED as c_int,
                )
            };
            assert_eq!(rc, 1, "SSL_key_update failed");
        })
    }

    fn send_close_notify(&mut self) -> Result<(), Failure> {
        rustls_side!(self,
        s => {
            s.conn.send_close_notify();
            s.flush().map_err(Failure::from_rustls_io)
        },
        Self::Bssl { stream, sent_close } => {
            *sent_close = true;
            stream.shutdown().map(|_| ()).map_err(Failure::from_bssl)
        })
    }

    /// Waits for the peer's close_notify; an error if data, EOF or anything
    /// else comes instead.
    fn await_close_notify(&mut self) -> Result<(), Failure> {
        let unexpected = |what: &str| {
            Err(Failure::Io(io::Error::other(format!(
                "expected close_notify, got {what}"
            ))))
        };
        match self {
            Self::Bssl {
                stream,
                sent_close: true,
            } => match stream.shutdown() {
                Ok(ShutdownResult::Received) => Ok(()),
                Ok(ShutdownResult::Sent) => unexpected("nothing (shutdown returned Sent)"),
                Err(e) => Err(Failure::from_bssl(e)),
            },
            _ => match self.read_some(&mut [0u8; 1])? {
                0 => Ok(()),
                _ => unexpected("application data"),
            },
        }
    }
}

// ---------------------------------------------------------------------------
// The man-in-the-middle relay
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    ClientToServer,
    ServerToClient,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
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
struct DirReport {
    records: u64,
    app_data_records: u64,
    /// TLS 1.2 AES-GCM: the explicit nonce of every record after ChangeCipherSpec.
    explicit_nonces: Vec<u64>,
    max_body: usize,
    fault_applied: bool,
}

impl DirReport {
    /// Checks that the explicit nonces are exactly 0, 1, 2, ... and unique.
    fn check_sequential_nonces(&self) -> Result<(), String> {
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

struct Relay {
    addr: SocketAddr,
    handle: thread::JoinHandle<(DirReport, DirReport)>,
}

/// Accepts with a deadline instead of blocking forever.
fn accept(listener: &TcpListener) -> TcpStream {
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

fn start_relay(
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

fn record(content_type: u8, version: [u8; 2], body: &[u8], len_field: u16) -> Vec<u8> {
    let mut r = vec![content_type, version[0], version[1]];
    r.extend_from_slice(&len_field.to_be_bytes());
    r.extend_from_slice(body);
    r
}

/// Forwards TLS records from `src` to `dst`, parsing each header; applies
/// `fault` to the second application-data record seen after `armed`.
fn pump(
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
enum Topology {
    /// rustls-fusion client <-> BoringSSL server.
    FusionClient,
    /// BoringSSL client <-> rustls-fusion server.
    FusionServer,
}

impl Topology {
    fn label(self) -> &'static str {
        match self {
            Self::FusionClient => "fusion client -> bssl server",
            Self::FusionServer => "bssl client -> fusion server",
        }
    }
}

struct Outcome<C, S> {
    client: C,
    server: S,
    c2s: DirReport,
    s2c: DirReport,
    bssl: &'static BsslStats,
}

/// One connection through the relay, `client` and `server` run on their own
/// threads with the connected (handshaken) endpoint.
fn connect<C: Send, S: Send>(
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

/// Appends a line to `$CONFORMANCE_REPORT` (if set).
fn report(line: String) {
    println!("{line}");
    if let Some(path) = std::env::var_os("CONFORMANCE_REPORT") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("report file");
        f.write_all(format!("{line}\n").as_bytes())
            .expect("report write");
    }
}

// ---------------------------------------------------------------------------
// The matrix: echo, stream, KeyUpdate, close_notify
// ---------------------------------------------------------------------------

const OP_END: u8 = 0;
const OP_ECHO: u8 = 1;
const OP_STREAM: u8 = 2;
/// The client starts a KeyUpdate halfway through sending.
const KU_CLIENT: u8 = 1;
/// The server starts a KeyUpdate halfway through echoing.
const KU_SERVER: u8 = 2;

/// Which messages carry a KeyUpdate (TLS 1.3 only); one initiator per
/// message, so each KeyUpdate gets exactly one answer before the next.
fn ku_flags(index: usize) -> u8 {
    match index {
        4 | 7 | 9 | 11 => KU_CLIENT,
        5 | 8 | 10 | 12 => KU_SERVER,
        _ => 0,
    }
}

/// KeyUpdates started per side per session: the message schedule plus one in
/// each direction's record stream.
fn key_updates_per_side() -> (u32, u32) {
    let count = |flag| (0..SIZES.len()).filter(|&i| ku_flags(i) == flag).count() as u32;
    (count(KU_CLIENT) + 1, count(KU_SERVER) + 1)
}

/// Deterministic, non-periodic test data.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
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

fn stream_record(i: u64, seed: u8) -> Vec<u8> {
    let len = 1 + (i * 7 % 64) as usize;
    (0..len)
        .map(|j| (i as u8).wrapping_mul(31).wrapping_add(j as u8) ^ seed)
        .collect()
}

fn stream_total(n: u64, seed: u8) -> Vec<u8> {
    (0..n).flat_map(|i| stream_record(i, seed)).collect()
}

fn frame(op: u8, flags: u8, len: u64) -> [u8; 10] {
    let mut f = [0u8; 10];
    f[0] = op;
    f[1] = flags;
    f[2..].copy_from_slice(&len.to_le_bytes());
    f
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Writes `data`, with a KeyUpdate halfway if `ku`.
fn send_message(tls: &mut Tls, data: &[u8], ku: bool) -> Result<(), Failure> {
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

fn send_stream(tls: &mut Tls, seed: u8, ku: bool) -> Result<(), Failure> {
    for i in 0..STREAM_RECORDS {
        if ku && i == STREAM_RECORDS / 2 {
            tls.key_update();
        }
        tls.write_all(&stream_record(i, seed))?;
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

/// Close with close_notify, `closer` first; both sides check the other's.
fn close(tls: &mut Tls, me: Side, closer: Side) {
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
struct SideInfo {
    suite_id: u16,
    version: u16,
    group: String,
}

fn side_info(tls: &Tls) -> SideInfo {
    SideInfo {
        suite_id: tls.suite_id(),
        version: tls.version(),
        group: tls.group(),
    }
}

fn matrix_client(tls: &mut Tls, suite: &Suite, closer: Side, full: bool) -> SideInfo {
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

fn matrix_server(tls: &mut Tls, closer: Side) -> SideInfo {
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

fn check_sides(suite: &Suite, topology: Topology, client: &SideInfo, server: &SideInfo) {
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

fn matrix_case(suite: &Suite, topology: Topology) {
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

// ---------------------------------------------------------------------------
// Adversarial: one record corrupted by the relay
// ---------------------------------------------------------------------------

const WARMUP: usize = 64;
/// Three application records sent after the relay is armed; the fault hits
/// the second (B), and for Swap also the third (C).
const ATTACK_SIZES: [usize; 3] = [100, 200, 300];

#[derive(Debug)]
enum Role {
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

fn attack_messages() -> [Vec<u8>; 3] {
    ATTACK_SIZES.map(|n| pattern(n, n as u64))
}

/// Sends A, waits for the receiver's one-byte ack (so A arrives on its own),
/// then B and C back to back, then reads what comes back.
fn attack_sender(tls: &mut Tls) -> Role {
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

fn attack_receiver(tls: &mut Tls, fault: Fault) -> Role {
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

fn adversarial_case(suite: &Suite, fault: Fault) {
    for backends in backend_pairs(suite) {
        for topology in [Topology::FusionClient, Topology::FusionServer] {
            for dir in [Dir::ClientToServer, Dir::ServerToClient] {
                adversarial_run(suite, fault, topology, dir, backends);
            }
        }
    }
}

fn adversarial_run(
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

/// Every backend this CPU runs is covered by the runs above.
#[test]
fn every_backend_is_exercised() {
    let aes = Aes128Gcm::backends();
    let chacha = ChaCha20Poly1305::backends();
    let mut covered_aes = HashSet::new();
    let mut covered_chacha = HashSet::new();
    for s in [&TLS13_AES_128_GCM_SHA256, &TLS13_CHACHA20_POLY1305_SHA256] {
        for (a, c) in backend_pairs(s) {
            covered_aes.insert(a);
            covered_chacha.insert(c);
        }
    }
    assert_eq!(covered_aes, aes.iter().copied().collect());
    assert_eq!(covered_chacha, chacha.iter().copied().collect());
    report(format!(
        "backends\tAES-GCM: {}\tChaCha20-Poly1305: {}",
        aes.iter().map(|b| b.name()).collect::<Vec<_>>().join(", "),
        chacha
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    ));
}
