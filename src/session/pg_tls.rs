//! TLS to PostgreSQL with rustls (the one reqwest already uses), so a managed database
//! that requires TLS can hold the sessions. The URL's `sslmode` decides:
//! `require`, `verify-ca` and `verify-full` mean TLS or nothing, and the server's
//! certificate is always verified — against the platform's trust store, or the CA file of
//! `sslrootcert=PATH` — with its name matching the host (stricter than libpq's `require`,
//! never weaker). Without `sslmode`, or with `disable`, `allow` or `prefer`, the
//! connection is plain as before: an unverified TLS would protect nothing, and a verified
//! one would refuse the self-signed certificates local servers often have. Any other
//! value (`verify_full`, a typo) is refused: it must never quietly mean "no TLS".

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

use super::store::SessionError;

/// A connection URL as tokio-postgres reads it, and how TLS is made for it.
pub(super) struct Target {
    /// The URL without the options only this module reads.
    pub url: String,
    /// TLS settings, when `sslmode` asks for TLS.
    pub tls: Option<RustlsConnect>,
}

/// Splits `sslrootcert` off `url`, maps libpq's verifying modes to `require`, and
/// builds the TLS settings.
pub(super) fn target(url: &str) -> Result<Target, SessionError> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let mut root = None;
    let mut tls = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslrootcert", path)) => root = Some(path.to_string()),
            Some(("sslmode", "require" | "verify-ca" | "verify-full")) => {
                tls = true;
                kept.push("sslmode=require".into());
            }
            Some(("sslmode", "disable" | "allow" | "prefer")) => {
                kept.push("sslmode=disable".into());
            }
            // A misspelt mode must not quietly mean "no TLS".
            Some(("sslmode", other)) => {
                return Err(SessionError::Database(format!(
                    "sslmode={other} is not a mode: disable, allow, prefer, require, \
                     verify-ca or verify-full"
                )));
            }
            _ => kept.push(pair.to_string()),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let tls = if tls {
        Some(RustlsConnect(Arc::new(client_config(root.as_deref())?)))
    } else {
        None
    };
    Ok(Target { url, tls })
}

fn client_config(root: Option<&str>) -> Result<rustls::ClientConfig, SessionError> {
    crate::client::http::install_crypto_provider();
    let tls_error = |what: String| SessionError::Database(format!("TLS to the database: {what}"));
    match root {
        Some(path) => {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            let mut roots = rustls::RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| tls_error(format!("cannot read sslrootcert {path}: {e}")))?;
            for cert in certs {
                let cert = cert.map_err(|e| tls_error(format!("sslrootcert {path}: {e}")))?;
                roots
                    .add(cert)
                    .map_err(|e| tls_error(format!("sslrootcert {path}: {e}")))?;
            }
            Ok(rustls::ClientConfig::builder()
                .with_root_certificates(roots)
                .with_no_client_auth())
        }
        None => {
            use rustls_platform_verifier::ConfigVerifierExt;
            rustls::ClientConfig::with_platform_verifier().map_err(|e| tls_error(e.to_string()))
        }
    }
}

/// Makes a TLS connection for each PostgreSQL connection.
#[derive(Clone)]
pub(super) struct RustlsConnect(Arc<rustls::ClientConfig>);

impl<S> MakeTlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Tls<S>;
    type TlsConnect = Connector;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Connector, io::Error> {
        let name = ServerName::try_from(domain.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(Connector {
            config: Arc::clone(&self.0),
            name,
        })
    }
}

/// The TLS handshake with one server.
pub(super) struct Connector {
    config: Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
}

impl<S> TlsConnect<S> for Connector
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Tls<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Tls<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let connector = tokio_rustls::TlsConnector::from(self.config);
            connector.connect(self.name, stream).await.map(Tls)
        })
    }
}

/// A TLS stream to the server.
pub(super) struct Tls<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for Tls<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Tls<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Tls<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_options_are_read_here_and_the_rest_passed_on() {
        let t = target("postgres://u@h/db?sslmode=verify-full&application_name=x").unwrap();
        assert_eq!(
            t.url,
            "postgres://u@h/db?sslmode=require&application_name=x"
        );
        assert!(t.tls.is_some());
        let t = target("postgres://u@h/db").unwrap();
        assert_eq!(t.url, "postgres://u@h/db");
        assert!(t.tls.is_none());
        let t = target("postgres://u@h/db?sslmode=prefer").unwrap();
        assert_eq!(t.url, "postgres://u@h/db?sslmode=disable");
        assert!(t.tls.is_none());
        for bogus in ["verify_full", "bogus", "REQUIRE", ""] {
            let refused = target(&format!("postgres://u@h/db?sslmode={bogus}"));
            assert!(
                matches!(&refused, Err(SessionError::Database(m)) if m.contains("not a mode")),
                "{bogus}"
            );
        }
        let missing = target("postgres://u@h/db?sslmode=require&sslrootcert=/nonexistent/ca.pem");
        assert!(matches!(missing, Err(SessionError::Database(m)) if m.contains("sslrootcert")),);
    }
}
