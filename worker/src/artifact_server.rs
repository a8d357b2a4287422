//! A small HTTP server for firmware artifacts and Scout scripts, reachable only through signed,
//! expiring URLs (`hostfw_activities::artifact_url`): BMCs that only support `SimpleUpdate` fetch
//! images from `GET /a/<expiry>/<mac>/artifacts/<path under the firmware directory>`, and Scout
//! agents fetch artifacts there and packaged scripts from
//! `GET /a/<expiry>/<mac>/scout-scripts/<path under the Scout scripts directory>`.
//!
//! Answers: 403 with a short reason for a bad or malformed signature, 410 for an expired link, 404
//! for anything else (the unsigned `/artifacts/...` and `/scout-scripts/...` routes of earlier
//! versions included), 400 for a path with `..` or an absolute path. Serves only regular files
//! under those two directories, streamed from disk with their `Content-Length` (also for `HEAD`),
//! never read whole into memory.

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};

use anyhow::Context;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hostfw_activities::artifact_url::{now_unix, ArtifactUrls, UrlRefusal, ARTIFACTS_SEGMENT, SCOUT_SCRIPTS_SEGMENT};
use tokio::task::JoinHandle;
use tokio_util::io::ReaderStream;

/// Bytes read from an artifact per chunk of the response.
const STREAM_CHUNK: usize = 64 * 1024;

#[derive(Clone)]
struct Roots {
    artifacts: PathBuf,
    scout_scripts: PathBuf,
    urls: ArtifactUrls,
}

async fn signed(
    State(roots): State<Roots>,
    UrlPath((expiry, mac, path)): UrlPath<(String, String, String)>,
) -> Response {
    match roots.urls.check(&expiry, &mac, &path, now_unix()) {
        Ok(()) => {}
        Err(e @ UrlRefusal::Expired { .. }) => return (StatusCode::GONE, e.to_string()).into_response(),
        Err(e) => return (StatusCode::FORBIDDEN, e.to_string()).into_response(),
    }
    let (segment, rel) = path.split_once('/').unwrap_or((path.as_str(), ""));
    match segment {
        ARTIFACTS_SEGMENT => serve(&roots.artifacts, rel).await,
        SCOUT_SCRIPTS_SEGMENT => serve(&roots.scout_scripts, rel).await,
        _ => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

async fn serve(root: &Path, rel: &str) -> Response {
    let rel_path = Path::new(rel);
    if rel.is_empty() || rel_path.components().any(|c| !matches!(c, Component::Normal(_))) {
        return (StatusCode::BAD_REQUEST, "path must stay inside the served directory").into_response();
    }
    let path = root.join(rel_path);
    let not_found = || (StatusCode::NOT_FOUND, format!("no artifact {rel}")).into_response();
    let Ok(file) = tokio::fs::File::open(&path).await else { return not_found() };
    let Ok(meta) = file.metadata().await else { return not_found() };
    if !meta.is_file() {
        return not_found();
    }
    // Streamed in chunks: a firmware image of gigabytes costs one read buffer, not its size in
    // memory per fetching BMC.
    let body = Body::from_stream(ReaderStream::with_capacity(file, STREAM_CHUNK));
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_LENGTH, meta.len().to_string()),
        ],
        body,
    )
        .into_response()
}

/// Serve `root` (firmware artifacts) and `scout_scripts` on `listen` (port 0 picks one) to
/// requests signed by `urls`; returns the bound address and the server task.
pub async fn serve_artifacts(
    root: PathBuf,
    scout_scripts: PathBuf,
    listen: &str,
    urls: ArtifactUrls,
) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("artifact server cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let app = Router::new().route("/a/{expiry}/{mac}/{*path}", get(signed)).with_state(Roots {
        artifacts: root,
        scout_scripts,
        urls,
    });
    let handle = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "artifact server stopped");
        }
    });
    Ok((addr, handle))
}
