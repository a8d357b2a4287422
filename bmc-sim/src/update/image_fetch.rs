//! Fetching a SimpleUpdate `ImageURI` over HTTP(S), streamed into an [`ImageSink`].
//! Returns why a fetch failed; does not touch tasks or host state.

use hostfw_model::error_chain;

use crate::update::image::{ImageSink, ReceivedImage, MAX_IMAGE_BYTES};

/// Why an image could not be fetched; its text is the task message's reason.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The request or the body read failed (the text has the whole cause chain).
    #[error("{0}")]
    Transfer(String),
    #[error("HTTP {status} from {uri}")]
    Status { status: reqwest::StatusCode, uri: String },
    #[error("image exceeds MaxImageSizeBytes ({MAX_IMAGE_BYTES})")]
    TooLarge,
}

/// Download `uri` and keep only what the simulator needs (first line, size).
pub async fn fetch_image(http: &reqwest::Client, uri: &str) -> Result<ReceivedImage, FetchError> {
    let transfer = |e: reqwest::Error| FetchError::Transfer(error_chain(&e));
    let mut resp = http.get(uri).send().await.map_err(transfer)?;
    let status = resp.status();
    if !status.is_success() {
        return Err(FetchError::Status { status, uri: uri.to_string() });
    }
    let mut sink = ImageSink::new();
    while let Some(chunk) = resp.chunk().await.map_err(transfer)? {
        sink.push(&chunk).map_err(|_| FetchError::TooLarge)?;
    }
    Ok(sink.finish())
}
