//! The accept loop. Not `axum::serve`: it sets no header read timeout, so
//! a client trickling its headers a byte a second would hold a
//! connection forever. Each connection is HTTP/1.1 with keep-alive, a
//! header read timeout and a bound on open connections; over TLS when
//! [`HttpOptions::tls`] is set (the handshake bounded by the header
//! timeout too, so a client that never finishes it is cut off).

use super::{HttpError, HttpOptions, Ports, router_with};
use crate::driver::Handle;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::JoinHandle;

/// How long a shutdown waits for requests in progress (a long-poll, an
/// event stream) before it closes their connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A running listener.
#[derive(Debug)]
pub struct HttpServer {
    address: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl HttpServer {
    /// Binds `address` (port 0 picks a free one) and serves `handle`'s
    /// engine until [`HttpServer::shutdown`].
    pub async fn bind(
        address: SocketAddr,
        handle: Handle,
        options: HttpOptions,
    ) -> Result<HttpServer, HttpError> {
        HttpServer::bind_with(address, Ports::embedded(&handle), options).await
    }

    /// [`HttpServer::bind`] over other ports. Refuses a non-loopback
    /// address without tokens unless `options.insecure_no_auth`.
    pub async fn bind_with(
        address: SocketAddr,
        ports: Ports,
        options: HttpOptions,
    ) -> Result<HttpServer, HttpError> {
        if !options.tokens.enabled() && !address.ip().is_loopback() && !options.insecure_no_auth {
            return Err(HttpError::Unprotected(address));
        }
        let bind_err = |source| HttpError::Bind { address, source };
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(bind_err)?;
        let address = listener.local_addr().map_err(bind_err)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let header_timeout = options.header_timeout;
        let connections = Arc::new(Semaphore::new(options.max_connections.max(1)));
        let auth = options.tokens.enabled();
        let tls = options.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        let https = tls.is_some();
        let app = router_with(ports, options);
        let task = tokio::spawn(accept_loop(
            listener,
            app,
            Limits {
                header_timeout,
                connections,
                tls,
            },
            stopped,
        ));
        // The target users filter on (`CHIME_LOG=chime_native::http=…`).
        tracing::info!(target: "chime_native::http", %address, auth, tls = https, "HTTP listener up (/healthz, /metrics, /v1)");
        Ok(HttpServer {
            address,
            stop,
            task,
        })
    }

    /// The bound address (with the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting, lets requests in progress finish (for up to two
    /// seconds), and returns.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        if let Err(e) = self.task.await {
            tracing::warn!(error = %e, "HTTP listener task failed");
        }
    }
}

/// What every connection is held to.
struct Limits {
    header_timeout: Duration,
    connections: Arc<Semaphore>,
    /// Set: every connection is TLS.
    tls: Option<tokio_rustls::TlsAcceptor>,
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    limits: Limits,
    mut stopped: oneshot::Receiver<()>,
) {
    let Limits {
        header_timeout,
        connections,
        tls,
    } = limits;
    let (closing, closing_rx) = watch::channel(false);
    loop {
        let permit = tokio::select! {
            _ = &mut stopped => break,
            p = connections.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, _peer) = tokio::select! {
            _ = &mut stopped => break,
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    // Out of descriptors and the like: pause, go on.
                    tracing::warn!(error = %e, "accepting an HTTP connection");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let closing = closing_rx.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let Some(tls) = tls else {
                return serve(stream, service, header_timeout, closing).await;
            };
            match tokio::time::timeout(header_timeout, tls.accept(stream)).await {
                Ok(Ok(stream)) => serve(stream, service, header_timeout, closing).await,
                // Plain HTTP to a TLS port, a bad client: nothing to answer.
                Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!("TLS handshake timed out"),
            }
        });
    }
    let _ = closing.send(true);
    // Every connection task holds a receiver: all gone, all done. The
    // loop's own receiver goes first, or `closed()` would wait out the
    // whole timeout on every stop.
    drop(closing_rx);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE * 2, closing.closed()).await;
}

/// One HTTP/1.1 connection, until it closes or the listener stops.
async fn serve<IO>(
    io: IO,
    service: TowerToHyperService<axum::Router>,
    header_timeout: Duration,
    mut closing: watch::Receiver<bool>,
) where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = closing.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, conn.as_mut()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stop with no connection open ends at once: the loop must not
    /// wait on its own receiver of the closing signal (it did, for
    /// `2 × SHUTDOWN_GRACE`, on every Ctrl-C of the daemon).
    #[tokio::test(start_paused = true)]
    async fn a_stop_without_connections_ends_at_once() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept_loop(
            listener,
            axum::Router::new(),
            Limits {
                header_timeout: Duration::from_secs(5),
                connections: Arc::new(Semaphore::new(4)),
                tls: None,
            },
            stopped,
        ));
        let start = tokio::time::Instant::now();
        stop.send(()).unwrap();
        task.await.unwrap();
        assert!(
            start.elapsed() < SHUTDOWN_GRACE,
            "took {:?} of virtual time",
            start.elapsed()
        );
    }
}
