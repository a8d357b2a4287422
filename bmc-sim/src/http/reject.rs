//! Refusing a request whose body is still unread (an upload, an action): [`reject`] reads and
//! throws away a bounded amount of the body first, so the client sees the Redfish error instead
//! of a connection reset. Decides nothing about WHEN to refuse (the routes and the fault
//! middleware do); the error's shape is `error`.

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use crate::http::error::RedfishError;

/// Most bytes read (and thrown away) from a rejected upload so the client sees our answer
/// instead of a connection reset.
const DRAIN_LIMIT: u64 = 64 << 20;

/// Answer `err` after reading (a bounded amount of) the request body.
pub async fn reject(req: Request, err: RedfishError) -> Response {
    drain(req.into_body()).await;
    err.into_response()
}

async fn drain(body: Body) {
    let mut seen = 0u64;
    let mut stream = body.into_data_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        seen += chunk.len() as u64;
        if seen > DRAIN_LIMIT {
            break;
        }
    }
}
