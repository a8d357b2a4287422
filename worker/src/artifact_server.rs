//! A small HTTP server for firmware artifacts: BMCs that only support `SimpleUpdate` fetch the
//! image from here (`GET /artifacts/<path under the firmware directory>`).
//!
//! Serves only regular files under the firmware directory; `..` and absolute paths are refused.

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};

use anyhow::Context;
use axum::extract::{Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::task::JoinHandle;

async fn artifact(State(root): State<PathBuf>, UrlPath(rel): UrlPath<String>) -> Response {
    let rel_path = Path::new(&rel);
    if rel_path.components().any(|c| !matches!(c, Component::Normal(_))) {
        return (StatusCode::BAD_REQUEST, "path must stay inside the firmware directory").into_response();
    }
    let path = root.join(rel_path);
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, format!("no artifact {rel}")).into_response(),
    }
}

/// Serve `root` on `listen` (port 0 picks one); returns the bound address and the server task.
pub async fn serve_artifacts(root: PathBuf, listen: &str) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("artifact server cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let app = Router::new().route("/artifacts/{*path}", get(artifact)).with_state(root);
    let handle = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "artifact server stopped");
        }
    });
    Ok((addr, handle))
}
