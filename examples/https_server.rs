//! A tokio-rustls HTTPS server on rustls-fusion.
//!
//! ```text
//! cargo run --release --example https_server -- [--listen ADDR] [--cert PEM --key PEM]
//! ```
//!
//! `--listen` defaults to `127.0.0.1:8443` (port 0 picks a free port). Without
//! `--cert`/`--key` the server generates a self-signed certificate for
//! `localhost` and `127.0.0.1`, writes it to
//! `<temp dir>/rustls-fusion-example-ca.pem` and prints that path; trust it
//! with `curl --cacert <path> https://localhost:8443/` or
//! `https_client --cafile <path> https://localhost:8443/`.
//!
//! Once bound it prints `listening on https://ADDR` on stdout. `GET /`
//! answers with the negotiated protocol version and cipher suite; other paths
//! are 404. TLS 1.2 and 1.3, ALPN `http/1.1`, one connection per task, one
//! request per connection.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls_fusion_examples::{
    default_ca_path, load_identity, self_signed_identity, serve, server_config, Error,
};
use tokio::net::TcpListener;

const USAGE: &str = "usage: https_server [--listen ADDR] [--cert CERT_PEM --key KEY_PEM]

  --listen ADDR   address to listen on (default 127.0.0.1:8443; port 0 = any free port)
  --cert PEM      certificate chain (end-entity first)
  --key PEM       private key (PKCS#8, PKCS#1 or SEC1)

Without --cert/--key a self-signed certificate for localhost and 127.0.0.1 is
generated and written (as its own CA) to <temp dir>/rustls-fusion-example-ca.pem.";

struct Args {
    listen: String,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        listen: "127.0.0.1:8443".to_string(),
        cert: None,
        key: None,
    };
    let mut argv = std::env::args().skip(1);
    while let Some(arg) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--listen" => args.listen = value("--listen")?,
            "--cert" => args.cert = Some(value("--cert")?.into()),
            "--key" => args.key = Some(value("--key")?.into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("https_server: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("https_server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Error> {
    // Install our provider as the process default *before* any rustls config
    // is built; otherwise rustls would quietly pick its built-in one.
    rustls_fusion::default_provider()
        .install_default()
        .map_err(|_| "another CryptoProvider was installed first")?;
    // Exactly what `ServerConfig::builder()` would now use.
    let provider: Arc<CryptoProvider> = CryptoProvider::get_default()
        .ok_or("no default CryptoProvider")?
        .clone();

    let (identity, ca_file) = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => (load_identity(cert, key)?, None),
        (None, None) => {
            let generated = self_signed_identity()?;
            let path = default_ca_path();
            std::fs::write(&path, &generated.ca_pem)
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            (generated.identity, Some(path))
        }
        _ => return Err("--cert and --key go together".into()),
    };
    let config = Arc::new(server_config(provider, identity)?);

    let listener = TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("binding {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    println!("listening on https://{addr}");
    if let Some(path) = ca_file {
        println!("self-signed CA certificate written to {}", path.display());
        eprintln!(
            "try: curl --cacert {} https://localhost:{}/",
            path.display(),
            addr.port()
        );
    }

    serve(listener, config).await;
    Ok(())
}
