//! A tokio-rustls HTTPS client on rustls-fusion.
//!
//! ```text
//! cargo run --release --example https_client -- URL [--cafile PEM] [--tls12 | --tls13]
//! ```
//!
//! Fetches an `https://` URL with `GET` and prints the status line, the
//! negotiated protocol version and cipher suite, a blank line, then the body.
//!
//! Trust: only the certificates in `--cafile` are trusted (no system roots).
//! Without `--cafile`, the client falls back to the `https_server` example's
//! self-signed CA at `<temp dir>/rustls-fusion-example-ca.pem` if that file
//! exists, and fails otherwise. For a public site pass the system bundle,
//! e.g. `--cafile /etc/ssl/certs/ca-certificates.crt`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::version::{TLS12, TLS13};
use rustls::SupportedProtocolVersion;
use rustls_fusion_examples::{
    client_config, default_ca_path, fetch, load_roots, protocol_name, suite_name, Error, Url,
};

const USAGE: &str = "usage: https_client URL [--cafile PEM] [--tls12 | --tls13]

  URL            https://host[:port][/path]
  --cafile PEM   trust (only) the CA certificates in PEM; default: the
                 https_server example's <temp dir>/rustls-fusion-example-ca.pem
  --tls12        offer TLS 1.2 only
  --tls13        offer TLS 1.3 only";

static BOTH: &[&SupportedProtocolVersion] = &[&TLS13, &TLS12];
static TLS12_ONLY: &[&SupportedProtocolVersion] = &[&TLS12];
static TLS13_ONLY: &[&SupportedProtocolVersion] = &[&TLS13];

struct Args {
    url: String,
    cafile: Option<PathBuf>,
    versions: &'static [&'static SupportedProtocolVersion],
}

fn parse_args() -> Result<Args, String> {
    let mut url = None;
    let mut cafile = None;
    let mut versions: &'static [&'static SupportedProtocolVersion] = BOTH;
    let mut argv = std::env::args().skip(1);
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "--cafile" => {
                cafile = Some(argv.next().ok_or("--cafile needs a value")?.into());
            }
            "--tls12" => versions = TLS12_ONLY,
            "--tls13" => versions = TLS13_ONLY,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other if other.starts_with('-') => {
                return Err(format!("unknown option {other:?}"));
            }
            _ if url.is_some() => return Err(format!("unexpected argument {arg:?}")),
            _ => url = Some(arg),
        }
    }
    Ok(Args {
        url: url.ok_or("missing URL")?,
        cafile,
        versions,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("https_client: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("https_client: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Error> {
    let url = Url::parse(&args.url)?;

    // Install our provider as the process default before building any rustls
    // config, then use exactly that default.
    rustls_fusion::default_provider()
        .install_default()
        .map_err(|_| "another CryptoProvider was installed first")?;
    let provider: Arc<CryptoProvider> = CryptoProvider::get_default()
        .ok_or("no default CryptoProvider")?
        .clone();

    let cafile = match args.cafile {
        Some(path) => path,
        None => {
            let path = default_ca_path();
            if !path.exists() {
                return Err(format!(
                    "no --cafile given and {} does not exist (start https_server first)",
                    path.display()
                )
                .into());
            }
            eprintln!("no --cafile given; trusting {}", path.display());
            path
        }
    };
    let roots = load_roots(&cafile)?;
    let config = Arc::new(client_config(provider, roots, args.versions)?);

    let response = fetch(config, &url).await?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", response.status_line)?;
    writeln!(out, "protocol: {}", protocol_name(response.protocol))?;
    writeln!(out, "cipher suite: {}", suite_name(response.cipher_suite))?;
    writeln!(out)?;
    out.write_all(&response.body)?;
    out.flush()?;
    Ok(())
}
