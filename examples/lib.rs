//! Shared code behind the `https_server` and `https_client` examples (and the
//! `https_example` integration test): a tiny HTTP/1.1-over-TLS server and
//! client on tokio-rustls, with rustls-fusion protecting the records.
//!
//! Every function that builds a rustls config takes the
//! [`CryptoProvider`] explicitly (`builder_with_provider`), so the test can
//! run several servers and clients in one process without racing over
//! `CryptoProvider::install_default`. The example binaries install
//! `rustls_fusion::default_provider()` as the process default first and pass
//! `CryptoProvider::get_default()` in, which is exactly what
//! `ServerConfig::builder()` / `ClientConfig::builder()` would use.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::version::{TLS12, TLS13};
use rustls::{
    ClientConfig, ProtocolVersion, RootCertStore, ServerConfig, SupportedCipherSuite,
    SupportedProtocolVersion,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;
use tokio_rustls::{TlsAcceptor, TlsConnector};

/// Error type of this crate: anything printable.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The one ALPN protocol both sides speak.
pub const ALPN_HTTP11: &[u8] = b"http/1.1";

/// File name (in [`std::env::temp_dir`]) the server writes its self-signed
/// certificate to; see [`default_ca_path`].
pub const CA_FILE_NAME: &str = "rustls-fusion-example-ca.pem";

/// Names the self-signed certificate is valid for.
pub const SELF_SIGNED_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];

/// Deadline for the TLS handshake, for reading the request head and for a
/// whole client fetch.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest request or response head (request line or status line plus
/// headers) we accept.
const MAX_HEAD: usize = 16 * 1024;

/// Largest response (head plus body) the client reads.
const MAX_RESPONSE: usize = 16 * 1024 * 1024;

/// Where the server writes, and the client looks for, the example CA:
/// `<temp dir>/rustls-fusion-example-ca.pem`.
pub fn default_ca_path() -> PathBuf {
    std::env::temp_dir().join(CA_FILE_NAME)
}

// ---------------------------------------------------------------------------
// Certificates
// ---------------------------------------------------------------------------

/// A certificate chain (end-entity first) and its private key.
#[derive(Debug)]
pub struct Identity {
    /// End-entity certificate first, then any intermediates.
    pub cert_chain: Vec<CertificateDer<'static>>,
    /// The end-entity certificate's private key.
    pub key: PrivateKeyDer<'static>,
}

/// A freshly generated self-signed identity.
#[derive(Debug)]
pub struct SelfSigned {
    /// The certificate (its own issuer) and its key.
    pub identity: Identity,
    /// The certificate as PEM: the trust anchor clients need.
    pub ca_pem: String,
}

/// Generates an ECDSA P-256 self-signed certificate for
/// [`SELF_SIGNED_NAMES`] (DNS name `localhost`, IP address `127.0.0.1`). The
/// certificate is its own CA: trust [`SelfSigned::ca_pem`] to accept it.
pub fn self_signed_identity() -> Result<SelfSigned, Error> {
    let mut params = rcgen::CertificateParams::new(SELF_SIGNED_NAMES.map(String::from).to_vec())?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "rustls-fusion example");
    let key = rcgen::KeyPair::generate()?;
    let cert = params.self_signed(&key)?;
    Ok(SelfSigned {
        identity: Identity {
            cert_chain: vec![cert.der().clone()],
            key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        },
        ca_pem: cert.pem(),
    })
}

/// Loads a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or
/// SEC1).
pub fn load_identity(cert_pem: &Path, key_pem: &Path) -> Result<Identity, Error> {
    let cert_chain = CertificateDer::pem_file_iter(cert_pem)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", cert_pem.display()))?;
    if cert_chain.is_empty() {
        return Err(format!("{}: no certificates found", cert_pem.display()).into());
    }
    let key =
        PrivateKeyDer::from_pem_file(key_pem).map_err(|e| format!("{}: {e}", key_pem.display()))?;
    Ok(Identity { cert_chain, key })
}

/// Loads every certificate in a PEM file into a root store. Fails if the file
/// holds none that parse.
pub fn load_roots(ca_pem: &Path) -> Result<RootCertStore, Error> {
    let certs = CertificateDer::pem_file_iter(ca_pem)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", ca_pem.display()))?;
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(format!("{}: no usable CA certificates", ca_pem.display()).into());
    }
    Ok(roots)
}

// ---------------------------------------------------------------------------
// Naming what was negotiated
// ---------------------------------------------------------------------------

/// rustls's name for a protocol version, e.g. `TLSv1_3`.
pub fn protocol_name(version: ProtocolVersion) -> String {
    format!("{version:?}")
}

/// rustls's name for a cipher suite, e.g. `TLS13_AES_256_GCM_SHA384`.
pub fn suite_name(suite: SupportedCipherSuite) -> String {
    format!("{:?}", suite.suite())
}

/// The body the server sends for `GET /`.
pub fn hello_body(version: ProtocolVersion, suite: SupportedCipherSuite) -> String {
    format!(
        "hello from rustls-fusion\nprotocol: {}\ncipher suite: {}\n",
        protocol_name(version),
        suite_name(suite)
    )
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

/// A server config on `provider`: TLS 1.3 and TLS 1.2, no client
/// authentication, ALPN `http/1.1`.
pub fn server_config(
    provider: Arc<CryptoProvider>,
    identity: Identity,
) -> Result<ServerConfig, Error> {
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&TLS13, &TLS12])?
        .with_no_client_auth()
        .with_single_cert(identity.cert_chain, identity.key)?;
    config.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
    Ok(config)
}

/// Accepts connections forever, each handled in its own task by
/// [`handle_connection`]. A failed handshake or request is logged to stderr
/// and only ends that connection.
pub async fn serve(listener: TcpListener, config: Arc<ServerConfig>) {
    let acceptor = TlsAcceptor::from(config);
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // E.g. out of file descriptors: back off instead of spinning.
                eprintln!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            if let Err(e) = handle_connection(acceptor, tcp).await {
                eprintln!("{peer}: {e}");
            }
        });
    }
}

/// Serves one request on one connection, then closes it (with close_notify).
pub async fn handle_connection(acceptor: TlsAcceptor, tcp: TcpStream) -> Result<(), Error> {
    let peer = tcp.peer_addr()?;
    let mut tls = timeout(IO_TIMEOUT, acceptor.accept(tcp))
        .await
        .map_err(|_| "TLS handshake timed out")?
        .map_err(|e| format!("TLS handshake failed: {e}"))?;

    let (version, suite) = {
        let (_, conn) = tls.get_ref();
        (
            conn.protocol_version()
                .ok_or("no protocol version after handshake")?,
            conn.negotiated_cipher_suite()
                .ok_or("no cipher suite after handshake")?,
        )
    };

    let head = timeout(IO_TIMEOUT, read_head(&mut tls))
        .await
        .map_err(|_| "timed out reading the request")??;
    let (response, log) = respond(&head, version, suite);
    eprintln!(
        "{peer}: {log} ({}, {})",
        protocol_name(version),
        suite_name(suite)
    );
    tls.write_all(&response).await?;
    tls.shutdown().await?;
    Ok(())
}

/// Reads up to and including the blank line that ends an HTTP head.
async fn read_head<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Vec<u8>, Error> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if let Some(end) = find(&head, b"\r\n\r\n") {
            head.truncate(end + 4);
            return Ok(head);
        }
        if head.len() > MAX_HEAD {
            return Err("request head too large".into());
        }
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return Err("connection closed before the request was complete".into());
        }
        head.extend_from_slice(&buf[..n]);
    }
}

/// Builds the complete response to a request head, and a line to log.
fn respond(
    head: &[u8],
    version: ProtocolVersion,
    suite: SupportedCipherSuite,
) -> (Vec<u8>, String) {
    let request_line = head
        .split(|&b| b == b'\n')
        .next()
        .map(|line| String::from_utf8_lossy(line).trim_end().to_string())
        .unwrap_or_default();
    let parts: Vec<&str> = request_line.split(' ').collect();

    let (status, extra, body, head_only) = match parts.as_slice() {
        [method, target, http] if http.starts_with("HTTP/1.") => {
            let head_only = *method == "HEAD";
            if *method != "GET" && !head_only {
                (
                    "405 Method Not Allowed",
                    "Allow: GET, HEAD\r\n",
                    "method not allowed\n".to_string(),
                    false,
                )
            } else if *target == "/" {
                ("200 OK", "", hello_body(version, suite), head_only)
            } else {
                ("404 Not Found", "", "not found\n".to_string(), head_only)
            }
        }
        _ => ("400 Bad Request", "", "bad request\n".to_string(), false),
    };

    let mut response = format!(
        "HTTP/1.1 {status}\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\n\
         {extra}\
         Connection: close\r\n\
         \r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        response.extend_from_slice(body.as_bytes());
    }
    (response, format!("{request_line:?} -> {status}"))
}

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

/// The parts of an `https://` URL the client needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    /// Port; 443 when the URL names none.
    pub port: u16,
    /// Path and query, starting with `/` (fragment dropped).
    pub path: String,
}

impl Url {
    /// Parses `https://host[:port][/path][?query][#fragment]`; `host` may be
    /// a bracketed IPv6 address. Other schemes and user info are rejected.
    pub fn parse(url: &str) -> Result<Url, Error> {
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => rest,
            Some((scheme, _)) => {
                return Err(format!("unsupported scheme {scheme:?}: only https").into())
            }
            None => return Err(format!("{url:?}: not a URL (expected https://...)").into()),
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(authority_end);
        if authority.contains('@') {
            return Err("user info in URLs is not supported".into());
        }

        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (host, after) = bracketed.split_once(']').ok_or("unterminated [ in host")?;
            match after {
                "" => (host, None),
                _ => (host, Some(after.strip_prefix(':').ok_or("junk after ]")?)),
            }
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err("URL has no host".into());
        }
        let port = match port {
            None | Some("") => 443,
            Some(port) => port.parse().map_err(|_| format!("bad port {port:?}"))?,
        };
        let path = match path {
            "" => "/".to_string(),
            p if p.starts_with('?') => format!("/{p}"),
            p => p.to_string(),
        };
        Ok(Url {
            host: host.to_string(),
            port,
            path,
        })
    }

    /// The `Host` header value: host (bracketed if IPv6), plus `:port` unless
    /// it is 443.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == 443 {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(f, "https://{host}:{}{}", self.port, self.path)
    }
}

/// A client config on `provider` trusting only `roots`, limited to
/// `versions` (e.g. `&[&TLS12]`; `&[&TLS13, &TLS12]` for both), offering ALPN
/// `http/1.1`.
pub fn client_config(
    provider: Arc<CryptoProvider>,
    roots: RootCertStore,
    versions: &[&'static SupportedProtocolVersion],
) -> Result<ClientConfig, Error> {
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
    Ok(config)
}

/// What [`fetch`] got back.
#[derive(Debug)]
pub struct Response {
    /// E.g. `HTTP/1.1 200 OK`.
    pub status_line: String,
    /// The status code from the status line.
    pub status: u16,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked if the server used chunked encoding).
    pub body: Vec<u8>,
    /// The negotiated TLS version.
    pub protocol: ProtocolVersion,
    /// The negotiated cipher suite: one of the provider's
    /// `SupportedCipherSuite`s.
    pub cipher_suite: SupportedCipherSuite,
    /// The ALPN protocol the server chose, if any.
    pub alpn: Option<Vec<u8>>,
}

impl Response {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Connects to `url`, sends `GET path HTTP/1.1` (with `Connection: close`)
/// and reads the whole response. Fails after [`IO_TIMEOUT`].
pub async fn fetch(config: Arc<ClientConfig>, url: &Url) -> Result<Response, Error> {
    timeout(IO_TIMEOUT, fetch_inner(config, url))
        .await
        .map_err(|_| format!("{url}: timed out"))?
}

async fn fetch_inner(config: Arc<ClientConfig>, url: &Url) -> Result<Response, Error> {
    let server_name =
        ServerName::try_from(url.host.clone()).map_err(|e| format!("{:?}: {e}", url.host))?;
    let tcp = TcpStream::connect((url.host.as_str(), url.port))
        .await
        .map_err(|e| format!("connecting to {}:{}: {e}", url.host, url.port))?;
    let mut tls = TlsConnector::from(config)
        .connect(server_name, tcp)
        .await
        .map_err(|e| format!("TLS handshake failed: {e}"))?;

    let (protocol, cipher_suite, alpn) = {
        let (_, conn) = tls.get_ref();
        (
            conn.protocol_version()
                .ok_or("no protocol version after handshake")?,
            conn.negotiated_cipher_suite()
                .ok_or("no cipher suite after handshake")?,
            conn.alpn_protocol().map(<[u8]>::to_vec),
        )
    };

    let request = format!(
        "GET {} HTTP/1.1\r\n\
         Host: {}\r\n\
         User-Agent: rustls-fusion-example\r\n\
         Accept: */*\r\n\
         Connection: close\r\n\
         \r\n",
        url.path,
        url.host_header()
    );
    tls.write_all(request.as_bytes()).await?;
    tls.flush().await?;

    // Read until the server closes. A close without close_notify shows up as
    // UnexpectedEof; that is only acceptable if the framing below proves the
    // response complete.
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let mut clean_close = true;
    loop {
        match tls.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buf[..n]);
                if raw.len() > MAX_RESPONSE {
                    return Err("response too large".into());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                clean_close = false;
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }

    let head_end = find(&raw, b"\r\n\r\n").ok_or("response ended inside its head")?;
    let head = std::str::from_utf8(&raw[..head_end]).map_err(|_| "response head is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default().to_string();
    let status = match status_line.split(' ').collect::<Vec<_>>().as_slice() {
        [http, code, ..] if http.starts_with("HTTP/") => code
            .parse()
            .map_err(|_| format!("bad status line {status_line:?}"))?,
        _ => return Err(format!("bad status line {status_line:?}").into()),
    };
    let headers = lines
        .map(|line| {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("bad header line {line:?}"))?;
            Ok((name.trim().to_string(), value.trim().to_string()))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut response = Response {
        status_line,
        status,
        headers,
        body: Vec::new(),
        protocol,
        cipher_suite,
        alpn,
    };

    let payload = &raw[head_end + 4..];
    let chunked = response
        .header("Transfer-Encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    response.body = if chunked {
        dechunk(payload)?
    } else if let Some(length) = response.header("Content-Length") {
        let length: usize = length
            .parse()
            .map_err(|_| format!("bad Content-Length {length:?}"))?;
        if payload.len() < length {
            return Err(format!(
                "response truncated: {} of {length} body bytes",
                payload.len()
            )
            .into());
        }
        payload[..length].to_vec()
    } else if clean_close {
        payload.to_vec()
    } else {
        return Err("connection closed without close_notify: body may be truncated".into());
    };
    Ok(response)
}

/// Decodes a complete `Transfer-Encoding: chunked` body (trailers ignored).
fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    loop {
        let line_end = find(data, b"\r\n").ok_or("truncated chunked body")?;
        let size_field = std::str::from_utf8(&data[..line_end]).map_err(|_| "bad chunk size")?;
        let size_hex = size_field.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| format!("bad chunk size {size_hex:?}"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if data.len() < size + 2 || &data[size..size + 2] != b"\r\n" {
            return Err("truncated chunked body".into());
        }
        body.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let u = Url::parse("https://localhost:8443/").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("localhost", 8443, "/")
        );
        assert_eq!(u.host_header(), "localhost:8443");

        let u = Url::parse("HTTPS://example.com").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("example.com", 443, "/")
        );
        assert_eq!(u.host_header(), "example.com");

        let u = Url::parse("https://[::1]:8443/a/b?c=d#frag").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 8443, "/a/b?c=d")
        );
        assert_eq!(u.host_header(), "[::1]:8443");

        let u = Url::parse("https://127.0.0.1?x").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 443, "/?x")
        );

        for bad in [
            "http://localhost/",
            "localhost:8443",
            "https:///",
            "https://host:99999/",
            "https://user@host/",
            "https://[::1/",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dechunks() {
        assert_eq!(
            dechunk(b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n").unwrap(),
            b"hello, world"
        );
        assert!(dechunk(b"5\r\nhel").is_err());
        assert!(dechunk(b"5\r\nhello\r\n").is_err());
    }
}
