//! A small HTTP server for firmware artifacts and Scout scripts: BMCs that only support
//! `SimpleUpdate` fetch images from `GET /artifacts/<path under the firmware directory>`, and
//! Scout agents fetch artifacts there and packaged scripts from
//! `GET /scout-scripts/<path under the Scout scripts directory>`.
//!
//! Serves only regular files under those two directories; `..` and absolute paths are refused.

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};

use anyhow::Context;
use axum::extract::{Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::task::JoinHandle;

#[derive(Clone)]
struct Roots {
    artifacts: PathBuf,
    scout_scripts: PathBuf,
}

async fn artifact(State(roots): State<Roots>, UrlPath(rel): UrlPath<String>) -> Response {
    serve(&roots.artifacts, &rel).await
}

async fn scout_script(State(roots): State<Roots>, UrlPath(rel): UrlPath<String>) -> Response {
    serve(&roots.scout_scripts, &rel).await
}

async fn serve(root: &Path, rel: &str) -> Response {
    let rel_path = Path::new(rel);
    if rel_path.components().any(|c| !matches!(c, Component::Normal(_))) {
        return (StatusCode::BAD_REQUEST, "path must stay inside the firmware directory").into_response();
    }
    let path = root.join(rel_path);
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, format!("no artifact {rel}")).into_response(),
    }
}

/// Serve `root` (firmware artifacts) and `scout_scripts` on `listen` (port 0 picks one); returns
/// the bound address and the server task.
pub async fn serve_artifacts(
    root: PathBuf,
    scout_scripts: PathBuf,
    listen: &str,
) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("artifact server cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let app = Router::new()
        .route("/artifacts/{*path}", get(artifact))
        .route("/scout-scripts/{*path}", get(scout_script))
        .with_state(Roots { artifacts: root, scout_scripts });
    let handle = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "artifact server stopped");
        }
    });
    Ok((addr, handle))
}
