//! ETags and conditional writes: `If-Match` on PATCH and on actions.
//!
//! Owns `Fetched` (a document with the URL and ETag it was read with), reading a reply's ETag
//! (the `ETag` header, else the body's `@odata.etag`), and the conditional PATCH/POST: when the
//! resource written (or the resource owning the action) served an ETag, `If-Match: <etag>` is
//! sent; where none was served, none is sent. A `412 Precondition Failed` (or `428 Precondition
//! Required`) means the resource changed since it was read: it is read once more and the write
//! is *decided again* from what it now says (the caller's `redecide`: the same or another body,
//! nothing at all when the resource already is as wanted, or a refusal when the write no longer
//! makes sense), and only then sent with the fresh ETag, once; a second refusal is
//! `RedfishError::PreconditionFailed`. Re-sending the first body unchanged with the new ETag
//! would make `If-Match` protect nothing. It must not know which resources exist or build a URI:
//! every URL comes from the caller, which read it from a link.

use reqwest::header::{HeaderValue, CONTENT_TYPE, ETAG, IF_MATCH};
use reqwest::{Method, RequestBuilder};
use serde::de::DeserializeOwned;
use serde_json::Value;
use url::Url;

use crate::client::{Auth, RedfishClient, Reply};
use crate::error::RedfishError;

/// A document as read: where from, what, and the ETag it was served with (if any).
#[derive(Debug, Clone)]
pub(crate) struct Fetched<T> {
    pub url: Url,
    pub doc: T,
    pub etag: Option<String>,
}

impl Reply {
    /// The resource's ETag: the `ETag` header, else the body's `@odata.etag`; verbatim (quotes
    /// and a `W/` prefix included, as `If-Match` wants it back).
    pub(crate) fn etag(&self) -> Option<String> {
        self.header(ETAG).or_else(|| {
            self.json_value()?.get("@odata.etag")?.as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
        })
    }
}

/// What a PATCH becomes after a 412, decided from the resource as read again.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Redecided {
    /// Send this body (with the fresh ETag).
    Write(Value),
    /// The resource already is as wanted: nothing to send.
    AlreadyDone,
}

/// Decides a PATCH again from the fresh document (see the module docs).
pub(crate) type RedecidePatch<'a> = &'a (dyn Fn(&Value) -> Result<Redecided, RedfishError> + Send + Sync);

/// Decides an action again from its owner's fresh document: the body to POST (an action is
/// never "already done"), or why it must not be sent any more.
pub(crate) type RedecideAction<'a> = &'a (dyn Fn(&Value) -> Result<Value, RedfishError> + Send + Sync);

/// Whether an answer says our precondition (or its absence) was the problem.
fn precondition_refused(status: u16) -> bool {
    status == 412 || status == 428
}

impl RedfishClient {
    /// GET a JSON document with its ETag; non-2xx and unparseable bodies are errors.
    pub(crate) async fn get_fetched<T: DeserializeOwned>(&self, url: &Url) -> Result<Fetched<T>, RedfishError> {
        let reply = self.ensure_success(self.get(url).await?)?;
        Ok(Fetched { url: url.clone(), doc: reply.json(self.bmc_text())?, etag: reply.etag() })
    }

    /// PATCH `body` onto a resource read earlier, with `If-Match` when it served an ETag; after
    /// a 412 the PATCH is decided again by `redecide` from the resource read once more (see the
    /// module docs). `Ok(false)`: the fresh resource already was as wanted, nothing was sent
    /// again. Non-2xx is an error.
    pub(crate) async fn patch_resource<T>(
        &self,
        resource: &Fetched<T>,
        body: &Value,
        redecide: RedecidePatch<'_>,
    ) -> Result<bool, RedfishError> {
        let (url, etag) = (&resource.url, resource.etag.as_deref());
        let reply = self.send_json_if_match(&Method::PATCH, url, etag, body).await?;
        if !precondition_refused(reply.status) {
            self.ensure_success(reply)?;
            return Ok(true);
        }
        let (fresh_doc, fresh) = self.reread(&reply, url, etag).await?;
        let body = match redecide(&fresh_doc)? {
            Redecided::AlreadyDone => {
                tracing::info!(bmc = %self.address(), %url, status = reply.status, "precondition refused; the resource read again already is as wanted");
                return Ok(false);
            }
            Redecided::Write(body) => body,
        };
        tracing::info!(bmc = %self.address(), %url, sent = ?etag, fresh = %fresh, status = reply.status, "precondition refused; PATCH decided again and sent once with the fresh ETag");
        let retry = self.send_json_if_match(&Method::PATCH, url, Some(&fresh), &body).await?;
        if precondition_refused(retry.status) {
            return Err(self.precondition_failed(&retry, url, etag, Some(&fresh)));
        }
        self.ensure_success(retry)?;
        Ok(true)
    }

    /// POST an action to `target`, with `If-Match` when the resource owning the action
    /// (`owner`, read earlier) served an ETag; after a 412 the action is decided again by
    /// `redecide` from the owner read once more (see the module docs). Any other status is
    /// returned for the caller to judge.
    pub(crate) async fn post_action(
        &self,
        target: &Url,
        owner: &Url,
        owner_etag: Option<&str>,
        body: &Value,
        redecide: RedecideAction<'_>,
    ) -> Result<Reply, RedfishError> {
        let reply = self.send_json_if_match(&Method::POST, target, owner_etag, body).await?;
        if !precondition_refused(reply.status) {
            return Ok(reply);
        }
        let (fresh_doc, fresh) = self.reread(&reply, owner, owner_etag).await?;
        let body = redecide(&fresh_doc)?;
        tracing::info!(bmc = %self.address(), %target, sent = ?owner_etag, fresh = %fresh, status = reply.status, "precondition refused; action decided again and sent once with the fresh ETag");
        let retry = self.send_json_if_match(&Method::POST, target, Some(&fresh), &body).await?;
        if precondition_refused(retry.status) {
            return Err(self.precondition_failed(&retry, owner, owner_etag, Some(&fresh)));
        }
        Ok(retry)
    }

    /// After a refused precondition: the resource read again, as JSON, with its fresh ETag (a
    /// resource that now serves none cannot be written conditionally: `PreconditionFailed`).
    async fn reread(
        &self,
        refused: &Reply,
        resource: &Url,
        sent: Option<&str>,
    ) -> Result<(Value, String), RedfishError> {
        let reply = self.ensure_success(self.get(resource).await?)?;
        let Some(fresh) = reply.etag() else {
            return Err(self.precondition_failed(refused, resource, sent, None));
        };
        Ok((reply.json(self.bmc_text())?, fresh))
    }

    async fn send_json_if_match(
        &self,
        method: &Method,
        url: &Url,
        etag: Option<&str>,
        body: &Value,
    ) -> Result<Reply, RedfishError> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let if_match = match etag {
            Some(e) => Some(HeaderValue::from_str(e).map_err(|_| RedfishError::Parse {
                bmc: self.bmc(),
                url: url.to_string(),
                cause: format!("the ETag {e:?} cannot be sent back in an If-Match header"),
            })?),
            None => None,
        };
        let build = move |rb: RequestBuilder| {
            let rb = rb.header(CONTENT_TYPE, "application/json");
            let rb = match &if_match {
                Some(v) => rb.header(IF_MATCH, v.clone()),
                None => rb,
            };
            Ok(rb.body(bytes.clone()))
        };
        self.send(method.clone(), url, &build, Auth::Default).await
    }

    fn precondition_failed(
        &self,
        reply: &Reply,
        resource: &Url,
        sent: Option<&str>,
        fresh: Option<&str>,
    ) -> RedfishError {
        RedfishError::PreconditionFailed {
            bmc: self.bmc(),
            method: reply.method.to_string(),
            url: reply.url.to_string(),
            status: reply.status,
            resource: resource.to_string(),
            sent: sent.map(str::to_string),
            fresh: fresh.map(str::to_string),
            message: reply.error_message(),
        }
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderMap;

    use super::*;

    fn reply(etag_header: Option<&str>, body: &str) -> Reply {
        let mut headers = HeaderMap::new();
        if let Some(e) = etag_header {
            headers.insert(ETAG, e.parse().unwrap());
        }
        Reply {
            method: Method::GET,
            url: Url::parse("http://x/redfish/v1/Systems/1").unwrap(),
            status: 200,
            headers,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn etag_from_header_or_body() {
        assert_eq!(
            reply(Some("W/\"h1\""), r#"{"@odata.etag":"\"b1\""}"#).etag().as_deref(),
            Some("W/\"h1\""),
            "the header wins"
        );
        assert_eq!(reply(None, r#"{"@odata.etag":"\"b1\""}"#).etag().as_deref(), Some("\"b1\""));
        assert_eq!(reply(None, r#"{"@odata.etag":""}"#).etag(), None);
        assert_eq!(reply(None, r#"{"Id":"1"}"#).etag(), None);
        assert_eq!(reply(None, "").etag(), None);
    }
}
