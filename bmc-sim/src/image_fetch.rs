//! Fetching a SimpleUpdate `ImageURI` over HTTP(S), streamed into an [`ImageSink`].
//! Returns a human-readable reason on failure; does not touch tasks or host state.

use crate::image::{ImageSink, ReceivedImage, MAX_IMAGE_BYTES};

/// Download `uri` and keep only what the simulator needs (first line, size).
pub async fn fetch_image(http: &reqwest::Client, uri: &str) -> Result<ReceivedImage, String> {
    let mut resp = http.get(uri).send().await.map_err(|e| error_chain(&e))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(format!("HTTP {status} from {uri}"));
    }
    let mut sink = ImageSink::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| error_chain(&e))? {
        sink.push(&chunk).map_err(|_| format!("image exceeds MaxImageSizeBytes ({MAX_IMAGE_BYTES})"))?;
    }
    Ok(sink.finish())
}

/// `error: cause: root cause`, so a task message says WHY a fetch failed.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}
