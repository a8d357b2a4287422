//! The one error type of the Redfish client, `RedfishError`, and its retry classification.
//!
//! Owns the error variants (structured fields: which BMC, which URL, which HTTP status or cause)
//! and `is_transient()`. It must not perform I/O, decide retry *policy* (that is the activities'
//! job) or ever carry credentials: no variant has a field for a password or a session token.

use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong talking to one BMC.
///
/// Every variant names the BMC (`bmc`, the address the client was built with) and, where a request
/// was involved, the URL and the HTTP status or transport cause.
#[derive(Debug, thiserror::Error)]
pub enum RedfishError {
    /// The endpoint address could not be turned into a base URL.
    #[error("BMC {bmc}: invalid address: {reason}")]
    InvalidAddress { bmc: String, reason: String },

    /// The HTTP client could not be built (TLS backend, options).
    #[error("BMC {bmc}: could not build the HTTP client: {cause}")]
    ClientBuild { bmc: String, cause: String },

    /// No TCP/TLS connection could be made (refused, unreachable, DNS, connect timeout).
    #[error("BMC {bmc}: {method} {url}: cannot connect: {cause}")]
    Connect { bmc: String, method: String, url: String, cause: String },

    /// The request was sent but no complete answer arrived within the request timeout.
    #[error("BMC {bmc}: {method} {url}: timed out after {timeout:?}: {cause}")]
    Timeout { bmc: String, method: String, url: String, timeout: Duration, cause: String },

    /// The BMC's TLS certificate could not be verified (unknown issuer, wrong name, expired).
    /// Not transient: retrying cannot help until the site trusts the right CA or opts out.
    #[error("BMC {bmc}: {method} {url}: the BMC's TLS certificate could not be verified ({cause}); trust the CA that signed it with `[redfish] ca_bundle`, or set `[redfish] insecure_skip_verify = true` for a site whose BMCs have self-signed certificates")]
    Certificate { bmc: String, method: String, url: String, cause: String },

    /// The connection broke during the exchange (reset, EOF, malformed HTTP).
    #[error("BMC {bmc}: {method} {url}: transport error: {cause}")]
    Transport { bmc: String, method: String, url: String, cause: String },

    /// The BMC rejected the credentials (HTTP 401, or 403 on a login).
    #[error("BMC {bmc}: {method} {url}: authentication failed (HTTP {status}); check the BMC username and password{}", fmt_message(.message))]
    Unauthorized { bmc: String, method: String, url: String, status: u16, message: String },

    /// Any other non-success HTTP status. `message` holds the BMC's own explanation
    /// (`error.message` and `@Message.ExtendedInfo`), when it gave one.
    #[error("BMC {bmc}: {method} {url}: HTTP {status}{}", fmt_message(.message))]
    Http {
        bmc: String,
        method: String,
        url: String,
        status: u16,
        message: String,
        /// The `Retry-After` the BMC sent with the error (503, 429), when it sent one.
        retry_after: Option<Duration>,
    },

    /// The BMC answered 2xx but the body is not the JSON document expected.
    #[error("BMC {bmc}: GET {url}: cannot parse the response: {cause}")]
    Parse { bmc: String, url: String, cause: String },

    /// A document lacks a link or property the operation needs (e.g. no `Systems` in the root).
    #[error("BMC {bmc}: {url}: missing {what}")]
    Missing { bmc: String, url: String, what: String },

    /// A link in the BMC's answer (an `@odata.id`, a `Location` or task monitor, a next page, an
    /// action target, a redirect) names another origin than the registered BMC, or is written in
    /// a spelling a URL parser may read as one (`//host`, a backslash, a control character).
    /// Nothing was sent to it: credentials go only to the BMC's own scheme, host and port.
    /// Not transient: the same BMC answers the same link again.
    #[error("BMC {bmc}: {url}: refused the link {link:?}: {reason}; credentials go only to the registered BMC, so nothing was sent")]
    ForeignLink { bmc: String, url: String, link: String, reason: String },

    /// The BMC does not offer what the operation needs (e.g. only SimpleUpdate and no image URI).
    #[error("BMC {bmc}: {url}: unsupported: {what}")]
    Unsupported { bmc: String, url: String, what: String },

    /// None of the wanted ResetTypes (the caller's preferences) is among the values the BMC
    /// advertises for the action.
    #[error("BMC {bmc}: {url}: {}; allowed values: {}", fmt_wanted(.wanted), .allowed.join(", "))]
    ResetTypeNotAllowed { bmc: String, url: String, wanted: Vec<String>, allowed: Vec<String> },

    /// A reset answered with a Task, and the Task ended without completing (`Exception`,
    /// `Killed`, `Cancelled`, `Interrupted`, or Completed with a Critical status). `url` is the
    /// task monitor; `messages` are the Task's, as `"MessageId: Message"`.
    #[error("BMC {bmc}: {url}: the {reset_type} reset failed: its task ended {state:?}{}{}", fmt_status(.status), fmt_messages(.messages))]
    ResetTaskFailed {
        bmc: String,
        url: String,
        reset_type: String,
        state: crate::task::TaskFinal,
        status: Option<String>,
        messages: Vec<String>,
    },

    /// A property value is not among the values the BMC advertises for it
    /// (`<Property>@Redfish.AllowableValues`), e.g. a boot override target.
    #[error("BMC {bmc}: {url}: {property} {value:?} is not allowed; allowed values: {}", .allowed.join(", "))]
    ValueNotAllowed { bmc: String, url: String, property: String, value: String, allowed: Vec<String> },

    /// The firmware image file could not be read.
    #[error("BMC {bmc}: firmware image {}: {cause}", .path.display())]
    File { bmc: String, path: PathBuf, cause: String },

    /// The firmware image is empty; an empty upload is never sent.
    #[error("BMC {bmc}: firmware image {} is empty (0 bytes); refusing to upload it", .path.display())]
    EmptyImage { bmc: String, path: PathBuf },

    /// The firmware image is larger than the BMC's `MaxImageSizeBytes`.
    #[error("BMC {bmc}: {url}: firmware image {} is {size} bytes, larger than the BMC's MaxImageSizeBytes {max}", .path.display())]
    ImageTooLarge { bmc: String, url: String, path: PathBuf, size: u64, max: u64 },

    /// A task did not reach a final state within the wait timeout.
    #[error("BMC {bmc}: task monitor {url}: no final state after {waited:?} (last state: {last_state}){}", fmt_last_error(.last_error))]
    TaskTimeout { bmc: String, url: String, waited: Duration, last_state: String, last_error: Option<String> },

    /// The reply body was larger than the client's bound (`[redfish] max_response_bytes`);
    /// reading stopped there. Not transient: a BMC that answers this much will do it again.
    #[error("BMC {bmc}: {method} {url}: reply body larger than the limit of {limit} bytes{}; stopped reading (raise [redfish] max_response_bytes if this BMC's documents really are this big)", fmt_declared(.declared))]
    BodyTooLarge {
        bmc: String,
        method: String,
        url: String,
        limit: u64,
        /// The `Content-Length` the BMC declared, when it declared one.
        declared: Option<u64>,
    },

    /// A conditional write (`If-Match`) was refused with 412/428 and still was after re-reading
    /// the resource once and retrying with its fresh ETag (or the resource serves no ETag to
    /// retry with). Not transient: someone else keeps changing it, or its ETags are unusable.
    #[error("BMC {bmc}: {method} {url}: HTTP {status}: precondition failed on {resource} (If-Match {}, then {}); not retried again{}", fmt_etag(.sent), fmt_fresh(.fresh), fmt_message(.message))]
    PreconditionFailed {
        bmc: String,
        method: String,
        url: String,
        status: u16,
        /// The resource whose ETag guards the write (the PATCHed one, or the action's owner).
        resource: String,
        /// The ETag sent first (`None`: none was served, so none was sent).
        sent: Option<String>,
        /// The ETag read again after the refusal (`None`: the resource serves none).
        fresh: Option<String>,
        message: String,
    },

    /// The BMC did not come back (ServiceRoot plus an authenticated GET) within the timeout.
    #[error("BMC {bmc}: {url}: not reachable after {waited:?}: {last_error}")]
    NotReachable { bmc: String, url: String, waited: Duration, last_error: String },
}

fn fmt_message(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

fn fmt_wanted(wanted: &[String]) -> String {
    match wanted {
        [] => "no ResetType was asked for".into(),
        [one] => format!("ResetType {one:?} is not allowed"),
        many => format!(
            "none of the ResetTypes {} is allowed",
            many.iter().map(|w| format!("{w:?}")).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn fmt_status(status: &Option<String>) -> String {
    match status {
        Some(s) => format!(" (TaskStatus {s})"),
        None => String::new(),
    }
}

fn fmt_messages(messages: &[String]) -> String {
    if messages.is_empty() {
        String::new()
    } else {
        format!(": {}", messages.join("; "))
    }
}

fn fmt_etag(etag: &Option<String>) -> String {
    match etag {
        Some(e) => e.clone(),
        None => "not sent: no ETag served".into(),
    }
}

fn fmt_fresh(fresh: &Option<String>) -> String {
    match fresh {
        Some(e) => format!("re-read the resource and retried once with If-Match {e}"),
        None => "re-read the resource, which serves no ETag to retry with".into(),
    }
}

fn fmt_declared(declared: &Option<u64>) -> String {
    match declared {
        Some(n) => format!(" (Content-Length {n})"),
        None => String::new(),
    }
}

fn fmt_last_error(last_error: &Option<String>) -> String {
    match last_error {
        Some(e) => format!("; last error: {e}"),
        None => String::new(),
    }
}

impl RedfishError {
    /// Whether retrying the same operation later can reasonably succeed without anyone changing
    /// anything: connection failures, timeouts, broken connections, HTTP 5xx, 408 and 429, and a
    /// BMC that has not come back yet. Unverifiable TLS certificates, client errors (4xx, bad
    /// credentials), oversized replies, unparseable
    /// documents, missing links, refused arguments and local file problems are not transient.
    pub fn is_transient(&self) -> bool {
        match self {
            RedfishError::Connect { .. }
            | RedfishError::Timeout { .. }
            | RedfishError::Transport { .. }
            | RedfishError::NotReachable { .. } => true,
            RedfishError::Http { status, .. } => *status >= 500 || *status == 429 || *status == 408,
            // The BMC took the reset and could not carry it out this time (a DGX's IPMI power
            // change fails intermittently): a later attempt, bounded by the caller's retry
            // policy, may succeed. A task someone cancelled or killed on purpose will not.
            RedfishError::ResetTaskFailed { state, .. } => {
                !matches!(state, crate::task::TaskFinal::Cancelled | crate::task::TaskFinal::Killed)
            }
            RedfishError::InvalidAddress { .. }
            | RedfishError::ClientBuild { .. }
            | RedfishError::Certificate { .. }
            | RedfishError::Unauthorized { .. }
            | RedfishError::Parse { .. }
            | RedfishError::Missing { .. }
            | RedfishError::ForeignLink { .. }
            | RedfishError::Unsupported { .. }
            | RedfishError::ResetTypeNotAllowed { .. }
            | RedfishError::ValueNotAllowed { .. }
            | RedfishError::File { .. }
            | RedfishError::EmptyImage { .. }
            | RedfishError::ImageTooLarge { .. }
            | RedfishError::BodyTooLarge { .. }
            | RedfishError::PreconditionFailed { .. }
            | RedfishError::TaskTimeout { .. } => false,
        }
    }

    /// The BMC this error is about (the address the client was built with).
    pub fn bmc(&self) -> &str {
        match self {
            RedfishError::InvalidAddress { bmc, .. }
            | RedfishError::ClientBuild { bmc, .. }
            | RedfishError::Connect { bmc, .. }
            | RedfishError::Certificate { bmc, .. }
            | RedfishError::Timeout { bmc, .. }
            | RedfishError::Transport { bmc, .. }
            | RedfishError::Unauthorized { bmc, .. }
            | RedfishError::Http { bmc, .. }
            | RedfishError::Parse { bmc, .. }
            | RedfishError::Missing { bmc, .. }
            | RedfishError::ForeignLink { bmc, .. }
            | RedfishError::Unsupported { bmc, .. }
            | RedfishError::ResetTypeNotAllowed { bmc, .. }
            | RedfishError::ResetTaskFailed { bmc, .. }
            | RedfishError::ValueNotAllowed { bmc, .. }
            | RedfishError::File { bmc, .. }
            | RedfishError::EmptyImage { bmc, .. }
            | RedfishError::ImageTooLarge { bmc, .. }
            | RedfishError::BodyTooLarge { bmc, .. }
            | RedfishError::PreconditionFailed { bmc, .. }
            | RedfishError::TaskTimeout { bmc, .. }
            | RedfishError::NotReachable { bmc, .. } => bmc,
        }
    }

    /// The HTTP status the BMC answered with, when the error is an HTTP answer.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            RedfishError::Http { status, .. }
            | RedfishError::Unauthorized { status, .. }
            | RedfishError::PreconditionFailed { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The `Retry-After` hint carried by an HTTP error (503/429), when the BMC sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            RedfishError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> RedfishError {
        RedfishError::Http {
            bmc: "10.0.0.1:443".into(),
            method: "GET".into(),
            url: "https://10.0.0.1/redfish/v1/".into(),
            status,
            message: String::new(),
            retry_after: None,
        }
    }

    #[test]
    fn transient_classification() {
        assert!(http(500).is_transient());
        assert!(http(503).is_transient());
        assert!(http(429).is_transient());
        assert!(!http(400).is_transient());
        assert!(!http(404).is_transient());
        assert!(RedfishError::Connect {
            bmc: "b".into(),
            method: "GET".into(),
            url: "u".into(),
            cause: "refused".into()
        }
        .is_transient());
        assert!(!RedfishError::Parse { bmc: "b".into(), url: "u".into(), cause: "x".into() }.is_transient());
        assert!(!RedfishError::Unauthorized {
            bmc: "b".into(),
            method: "GET".into(),
            url: "u".into(),
            status: 401,
            message: String::new()
        }
        .is_transient());
    }

    #[test]
    fn failed_reset_tasks_name_the_messages_and_only_deliberate_stops_are_permanent() {
        let failed = |state| RedfishError::ResetTaskFailed {
            bmc: "b".into(),
            url: "http://b/redfish/v1/TaskService/Tasks/3".into(),
            reset_type: "ForceRestart".into(),
            state,
            status: Some("OK".into()),
            messages: vec!["Base.1.12.ActionNotSupported: power state of chassis did not change".into()],
        };
        let e = failed(crate::task::TaskFinal::Exception);
        assert!(e.is_transient());
        let s = e.to_string();
        for part in ["ForceRestart", "Exception", "Tasks/3", "power state of chassis did not change"] {
            assert!(s.contains(part), "{part:?} missing from: {s}");
        }
        assert!(!failed(crate::task::TaskFinal::Cancelled).is_transient());
        assert!(!failed(crate::task::TaskFinal::Killed).is_transient());
    }

    #[test]
    fn certificate_errors_are_permanent_and_say_how_to_fix() {
        let e = RedfishError::Certificate {
            bmc: "https://10.0.0.7".into(),
            method: "GET".into(),
            url: "https://10.0.0.7/redfish/v1/".into(),
            cause: "invalid peer certificate: UnknownIssuer".into(),
        };
        assert!(!e.is_transient());
        assert_eq!(e.bmc(), "https://10.0.0.7");
        let s = e.to_string();
        for part in [
            "https://10.0.0.7",
            "certificate could not be verified",
            "UnknownIssuer",
            "[redfish] ca_bundle",
            "insecure_skip_verify",
        ] {
            assert!(s.contains(part), "{part:?} missing from: {s}");
        }
    }

    #[test]
    fn display_names_bmc_url_and_status() {
        let e = http(503);
        let s = e.to_string();
        assert!(s.contains("10.0.0.1:443"), "{s}");
        assert!(s.contains("https://10.0.0.1/redfish/v1/"), "{s}");
        assert!(s.contains("503"), "{s}");
        let e = RedfishError::ResetTypeNotAllowed {
            bmc: "b".into(),
            url: "u".into(),
            wanted: vec!["Bogus".into()],
            allowed: vec!["On".into(), "ForceOff".into()],
        };
        assert!(e.to_string().contains("On, ForceOff"));
        assert!(e.to_string().contains(r#"ResetType "Bogus" is not allowed"#), "{e}");
        let e = RedfishError::ResetTypeNotAllowed {
            bmc: "b".into(),
            url: "u".into(),
            wanted: vec!["ForceRestart".into(), "GracefulRestart".into()],
            allowed: vec!["On".into()],
        };
        assert!(
            e.to_string()
                .contains(r#"none of the ResetTypes "ForceRestart", "GracefulRestart" is allowed; allowed values: On"#),
            "{e}"
        );
    }
}
