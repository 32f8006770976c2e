//! TLS on the listener (`[http] tls_cert`, `tls_key`): a PEM certificate
//! chain and its private key, served by rustls (ring, TLS 1.2 and 1.3,
//! ALPN `http/1.1`). Loaded once when the daemon starts; every problem
//! with the files is a [`TlsError`] naming the file, before anything
//! binds.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the certificate or key cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The file cannot be read.
    #[error("reading the TLS {what} {}", path.display())]
    Read {
        /// `certificate` or `key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not PEM, or no `CERTIFICATE` / `PRIVATE KEY` section in it.
    #[error("the TLS {what} {} is not usable PEM: {message}", path.display())]
    Pem {
        /// `certificate` or `key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// rustls refused the pair (the key does not match the certificate,
    /// an unsupported key type).
    #[error("the TLS certificate and key cannot be used together: {0}")]
    Rejected(#[source] rustls::Error),
}

/// The server side of TLS, shared by every connection.
pub type TlsConfig = Arc<rustls::ServerConfig>;

/// Reads a PEM certificate chain (leaf first) and a PEM private key
/// (PKCS#8, PKCS#1 or SEC1).
pub fn load(cert: &Path, key: &Path) -> Result<TlsConfig, TlsError> {
    let read = |what, path: &Path| {
        std::fs::read(path).map_err(|source| TlsError::Read {
            what,
            path: path.to_owned(),
            source,
        })
    };
    let pem = |what, path: &Path, message: String| TlsError::Pem {
        what,
        path: path.to_owned(),
        message,
    };
    let cert_pem = read("certificate", cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem("certificate", cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(pem(
            "certificate",
            cert,
            "no CERTIFICATE section".to_owned(),
        ));
    }
    let key_pem = read("key", key)?;
    let key_der = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        pem(
            "key",
            key,
            match e {
                rustls_pki_types::pem::Error::NoItemsFound => "no PRIVATE KEY section".to_owned(),
                e => e.to_string(),
            },
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Rejected)?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(TlsError::Rejected)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
