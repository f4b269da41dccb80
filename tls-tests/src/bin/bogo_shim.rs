//! A BoGo shim: the program BoringSSL's TLS test runner (`ssl/test/runner`)
//! drives, here rustls on rustls-fusion (or, for the baseline, on rustls's
//! aws-lc-rs provider). `scripts/bogo.sh` builds the runner and compares the
//! two providers' results; docs/conformance.md, "BoGo".
//!
//! The runner starts one shim per test with its flags, the port to
//! connect to and an 8-byte shim id to send first. The shim makes the
//! handshake, then echoes every byte it reads XOR 0xff until the runner
//! closes, once per connection (`-resume-count` more for resumption). A
//! flag it does not implement makes it exit with code 89, which the runner
//! counts as unimplemented, not failed.
//!
//! Environment: `BOGO_PROVIDER` is `fusion` (default) or `aws-lc-rs`;
//! `BOGO_AES` and `BOGO_CHACHA` pin rustls-fusion's backends by name.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::ops::{Deref, DerefMut};
use std::process::exit;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    ClientConfig, ClientConnection, ConnectionCommon, DigitallySignedStruct, DistinguishedName,
    ServerConfig, ServerConnection, SideData, SignatureScheme, StreamOwned,
    SupportedProtocolVersion,
};
use rustls_fusion::aead::Backend;

/// The runner's code for "this shim does not implement a flag the test
/// needs".
const UNIMPLEMENTED: i32 = 89;

/// What the flags ask for.
#[derive(Default)]
struct Options {
    port: u16,
    shim_id: u64,
    ipv6: bool,
    server: bool,
    cert_file: Option<String>,
    key_file: Option<String>,
    min_version: Option<u16>,
    max_version: Option<u16>,
    expect_version: Option<u16>,
    resume_count: usize,
    read_size: Option<usize>,
    max_send_fragment: Option<usize>,
    host_name: Option<String>,
    curves: Vec<u16>,
    shim_writes_first: bool,
    require_client_cert: bool,
    /// `-export-keying-material`: bytes to export (RFC 5705) and send first.
    export: usize,
    export_label: String,
    export_context: Option<String>,
    use_export_context: bool,
    /// Send a KeyUpdate after the handshake.
    key_update: bool,
    no_ticket: bool,
    /// The runner must send close_notify before it closes.
    check_close_notify: bool,
    /// Resumption attempts must not resume.
    expect_session_miss: bool,
    expect_curve: Option<u16>,
    /// ALPN: the client's list (wire format: length-prefixed names), the
    /// server's choice, and what must be negotiated.
    advertise_alpn: Vec<Vec<u8>>,
    select_alpn: Option<Vec<u8>>,
    expect_alpn: Option<Vec<u8>>,
}

fn unimplemented(what: &str) -> ! {
    eprintln!("bogo_shim: unimplemented: {what}");
    exit(UNIMPLEMENTED)
}

fn parse(args: &[String]) -> Options {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || -> &String {
            it.next()
                .unwrap_or_else(|| unimplemented(&format!("{flag} without a value")))
        };
        let number = |v: &String| -> u64 {
            v.parse()
                .unwrap_or_else(|_| unimplemented(&format!("{flag} {v}")))
        };
        match flag.as_str() {
            "-port" => o.port = number(value()) as u16,
            "-shim-id" => o.shim_id = number(value()),
            "-ipv6" => o.ipv6 = true,
            "-server" => o.server = true,
            "-cert-file" => o.cert_file = Some(value().clone()),
            "-key-file" => o.key_file = Some(value().clone()),
            "-min-version" => o.min_version = Some(number(value()) as u16),
            "-max-version" => o.max_version = Some(number(value()) as u16),
            "-expect-version" => o.expect_version = Some(number(value()) as u16),
            "-resume-count" => o.resume_count = number(value()) as usize,
            "-read-size" => o.read_size = Some(number(value()) as usize),
            "-max-send-fragment" => o.max_send_fragment = Some(number(value()) as usize),
            "-host-name" => o.host_name = Some(value().clone()),
            "-curves" => o.curves.push(number(value()) as u16),
            "-shim-writes-first" => o.shim_writes_first = true,
            "-require-any-client-certificate" => o.require_client_cert = true,
            "-export-keying-material" => o.export = number(value()) as usize,
            "-export-label" => o.export_label = value().clone(),
            "-export-context" => o.export_context = Some(value().clone()),
            "-use-export-context" => o.use_export_context = true,
            "-key-update" => o.key_update = true,
            "-no-ticket" => o.no_ticket = true,
            "-check-close-notify" => o.check_close_notify = true,
            "-expect-session-miss" => o.expect_session_miss = true,
            "-expect-curve-id" => o.expect_curve = Some(number(value()) as u16),
            "-advertise-alpn" => o.advertise_alpn = alpn_list(value().as_bytes()),
            "-select-alpn" => o.select_alpn = Some(value().as_bytes().to_vec()),
            "-expect-alpn" => o.expect_alpn = Some(value().as_bytes().to_vec()),
            // The root the peer's certificate chains to: every certificate
            // is accepted (`AnyCert`), so it is not needed.
            "-trust-cert" => {
                value();
            }
            other => unimplemented(other),
        }
    }
    o
}

/// A wire-format ALPN list (each name after its length byte).
fn alpn_list(mut wire: &[u8]) -> Vec<Vec<u8>> {
    let mut names = Vec::new();
    while let Some((&len, rest)) = wire.split_first() {
        if rest.len() < usize::from(len) {
            unimplemented("a malformed -advertise-alpn");
        }
        let (name, rest) = rest.split_at(usize::from(len));
        names.push(name.to_vec());
        wire = rest;
    }
    names
}

/// The provider under test, with the curves the flags allow.
fn provider(o: &Options) -> Arc<CryptoProvider> {
    let mut p = match std::env::var("BOGO_PROVIDER").as_deref() {
        Ok("aws-lc-rs") => rustls::crypto::aws_lc_rs::default_provider(),
        Ok("fusion") | Err(_) => {
            let backend = |var: &str| {
                let name = std::env::var(var).ok()?;
                Some(
                    *Backend::ALL
                        .iter()
                        .find(|b| b.name() == name)
                        .unwrap_or_else(|| panic!("{var}: no backend {name}")),
                )
            };
            let mut b = rustls_fusion::ProviderBuilder::new();
            if let Some(aes) = backend("BOGO_AES") {
                b = b.aes_gcm(aes);
            }
            if let Some(chacha) = backend("BOGO_CHACHA") {
                b = b.chacha20_poly1305(chacha);
            }
            b.build().expect("a backend this CPU runs")
        }
        Ok(other) => panic!("BOGO_PROVIDER: {other}"),
    };
    if !o.curves.is_empty() {
        p.kx_groups
            .retain(|g| o.curves.contains(&u16::from(g.name())));
        if p.kx_groups.is_empty() {
            unimplemented("none of -curves");
        }
    }
    Arc::new(p)
}

/// TLS 1.2 and 1.3 within the flags' range (rustls has no other version).
fn versions(o: &Options) -> Vec<&'static SupportedProtocolVersion> {
    let (min, max) = (
        o.min_version.unwrap_or(0),
        o.max_version.unwrap_or(u16::MAX),
    );
    let v: Vec<_> = [
        (0x0304, &rustls::version::TLS13),
        (0x0303, &rustls::version::TLS12),
    ]
    .into_iter()
    .filter(|&(wire, _)| min <= wire && wire <= max)
    .map(|(_, v)| v)
    .collect();
    if v.is_empty() {
        unimplemented("a version range without TLS 1.2 or 1.3");
    }
    v
}

/// Accepts any peer certificate (the runner's are self-signed, and the
/// BoringSSL shim verifies none unless asked) but checks every handshake
/// signature with the provider's algorithms.
#[derive(Debug)]
struct AnyCert(Arc<CryptoProvider>);

type Sig = Result<HandshakeSignatureValid, rustls::Error>;

/// The signature checks both verifier traits share, with the provider's
/// algorithms.
macro_rules! signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            m: &[u8],
            c: &CertificateDer<'_>,
            d: &DigitallySignedStruct,
        ) -> Sig {
            verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms)
        }
        fn verify_tls13_signature(
            &self,
            m: &[u8],
            c: &CertificateDer<'_>,
            d: &DigitallySignedStruct,
        ) -> Sig {
            verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms)
        }
        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    };
}

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    signatures!();
}

impl ClientCertVerifier for AnyCert {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }
    fn verify_client_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }
    signatures!();
}

/// The certificate chain and key the flags name, if any.
fn credentials(o: &Options) -> Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let (cert, key) = (o.cert_file.as_ref()?, o.key_file.as_ref()?);
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .unwrap_or_else(|e| panic!("{cert}: {e}"));
    let key = PrivateKeyDer::from_pem_file(key).unwrap_or_else(|e| panic!("{key}: {e}"));
    Some((chain, key))
}

fn config(o: &Options) -> Result<Connector, rustls::Error> {
    let provider = provider(o);
    let versions = versions(o);
    let verifier = Arc::new(AnyCert(provider.clone()));
    let fragment = o.max_send_fragment.map(|n| n + 5);
    if o.server {
        let builder =
            ServerConfig::builder_with_provider(provider).with_protocol_versions(&versions)?;
        let builder = if o.require_client_cert {
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let (chain, key) =
            credentials(o).unwrap_or_else(|| unimplemented("a server without -cert-file"));
        let mut config = builder.with_single_cert(chain, key)?;
        config.max_fragment_size = fragment;
        config.alpn_protocols = o.select_alpn.iter().cloned().collect();
        if o.no_ticket {
            config.send_tls13_tickets = 0;
        }
        Ok(Connector::Server(Arc::new(config)))
    } else {
        if o.require_client_cert {
            unimplemented("-require-any-client-certificate on a client");
        }
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match credentials(o) {
            Some((chain, key)) => builder.with_client_auth_cert(chain, key)?,
            None => builder.with_no_client_auth(),
        };
        config.max_fragment_size = fragment;
        config.alpn_protocols = o.advertise_alpn.clone();
        if o.no_ticket {
            config.resumption = config
                .resumption
                .clone()
                .tls12_resumption(rustls::client::Tls12Resumption::SessionIdOnly);
        }
        let name = o.host_name.clone().unwrap_or_else(|| "test".into());
        let name =
            ServerName::try_from(name).map_err(|_| rustls::Error::General("-host-name".into()))?;
        Ok(Connector::Client(Arc::new(config), name))
    }
}

/// Makes a connection for each exchange, sharing the session state that
/// resumption needs.
enum Connector {
    Server(Arc<ServerConfig>),
    Client(Arc<ClientConfig>, ServerName<'static>),
}

/// One connection: handshake, then echo until the runner closes.
fn exchange(o: &Options, connector: &Connector, resumption: bool) -> Result<(), String> {
    let host = if o.ipv6 { "::1" } else { "127.0.0.1" };
    let mut sock = TcpStream::connect((host, o.port)).map_err(|e| format!("connect: {e}"))?;
    sock.set_nodelay(true).map_err(|e| e.to_string())?;
    sock.write_all(&o.shim_id.to_le_bytes())
        .map_err(|e| format!("shim id: {e}"))?;
    let error = |e: rustls::Error| e.to_string();
    match connector {
        Connector::Server(c) => {
            let conn = ServerConnection::new(c.clone()).map_err(error)?;
            echo(o, StreamOwned::new(conn, sock), resumption)
        }
        Connector::Client(c, name) => {
            let conn = ClientConnection::new(c.clone(), name.clone()).map_err(error)?;
            echo(o, StreamOwned::new(conn, sock), resumption)
        }
    }
}

fn echo<C, D>(
    o: &Options,
    mut tls: StreamOwned<C, TcpStream>,
    resumption: bool,
) -> Result<(), String>
where
    C: DerefMut + Deref<Target = ConnectionCommon<D>>,
    D: SideData,
{
    let result = echo_inner(o, &mut tls, resumption);
    if result.is_err() {
        // Send the alert rustls queued, then let the runner read it before
        // the socket closes (closed with unread data, it would be reset).
        while tls.conn.wants_write() && tls.conn.write_tls(&mut tls.sock).is_ok() {}
        let _ = tls.sock.shutdown(std::net::Shutdown::Write);
        let _ = tls
            .sock
            .set_read_timeout(Some(std::time::Duration::from_secs(1)));
        let mut sink = [0u8; 4096];
        while matches!(tls.sock.read(&mut sink), Ok(n) if n > 0) {}
    }
    result
}

fn echo_inner<C, D>(
    o: &Options,
    tls: &mut StreamOwned<C, TcpStream>,
    resumption: bool,
) -> Result<(), String>
where
    C: DerefMut + Deref<Target = ConnectionCommon<D>>,
    D: SideData,
{
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .map_err(|e| format!("handshake: {e}"))?;
    }
    if let Some(want) = o.expect_version {
        let got = tls.conn.protocol_version().map(u16::from);
        if got != Some(want) {
            return Err(format!("version {got:?}, expected {want:#x}"));
        }
    }
    if resumption
        && o.expect_session_miss
        && tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
    {
        return Err("resumed, expected a session miss".into());
    }
    if let Some(want) = o.expect_curve {
        let got = tls
            .conn
            .negotiated_key_exchange_group()
            .map(|g| u16::from(g.name()));
        if got != Some(want) {
            return Err(format!("group {got:?}, expected {want}"));
        }
    }
    if let Some(want) = &o.expect_alpn {
        if tls.conn.alpn_protocol() != Some(want.as_slice()) {
            return Err(format!(
                "ALPN {:?}, expected {want:?}",
                tls.conn.alpn_protocol()
            ));
        }
    }
    if o.export > 0 {
        let mut out = vec![0u8; o.export];
        let context = o
            .export_context
            .as_deref()
            .filter(|_| o.use_export_context)
            .map(str::as_bytes);
        tls.conn
            .export_keying_material(&mut out, o.export_label.as_bytes(), context)
            .map_err(|e| format!("export: {e}"))?;
        tls.write_all(&out).map_err(|e| format!("write: {e}"))?;
    }
    if o.key_update {
        tls.conn
            .refresh_traffic_keys()
            .map_err(|e| format!("key update: {e}"))?;
    }
    if o.shim_writes_first {
        tls.write_all(b"hello").map_err(|e| format!("write: {e}"))?;
    }
    let mut buf = vec![0u8; o.read_size.unwrap_or(1 << 15).max(1)];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                for b in &mut buf[..n] {
                    *b ^= 0xff;
                }
                tls.write_all(&buf[..n])
                    .and_then(|()| tls.flush())
                    .map_err(|e| format!("write: {e}"))?;
            }
            // The runner may close without close_notify once it has its
            // reply, unless the test checks for it.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !o.check_close_notify => break,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    tls.conn.send_close_notify();
    // The runner may be gone already.
    let _ = tls.conn.complete_io(&mut tls.sock);
    Ok(())
}

fn main() {
    // Lossy: a flag's value may be bytes (ALPN lists), which std::env::args
    // would refuse.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // The runner asks once whether the shim has BoringSSL's split
    // handshaker (for its -Hints tests): no.
    if args.iter().any(|a| a == "-is-handshaker-supported") {
        println!("No");
        return;
    }
    // For scripts/bogo.sh: the backends this CPU runs, by algorithm.
    if args.iter().any(|a| a == "-list-backends") {
        let names =
            |list: Vec<Backend>| list.iter().map(|b| b.name()).collect::<Vec<_>>().join(" ");
        println!("aes {}", names(rustls_fusion::aead::Aes128Gcm::backends()));
        println!(
            "chacha {}",
            names(rustls_fusion::aead::ChaCha20Poly1305::backends())
        );
        return;
    }
    let o = parse(&args);
    let connector = config(&o).unwrap_or_else(|e| {
        eprintln!("bogo_shim: config: {e}");
        exit(1)
    });
    for i in 0..=o.resume_count {
        if let Err(e) = exchange(&o, &connector, i > 0) {
            eprintln!("bogo_shim: {e}");
            exit(1);
        }
    }
}
