//! The socket life of one simulated BMC: accept connections (TLS handshake first in a
//! `tls = true` fleet), serve them with the host's router, and on Manager.Reset (or while the
//! `unreachable_for_secs` fault holds) close the listener AND every live connection for a
//! while, then bind the same address again. Knows nothing about Redfish resources.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::fleet::state::Host;
use crate::http::router::normalize_path;
use crate::power::resets::{bmc_back_up, bmc_going_down};

/// Pause after a failed accept (e.g. out of file descriptors) or a failed re-bind.
const RETRY_PAUSE: Duration = Duration::from_millis(100);
/// Bound on a TLS handshake, so a silent client cannot hold a connection slot forever.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Run one BMC until `shutdown` flips to true or its sender is dropped.
pub(crate) async fn serve(
    host: Arc<Host>,
    listener: TcpListener,
    router: Router,
    mut go_down: mpsc::UnboundedReceiver<Duration>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut listener = Some(listener);
    loop {
        let current = match listener.take() {
            Some(l) => l,
            None => match rebind(&host, &mut shutdown).await {
                Some(l) => l,
                None => return,
            },
        };
        match serve_until_down(&host, current, &router, &mut go_down, &mut shutdown).await {
            Stop::Shutdown => return,
            Stop::ManagerReset(down_for) => {
                bmc_going_down(&mut host.data());
                tracing::info!(host = %host.spec.id, ?down_for, "BMC down (Manager.Reset)");
                tokio::select! {
                    _ = tokio::time::sleep(down_for) => {}
                    _ = shutdown.changed() => return,
                }
                bmc_back_up(&mut host.data());
                tracing::info!(host = %host.spec.id, "BMC back up");
            }
            Stop::Unreachable => {
                tracing::info!(host = %host.spec.id, "BMC unreachable (fault)");
                if !wait_while_unreachable(&host, &mut shutdown).await {
                    return;
                }
                tracing::info!(host = %host.spec.id, "BMC reachable again");
            }
        }
    }
}

/// Why serving stopped.
enum Stop {
    Shutdown,
    /// Down for this long, as after a Manager.Reset.
    ManagerReset(Duration),
    /// Off the network until `unreachable_until` passes.
    Unreachable,
}

/// Whether an `unreachable_for_secs` outage is in force now.
fn outage_in_force(host: &Host) -> bool {
    host.data().unreachable_until.is_some_and(|t| t > tokio::time::Instant::now())
}

/// Wait out an outage (it may be extended, shortened or ended by a new fault set); `false`
/// when the fleet shuts down meanwhile. Clears the consumed `unreachable_for_secs`.
async fn wait_while_unreachable(host: &Host, shutdown: &mut watch::Receiver<bool>) -> bool {
    loop {
        let until = host.data().unreachable_until;
        let Some(until) = until.filter(|t| *t > tokio::time::Instant::now()) else {
            break;
        };
        tokio::select! {
            _ = tokio::time::sleep_until(until) => {}
            _ = host.outage.notified() => {}
            _ = shutdown.changed() => return false,
        }
    }
    let mut d = host.data();
    d.unreachable_until = None;
    d.faults.unreachable_for_secs = 0.0;
    true
}

/// Accept and serve until asked to go down or to shut down. Returning drops the listener and
/// aborts every connection.
async fn serve_until_down(
    host: &Host,
    listener: TcpListener,
    router: &Router,
    go_down: &mut mpsc::UnboundedReceiver<Duration>,
    shutdown: &mut watch::Receiver<bool>,
) -> Stop {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, host.tls.clone(), router.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
            },
            Some(down_for) = go_down.recv() => return Stop::ManagerReset(down_for),
            _ = host.outage.notified() => if outage_in_force(host) {
                return Stop::Unreachable;
            },
            _ = shutdown.changed() => return Stop::Shutdown,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Serve one connection, after a TLS handshake when the fleet serves HTTPS.
async fn serve_connection(stream: TcpStream, tls: Option<TlsAcceptor>, router: Router) {
    let _ = stream.set_nodelay(true);
    let Some(acceptor) = tls else {
        return serve_http(stream, router).await;
    };
    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls_stream)) => serve_http(tls_stream, router).await,
        // A client that does not trust our CA aborts here: normal in tests, never an error.
        Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
        Err(_) => tracing::debug!("TLS handshake timed out"),
    }
}

async fn serve_http<S>(stream: S, router: Router)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let tower = TowerToHyperService::new(router);
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| tower.call(normalize_path(req)));
    if let Err(e) = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

/// Bind the host's address again after a reset (retrying while the port is busy).
async fn rebind(host: &Host, shutdown: &mut watch::Receiver<bool>) -> Option<TcpListener> {
    let mut warned = false;
    loop {
        match TcpListener::bind(host.addr).await {
            Ok(l) => return Some(l),
            Err(e) if !warned => {
                tracing::warn!(host = %host.spec.id, addr = %host.addr, error = %e, "re-bind failed; retrying");
                warned = true;
            }
            Err(_) => {}
        }
        tokio::select! {
            _ = tokio::time::sleep(RETRY_PAUSE) => {}
            _ = shutdown.changed() => return None,
        }
    }
}
