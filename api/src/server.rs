//! Serving the API: bind `[api] listen`, serve plain http or https (the site's certificate), stop
//! on request. `hostfw-worker` starts one in-process; `hostfw-api` is nothing else.
//!
//! Owns the listener, the TLS handshake and the connection tasks. It must not decide access or
//! answer any route itself.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hostfw_model::SiteConfig;
use hostfw_store::Store;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::state::ApiState;

/// A TLS handshake that takes longer than this is dropped (a stalled client holds no task).
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the API did not start.
#[derive(Debug, thiserror::Error)]
pub enum ApiStartError {
    #[error("cannot listen on api.listen {listen}: {source}")]
    Bind { listen: String, source: std::io::Error },
    #[error("api TLS file {file}: {problem}")]
    Tls { file: String, problem: String },
}

/// A running API server.
pub struct ApiServer {
    /// The bound address (the port is the real one when `listen` asked for port 0).
    pub addr: SocketAddr,
    /// `https` or `http`.
    pub scheme: &'static str,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl ApiServer {
    /// Bind and serve `[api]` of `site` over `store`.
    pub async fn start(site: Arc<SiteConfig>, store: Store) -> Result<ApiServer, ApiStartError> {
        let api = &site.api;
        let tls = match (&api.tls_cert_file, &api.tls_key_file) {
            (Some(cert), Some(key)) => Some(crate::tls::acceptor(cert, key, api.client_ca_file.as_deref())?),
            _ => None,
        };
        let listener = TcpListener::bind(&api.listen)
            .await
            .map_err(|source| ApiStartError::Bind { listen: api.listen.clone(), source })?;
        let addr =
            listener.local_addr().map_err(|source| ApiStartError::Bind { listen: api.listen.clone(), source })?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let router = crate::routes::router(ApiState { site: site.clone(), store });
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    _ = stopped.changed() => break,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => { connections.spawn(serve_connection(stream, tls.clone(), router.clone())); }
                        Err(e) => tracing::warn!(error = %e, "API: accepting a connection failed"),
                    },
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
            connections.shutdown().await;
        });
        tracing::info!(url = %format!("{scheme}://{addr}/v1"), "hostfw API listening");
        Ok(ApiServer { addr, scheme, stop, task })
    }

    /// The base URL clients use (`http://127.0.0.1:9443`).
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Stop accepting and end every connection.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn serve_connection(stream: TcpStream, tls: Option<TlsAcceptor>, router: axum::Router) {
    let _ = stream.set_nodelay(true);
    let Some(acceptor) = tls else {
        return serve_http(stream, router).await;
    };
    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls_stream)) => {
            // A verified client certificate (mTLS) goes with every request of this connection.
            let cert =
                tls_stream.get_ref().1.peer_certificates().and_then(|c| c.first()).map(crate::tls::ClientCert::of);
            let router = match cert {
                Some(cert) => router.layer(axum::Extension(cert)),
                None => router,
            };
            serve_http(tls_stream, router).await
        }
        Ok(Err(e)) => tracing::debug!(error = %e, "API: TLS handshake failed"),
        Err(_) => tracing::debug!("API: TLS handshake timed out"),
    }
}

async fn serve_http<S>(stream: S, router: axum::Router)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(router);
    if let Err(e) = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await {
        tracing::debug!(error = %e, "API: connection ended with an error");
    }
}
