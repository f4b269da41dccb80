//! The two TLS endpoints: BoringSSL (configuration, the message-callback
//! counters) and either implementation as one blocking stream (`Tls`).

use super::*;

/// How long a peer waits on a socket before the test fails instead of hanging.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// The relay waits longer than the peers, so a peer reports the hang.
pub(crate) const RELAY_TIMEOUT: Duration = Duration::from_secs(60);

/// What BoringSSL's message callback saw on one connection.
#[derive(Default)]
pub(crate) struct BsslStats {
    pub(crate) key_updates_sent: AtomicU32,
    pub(crate) key_updates_received: AtomicU32,
    pub(crate) records_sent: AtomicU64,
    pub(crate) records_received: AtomicU64,
    /// `0x1_0000 | level << 8 | description` of the last alert, 0 if none.
    pub(crate) alert_sent: AtomicU32,
    pub(crate) alert_received: AtomicU32,
}

impl BsslStats {
    pub(crate) fn alert(v: &AtomicU32) -> Option<u8> {
        match v.load(Ordering::SeqCst) {
            0 => None,
            x => Some(x as u8),
        }
    }
}

pub(crate) const SSL3_RT_HEADER: c_int = 0x100;
pub(crate) const SSL3_RT_ALERT: c_int = 21;
pub(crate) const SSL3_RT_HANDSHAKE: c_int = 22;
pub(crate) const SSL3_MT_KEY_UPDATE: u8 = 24;
pub(crate) const ALERT_BAD_RECORD_MAC: u8 = 20;

/// `SSL_CTX_set_msg_callback` callback: counts KeyUpdate messages, record
/// headers and alerts in each direction into the `BsslStats` behind `arg`.
pub(crate) unsafe extern "C" fn count_messages(
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

pub(crate) fn install_stats(ctx: &mut SslContextBuilder) -> &'static BsslStats {
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

pub(crate) fn bssl_version(suite: &Suite) -> SslVersion {
    if suite.tls13 {
        SslVersion::TLS1_3
    } else {
        SslVersion::TLS1_2
    }
}

pub(crate) fn bssl_restrict(ctx: &mut SslContextBuilder, suite: &Suite) {
    ctx.set_min_proto_version(Some(bssl_version(suite)))
        .expect("min version");
    ctx.set_max_proto_version(Some(bssl_version(suite)))
        .expect("max version");
    if !suite.tls13 {
        ctx.set_strict_cipher_list(suite.bssl_name)
            .expect("cipher list");
    }
}

pub(crate) fn bssl_acceptor(suite: &Suite) -> (SslAcceptor, &'static BsslStats) {
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

pub(crate) fn bssl_connector(suite: &Suite) -> (SslConnector, &'static BsslStats) {
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
pub(crate) enum Failure {
    Rustls(rustls::Error),
    /// BoringSSL: `SSL_ERROR_*` code and the error-queue reasons.
    Bssl(String),
    /// Transport EOF without close_notify.
    Eof,
    Io(io::Error),
}

impl Failure {
    pub(crate) fn is_bad_record_mac(&self) -> bool {
        match self {
            Self::Rustls(e) => *e == rustls::Error::DecryptError,
            Self::Bssl(s) => s.contains("DECRYPTION_FAILED_OR_BAD_RECORD_MAC"),
            _ => false,
        }
    }

    pub(crate) fn from_rustls_io(e: io::Error) -> Self {
        if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
            return Self::Rustls(inner.clone());
        }
        match e.kind() {
            io::ErrorKind::UnexpectedEof => Self::Eof,
            _ => Self::Io(e),
        }
    }

    pub(crate) fn from_bssl(e: boring::ssl::Error) -> Self {
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
    pub(crate) fn short(&self) -> String {
        match self {
            Self::Rustls(e) => format!("rustls {e:?}"),
            Self::Bssl(s) => format!("bssl {}", s.split(": ").nth(1).unwrap_or(s)),
            Self::Eof => "EOF without close_notify".into(),
            Self::Io(e) => format!("io {:?}", e.kind()),
        }
    }
}

pub(crate) enum Tls {
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

pub(crate) fn timeouts(tcp: &TcpStream, t: Duration) {
    tcp.set_read_timeout(Some(t)).expect("read timeout");
    tcp.set_write_timeout(Some(t)).expect("write timeout");
    tcp.set_nodelay(true).expect("nodelay");
}

impl Tls {
    pub(crate) fn fusion_client(config: Arc<ClientConfig>, mut tcp: TcpStream) -> Self {
        let mut conn = ClientConnection::new(config, ServerName::try_from("localhost").unwrap())
            .expect("client connection");
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp)
                .unwrap_or_else(|e| panic!("rustls-fusion client handshake: {e}"));
        }
        Self::FusionClient(Box::new(StreamOwned::new(conn, tcp)))
    }

    pub(crate) fn fusion_server(config: Arc<ServerConfig>, mut tcp: TcpStream) -> Self {
        let mut conn = ServerConnection::new(config).expect("server connection");
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp)
                .unwrap_or_else(|e| panic!("rustls-fusion server handshake: {e}"));
        }
        Self::FusionServer(Box::new(StreamOwned::new(conn, tcp)))
    }

    pub(crate) fn bssl_server(acceptor: &SslAcceptor, tcp: TcpStream) -> Self {
        let stream = acceptor
            .accept(tcp)
            .unwrap_or_else(|e| panic!("BoringSSL server handshake: {e}"));
        Self::Bssl {
            stream: Box::new(stream),
            sent_close: false,
        }
    }

    pub(crate) fn bssl_client(connector: &SslConnector, tcp: TcpStream) -> Self {
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

    pub(crate) fn suite_id(&self) -> u16 {
        rustls_side!(self,
            s => u16::from(s.conn.negotiated_cipher_suite().expect("suite").suite()),
            Self::Bssl { stream, .. } =>
                stream.ssl().current_cipher().expect("cipher").protocol_id())
    }

    pub(crate) fn version(&self) -> u16 {
        rustls_side!(self,
        s => u16::from(s.conn.protocol_version().expect("version")),
        Self::Bssl { stream, .. } => match stream.ssl().version2() {
            Some(v) if v == SslVersion::TLS1_3 => 0x0304,
            Some(v) if v == SslVersion::TLS1_2 => 0x0303,
            other => panic!("unexpected BoringSSL version {other:?}"),
        })
    }

    pub(crate) fn group(&self) -> String {
        rustls_side!(self,
            s => s.conn.negotiated_key_exchange_group()
                .map(|g| format!("{:?}", g.name()))
                .unwrap_or_else(|| "?".into()),
            Self::Bssl { stream, .. } => stream.ssl().curve_name().unwrap_or("?").to_string())
    }

    pub(crate) fn sock(&mut self) -> &mut TcpStream {
        rustls_side!(self, s => &mut s.sock, Self::Bssl { stream, .. } => stream.get_mut())
    }

    /// `Ok(0)` only for a received close_notify.
    pub(crate) fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, Failure> {
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

    pub(crate) fn read_exact(&mut self, mut buf: &mut [u8]) -> Result<(), Failure> {
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

    pub(crate) fn write_all(&mut self, mut data: &[u8]) -> Result<(), Failure> {
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
    pub(crate) fn key_update(&mut self) {
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

    pub(crate) fn send_close_notify(&mut self) -> Result<(), Failure> {
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
    pub(crate) fn await_close_notify(&mut self) -> Result<(), Failure> {
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
