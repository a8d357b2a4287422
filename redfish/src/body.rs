//! Reading a reply body incrementally, up to a bound.
//!
//! Owns `read_bounded`: a declared `Content-Length` over the bound is refused before anything is
//! read, and a body that keeps coming (no length, or more than it declared) is cut off as soon as
//! it passes the bound, so one BMC streaming without end cannot take the process's memory. It
//! must not know Redfish or build errors naming a BMC (the client does that).

/// Why a body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The body is larger than the bound; `declared` is its `Content-Length`, when it gave one.
    TooLarge { declared: Option<u64> },
    /// The connection failed while reading.
    Transport(reqwest::Error),
}

/// The whole body of `resp`, at most `limit` bytes; reading stops at the first chunk past it.
pub(crate) async fn read_bounded(mut resp: reqwest::Response, limit: u64) -> Result<Vec<u8>, BodyError> {
    let declared = resp.content_length();
    if declared.is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge { declared });
    }
    let expected = declared.unwrap_or(0).min(limit);
    let mut body = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Transport)? {
        if (body.len() + chunk.len()) as u64 > limit {
            // Dropping the response closes the connection: the rest is never read.
            return Err(BodyError::TooLarge { declared });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
