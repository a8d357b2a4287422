//! Transport and authentication: how one request reaches one BMC.
//!
//! Owns `BmcEndpoint`, `ClientOptions`, `AuthMode` and `RedfishClient`'s plumbing: base URL and
//! link resolution, the reqwest client (rustls, timeouts; certificate trust is `tls`), Basic auth or a Redfish session
//! (`X-Auth-Token`, re-login once on 401), the ServiceRoot fetch, reading each reply up to
//! `max_body_bytes` (see `body`), turning transport failures and non-success statuses into
//! `RedfishError`s, and `Retry-After` parsing. JSON writes (PATCH, actions) are `etag`'s, so that
//! every one carries `If-Match` where the resource served an ETag. It must not know any
//! Redfish resource beyond the ServiceRoot and the session login, and must never log or put into
//! an error a password, a token or a request body.

use std::fmt;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, SystemTime};

use hostfw_model::{BmcAddress, Secret};
use reqwest::header::{HeaderMap, LOCATION, RETRY_AFTER};
use reqwest::{Method, RequestBuilder};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::Mutex;
use url::Url;

use crate::body::{self, BodyError};
use crate::error::RedfishError;
use crate::link_cache::LinkCache;
use crate::models::{link_target, ErrorBody, ServiceRoot, SessionService};
use crate::task::WaitOptions;
use crate::timeouts;
use crate::tls;

/// Where a BMC is and how to log in to it. The password is a [`Secret`]: `Debug` redacts it.
#[derive(Debug, Clone)]
pub struct BmcEndpoint {
    /// Scheme, host, port and path prefix of the Redfish service (parsed by `BmcAddress`: a bare
    /// address is https).
    pub address: BmcAddress,
    pub username: String,
    pub password: Secret,
}

/// How requests are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthMode {
    /// HTTP Basic on every request (the default; survives BMC resets without re-login).
    #[default]
    Basic,
    /// A Redfish session (`POST Sessions`, then `X-Auth-Token`); re-login once on 401.
    Session,
}

/// Knobs of a `RedfishClient`.
#[derive(Clone)]
pub struct ClientOptions {
    /// Per-request timeout (uploads get a longer one, see `timeouts::upload_timeout`).
    pub request_timeout: Duration,
    pub auth: AuthMode,
    /// Accept self-signed/invalid TLS certificates (most BMCs ship with one). Off by default:
    /// certificates are verified, and a failure is `RedfishError::Certificate`.
    pub accept_invalid_certs: bool,
    /// Extra trusted CA certificates (PEM, one or more), on top of the built-in roots: the CA
    /// that signed the BMCs' certificates.
    pub ca_bundle: Option<Vec<u8>>,
    /// Largest reply body read, in bytes (site config `[redfish] max_response_bytes`); a bigger
    /// one is `RedfishError::BodyTooLarge` and is never held in memory whole.
    pub max_body_bytes: u64,
    /// How a host reset that answers with a Task is followed (poll interval, overall bound).
    pub reset_task_wait: WaitOptions,
    /// FirmwareInventory members read at once by `explore` (site config `[redfish]
    /// inventory_concurrency`); 0 counts as 1. Also the most requests `explore` has in flight to
    /// the BMC: at 2 or more its Systems read goes alongside its UpdateService/FirmwareInventory
    /// reads, at 1 after them.
    pub inventory_concurrency: usize,
    /// Read the Systems collection and the FirmwareInventory with `$expand` when the ServiceRoot
    /// advertises it (site config `[redfish] expand`; default on): one request for every member
    /// a service expands, the `inventory_concurrency` bound for those it does not. Off reads
    /// each member by itself.
    pub expand: bool,
    /// Where `explore` remembers each BMC's FirmwareInventory link between crawls (a worker
    /// shares one for its life; see `LinkCache`). `None` (the default): every crawl reads the
    /// UpdateService to find it.
    pub link_cache: Option<LinkCache>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            request_timeout: timeouts::DEFAULT_REQUEST_TIMEOUT,
            auth: AuthMode::Basic,
            accept_invalid_certs: false,
            ca_bundle: None,
            max_body_bytes: timeouts::DEFAULT_MAX_BODY_BYTES,
            reset_task_wait: WaitOptions {
                poll_interval: timeouts::DEFAULT_TASK_POLL_INTERVAL,
                timeout: timeouts::DEFAULT_RESET_TASK_TIMEOUT,
            },
            inventory_concurrency: timeouts::DEFAULT_INVENTORY_CONCURRENCY,
            expand: true,
            link_cache: None,
        }
    }
}

impl fmt::Debug for ClientOptions {
    // Hand-written so the CA bundle shows as a size, not as a wall of bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("request_timeout", &self.request_timeout)
            .field("auth", &self.auth)
            .field("accept_invalid_certs", &self.accept_invalid_certs)
            .field("ca_bundle", &self.ca_bundle.as_ref().map(|b| format!("<{} bytes>", b.len())))
            .field("max_body_bytes", &self.max_body_bytes)
            .field("reset_task_wait", &self.reset_task_wait)
            .field("inventory_concurrency", &self.inventory_concurrency)
            .field("expand", &self.expand)
            .field("link_cache", &self.link_cache)
            .finish()
    }
}

/// A Redfish client bound to one BMC. Cheap to clone (shares the connection pool and session).
#[derive(Clone)]
pub struct RedfishClient {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: BmcEndpoint,
    /// The address's canonical text: names the BMC in every error and log line.
    bmc: String,
    options: ClientOptions,
    http: reqwest::Client,
    /// `scheme://host:port/`.
    origin: Url,
    /// Path prefix of the base URL without a trailing slash ("" for none).
    prefix: String,
    /// The ServiceRoot path that answered last (`/redfish/v1/` or `/redfish/v1`).
    root_path: StdMutex<Option<String>>,
    /// The current session (session mode only). The async mutex serialises logins.
    session: Mutex<Option<Session>>,
}

#[derive(Clone)]
struct Session {
    token: String,
    uri: Option<String>,
}

impl fmt::Debug for RedfishClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedfishClient")
            .field("endpoint", &self.inner.endpoint)
            .field("options", &self.inner.options)
            .finish()
    }
}

/// How one request is authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Auth {
    /// The client's mode: Basic credentials, or the session token (logging in when needed and
    /// re-logging in once on 401).
    Default,
    /// No credentials (ServiceRoot probe, session login).
    Anonymous,
    /// Basic credentials whatever the mode (fallback while logging in).
    Basic,
}

/// Builds the body and extra headers of a request; called again if the request is retried after
/// a re-login, so streaming bodies are reopened each time.
pub(crate) type BuildRequest<'a> = &'a (dyn Fn(RequestBuilder) -> Result<RequestBuilder, RedfishError> + Send + Sync);

/// A request's outcome: any HTTP status, with the whole body read.
#[derive(Debug)]
pub(crate) struct Reply {
    pub method: Method,
    pub url: Url,
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn header(&self, name: impl reqwest::header::AsHeaderName) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }

    /// The `Location` header, verbatim.
    pub fn location(&self) -> Option<String> {
        self.header(LOCATION)
    }

    /// The `Retry-After` header (seconds or HTTP-date), as a delay from now.
    pub fn retry_after(&self) -> Option<Duration> {
        self.header(RETRY_AFTER).and_then(|v| parse_retry_after(&v, SystemTime::now()))
    }

    /// The body as a JSON value, if it is JSON at all (empty or non-JSON bodies give `None`).
    pub fn json_value(&self) -> Option<Value> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        serde_json::from_slice(&self.body).ok()
    }

    /// The body decoded as `T`, or a `Parse` error naming the BMC and URL.
    pub fn json<T: DeserializeOwned>(&self, bmc: &str) -> Result<T, RedfishError> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Err(RedfishError::Parse {
                bmc: bmc.to_string(),
                url: self.url.to_string(),
                cause: format!("HTTP {} with an empty body", self.status),
            });
        }
        serde_json::from_slice(&self.body).map_err(|e| RedfishError::Parse {
            bmc: bmc.to_string(),
            url: self.url.to_string(),
            cause: format!("HTTP {}: {e}", self.status),
        })
    }

    /// The BMC's explanation of an error: `error.message` and `@Message.ExtendedInfo`, or a short
    /// quote of a non-JSON body.
    pub fn error_message(&self) -> String {
        if let Ok(body) = serde_json::from_slice::<ErrorBody>(&self.body) {
            let messages = body.messages();
            if !messages.is_empty() {
                return messages.join("; ");
            }
        }
        let text = String::from_utf8_lossy(&self.body);
        let text = text.trim();
        if text.starts_with('{') || text.starts_with('[') {
            // JSON without a recognisable message: not worth quoting.
            return String::new();
        }
        let mut quoted: String = text.chars().take(timeouts::MAX_ERROR_BODY_QUOTE).collect();
        if quoted.len() < text.len() {
            quoted.push('…');
        }
        quoted
    }
}

/// Parses a `Retry-After` value: delay-seconds (integer, or fractional as some BMCs send) or an
/// HTTP-date (a date in the past means "now"). `None` when unparseable.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = v.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Duration::try_from_secs_f64(secs).ok();
        }
        return None;
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The cause of a reqwest error with its whole source chain ("error sending request: ...: ..."),
/// each thing said once: reqwest's own " for url (...)" is left out (every `RedfishError` names
/// the URL already), and a cause whose text is already said is skipped.
fn error_chain(e: &reqwest::Error) -> String {
    let mut out = e.to_string();
    if let Some(url) = e.url() {
        out = out.replace(&format!(" for url ({url})"), "");
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// Why a link from a BMC is refused before it is parsed at all, if it is: spellings that URL
/// parsers read differently than a reader would (WHATWG: `\\` is `/` in http URLs; tabs and
/// newlines are dropped), and network-path references that name another authority.
fn unsafe_spelling(link: &str) -> Option<&'static str> {
    if link.contains('\\') {
        return Some("it contains a backslash, which URL parsers read as '/' (a way to name another host)");
    }
    if link.chars().any(char::is_control) {
        return Some("it contains a control character, which URL parsers drop (a way to name another host)");
    }
    if link.starts_with("//") {
        return Some("it is a network-path reference (`//host/...`) naming another host");
    }
    None
}

/// How `url` differs from `origin` in scheme, host, port or user info (`None`: same origin).
pub(crate) fn origin_difference(origin: &Url, url: &Url) -> Option<String> {
    if url.scheme() != origin.scheme() {
        return Some(format!("its scheme {} is not the BMC's {}", url.scheme(), origin.scheme()));
    }
    if url.host() != origin.host() || url.port_or_known_default() != origin.port_or_known_default() {
        let named = match (url.host_str(), url.port_or_known_default()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => "no host".into(),
        };
        return Some(format!("it names {named}, not the BMC's own host and port"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Some("it carries user info".into());
    }
    None
}

/// The redirect rule of every BMC client: follow a redirect only to the same scheme, host and
/// port it came from (at most 10), so that neither Basic credentials nor a session token
/// (`X-Auth-Token`, which reqwest does not strip on a cross-host redirect) ever reach another
/// host; anything else ends the request with an error `transport_error` reports as a foreign link.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.stop();
        };
        let to = attempt.url().to_string();
        if attempt.previous().len() > 10 {
            return attempt.error(ForeignRedirect { to, reason: "more than 10 redirects".into() });
        }
        match origin_difference(first, attempt.url()) {
            None => attempt.follow(),
            Some(reason) => attempt.error(ForeignRedirect { to, reason }),
        }
    })
}

/// The error a refused redirect ends a request with (read back by `transport_error`).
#[derive(Debug)]
struct ForeignRedirect {
    /// Where the redirect pointed.
    to: String,
    reason: String,
}

impl fmt::Display for ForeignRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "redirect to {} refused: {}", self.to, self.reason)
    }
}

impl std::error::Error for ForeignRedirect {}

/// The refused redirect behind a reqwest error, if that is what ended the request.
fn refused_redirect(e: &reqwest::Error) -> Option<&ForeignRedirect> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<ForeignRedirect>() {
            return Some(r);
        }
        source = s.source();
    }
    None
}

impl RedfishClient {
    /// A client for one BMC. The address's path prefix, if any, is the base of every request
    /// (links from the BMC that lack it get it prepended).
    pub fn new(endpoint: BmcEndpoint, options: ClientOptions) -> Result<Self, RedfishError> {
        let bmc = endpoint.address.to_string();
        let origin_text = format!("{}/", endpoint.address.origin());
        let origin = Url::parse(&origin_text).map_err(|e| RedfishError::InvalidAddress {
            bmc: bmc.clone(),
            reason: format!("{origin_text:?} is not a URL: {e}"),
        })?;
        let prefix = endpoint.address.path_prefix().to_string();

        let builder = reqwest::Client::builder()
            .timeout(options.request_timeout)
            .connect_timeout(timeouts::CONNECT_TIMEOUT.min(options.request_timeout))
            .http1_only()
            .redirect(redirect_policy())
            .user_agent(concat!("hostfw-redfish/", env!("CARGO_PKG_VERSION")));
        let http = tls::configure(builder, &options, &bmc)?
            .build()
            .map_err(|e| RedfishError::ClientBuild { bmc: bmc.clone(), cause: error_chain(&e) })?;
        Ok(RedfishClient {
            inner: Arc::new(Inner {
                endpoint,
                bmc,
                options,
                http,
                origin,
                prefix,
                root_path: StdMutex::new(None),
                session: Mutex::new(None),
            }),
        })
    }

    /// The BMC address of the endpoint (its canonical text names the BMC in every error).
    pub fn address(&self) -> &BmcAddress {
        &self.inner.endpoint.address
    }

    /// The canonical text of the address.
    pub(crate) fn bmc_text(&self) -> &str {
        &self.inner.bmc
    }

    pub(crate) fn bmc(&self) -> String {
        self.inner.bmc.clone()
    }

    pub(crate) fn options(&self) -> &ClientOptions {
        &self.inner.options
    }

    /// The base URL the client talks to (origin plus prefix), for messages.
    pub(crate) fn base_url(&self) -> String {
        let mut s = self.inner.origin.to_string();
        s.pop();
        s.push_str(&self.inner.prefix);
        s
    }

    /// Resolves a link or header value from the BMC to a URL on this BMC.
    ///
    /// Absolute-path links (`/redfish/v1/...`, the Redfish norm) are joined to the base URL, with
    /// the base's path prefix prepended when missing. Absolute `http`/`https` URLs are *rebased*
    /// onto our own origin (only their path and query are kept): a BMC behind NAT may name itself
    /// by another address, and credentials must never be sent to a host the BMC merely names.
    /// Relative references are resolved against `current` (the URL of the document they came
    /// from).
    ///
    /// Refused with [`RedfishError::ForeignLink`], before anything is sent: a network-path
    /// reference (`//host/...`), any backslash (URL parsers read `\` as `/` in http URLs, so
    /// `/\host/...` names another host), control characters (parsers drop
    /// tabs and newlines, turning `/\t/host` into `//host`), a scheme other than http(s), and any
    /// result whose scheme, host or port is not the registered BMC's (checked after joining,
    /// whatever the spelling).
    pub(crate) fn resolve_from(&self, link: &str, current: Option<&Url>) -> Result<Url, RedfishError> {
        let link = link.trim();
        let at = || current.map_or_else(|| self.base_url(), Url::to_string);
        let bad = |what: String| RedfishError::Missing { bmc: self.bmc(), url: at(), what };
        let foreign = |reason: &str| RedfishError::ForeignLink {
            bmc: self.bmc(),
            url: at(),
            link: link.into(),
            reason: reason.into(),
        };
        if link.is_empty() {
            return Err(bad("a non-empty link (got an empty one)".into()));
        }
        if let Some(reason) = unsafe_spelling(link) {
            return Err(foreign(reason));
        }
        let path_and_query = match Url::parse(link) {
            Ok(abs) if matches!(abs.scheme(), "http" | "https") => {
                let mut pq = abs.path().to_string();
                if let Some(q) = abs.query() {
                    pq.push('?');
                    pq.push_str(q);
                }
                pq
            }
            Ok(abs) => return Err(foreign(&format!("its scheme {:?} is not http or https", abs.scheme()))),
            Err(_) if link.starts_with('/') => link.to_string(),
            Err(_) => {
                let base = match current {
                    Some(u) => u.clone(),
                    None => self.root_url_guess(),
                };
                let url = base.join(link).map_err(|e| bad(format!("a valid link (got {link:?}: {e})")))?;
                return self.same_origin(url).map_err(|reason| foreign(&reason));
            }
        };
        let prefix = &self.inner.prefix;
        let full = if prefix.is_empty()
            || path_and_query == *prefix
            || path_and_query.starts_with(&format!("{prefix}/"))
            || path_and_query.starts_with(&format!("{prefix}?"))
        {
            path_and_query
        } else {
            format!("{prefix}{path_and_query}")
        };
        let url = self.inner.origin.join(&full).map_err(|e| bad(format!("a valid link (got {link:?}: {e})")))?;
        self.same_origin(url).map_err(|reason| foreign(&reason))
    }

    /// `url` if it has the registered BMC's scheme, host and port and no user info; else why not.
    fn same_origin(&self, url: Url) -> Result<Url, String> {
        match origin_difference(&self.inner.origin, &url) {
            None => Ok(url),
            Some(reason) => Err(reason),
        }
    }

    /// `resolve_from` without a current document.
    pub(crate) fn resolve(&self, link: &str) -> Result<Url, RedfishError> {
        self.resolve_from(link, None)
    }

    /// The path-and-query of a URL on this BMC, as stored in `TaskRef`s (portable across clients
    /// built for the same BMC).
    pub(crate) fn path_of(url: &Url) -> String {
        let mut s = url.path().to_string();
        if let Some(q) = url.query() {
            s.push('?');
            s.push_str(q);
        }
        s
    }

    fn root_url_guess(&self) -> Url {
        let path = self
            .inner
            .root_path
            .lock()
            .ok()
            .and_then(|g| g.clone())
            .unwrap_or_else(|| format!("{}/redfish/v1/", self.inner.prefix));
        self.inner.origin.join(&path).unwrap_or_else(|_| self.inner.origin.clone())
    }

    /// The error for a non-success reply: `Unauthorized` for 401, `Http` otherwise.
    pub(crate) fn status_error(&self, reply: &Reply) -> RedfishError {
        let message = reply.error_message();
        if reply.status == 401 {
            RedfishError::Unauthorized {
                bmc: self.bmc(),
                method: reply.method.to_string(),
                url: reply.url.to_string(),
                status: reply.status,
                message,
            }
        } else {
            RedfishError::Http {
                bmc: self.bmc(),
                method: reply.method.to_string(),
                url: reply.url.to_string(),
                status: reply.status,
                message,
                retry_after: reply.retry_after(),
            }
        }
    }

    /// `Ok(reply)` if 2xx, else the status error.
    pub(crate) fn ensure_success(&self, reply: Reply) -> Result<Reply, RedfishError> {
        if reply.is_success() {
            Ok(reply)
        } else {
            Err(self.status_error(&reply))
        }
    }

    fn transport_error(&self, method: &Method, url: &Url, e: &reqwest::Error) -> RedfishError {
        if let Some(refused) = refused_redirect(e) {
            return RedfishError::ForeignLink {
                bmc: self.bmc(),
                url: url.to_string(),
                link: refused.to.clone(),
                reason: format!("{method} {url} was redirected there and {}", refused.reason),
            };
        }
        let (bmc, method, url, cause) = (self.bmc(), method.to_string(), url.to_string(), error_chain(e));
        if let Some(problem) = tls::certificate_problem(e) {
            RedfishError::Certificate { bmc, method, url, cause: problem }
        } else if e.is_connect() {
            RedfishError::Connect { bmc, method, url, cause }
        } else if e.is_timeout() {
            RedfishError::Timeout { bmc, method, url, timeout: self.inner.options.request_timeout, cause }
        } else {
            RedfishError::Transport { bmc, method, url, cause }
        }
    }

    /// Sends one request and reads the whole answer (up to `max_body_bytes`), whatever its
    /// status. In session mode a 401
    /// on a token leads to one re-login and one retry.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &Url,
        build: BuildRequest<'_>,
        auth: Auth,
    ) -> Result<Reply, RedfishError> {
        let mut relogged = false;
        loop {
            let mut rb = self.inner.http.request(method.clone(), url.clone());
            let mut used_token: Option<String> = None;
            match (auth, self.inner.options.auth) {
                (Auth::Anonymous, _) => {}
                (Auth::Basic, _) | (Auth::Default, AuthMode::Basic) => {
                    rb = rb.basic_auth(&self.inner.endpoint.username, Some(self.inner.endpoint.password.expose()));
                }
                (Auth::Default, AuthMode::Session) => {
                    let token = self.session_token(None).await?;
                    rb = rb.header("X-Auth-Token", token.as_str());
                    used_token = Some(token);
                }
            }
            rb = build(rb)?;
            let reply = self.execute(&method, url, rb).await?;
            if reply.status == 401 && !relogged {
                if let Some(stale) = used_token {
                    tracing::info!(bmc = %self.address(), url = %url, "session rejected (401); logging in again");
                    relogged = true;
                    self.session_token(Some(&stale)).await?;
                    continue;
                }
            }
            return Ok(reply);
        }
    }

    async fn execute(&self, method: &Method, url: &Url, rb: RequestBuilder) -> Result<Reply, RedfishError> {
        tracing::debug!(bmc = %self.address(), %method, %url, "redfish request");
        let resp = rb.send().await.map_err(|e| self.transport_error(method, url, &e))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let limit = self.inner.options.max_body_bytes;
        let body = body::read_bounded(resp, limit)
            .await
            .map_err(|e| match e {
                BodyError::Transport(e) => self.transport_error(method, url, &e),
                BodyError::TooLarge { declared } => {
                    tracing::warn!(bmc = %self.address(), %method, %url, limit, ?declared, "reply body over the bound; stopped reading");
                    RedfishError::BodyTooLarge {
                        bmc: self.bmc(),
                        method: method.to_string(),
                        url: url.to_string(),
                        limit,
                        declared,
                    }
                }
            })?;
        tracing::debug!(bmc = %self.address(), %method, %url, status, "redfish reply");
        Ok(Reply { method: method.clone(), url: url.clone(), status, headers, body })
    }

    /// GET with the client's auth, any status.
    pub(crate) async fn get(&self, url: &Url) -> Result<Reply, RedfishError> {
        self.send(Method::GET, url, &Ok, Auth::Default).await
    }

    /// GET a JSON document with the client's auth; non-2xx and unparseable bodies are errors.
    pub(crate) async fn get_json<T: DeserializeOwned>(&self, url: &Url) -> Result<T, RedfishError> {
        let reply = self.ensure_success(self.get(url).await?)?;
        reply.json(self.bmc_text())
    }

    /// The ServiceRoot with the client's auth, and the URL it was read from.
    pub(crate) async fn service_root(&self) -> Result<(Url, ServiceRoot), RedfishError> {
        self.service_root_with(Auth::Default).await
    }

    /// The ServiceRoot, trying `/redfish/v1/` then `/redfish/v1` (services differ on the
    /// trailing slash). An anonymous fetch answered 401 is retried with Basic credentials.
    pub(crate) async fn service_root_with(&self, auth: Auth) -> Result<(Url, ServiceRoot), RedfishError> {
        let prefix = &self.inner.prefix;
        let remembered = self.inner.root_path.lock().ok().and_then(|g| g.clone());
        let mut candidates = vec![format!("{prefix}/redfish/v1/"), format!("{prefix}/redfish/v1")];
        if let Some(p) = remembered {
            candidates.retain(|c| *c != p);
            candidates.insert(0, p);
        }
        let mut last: Option<RedfishError> = None;
        for path in candidates {
            let url = self
                .inner
                .origin
                .join(&path)
                .map_err(|e| RedfishError::InvalidAddress { bmc: self.bmc(), reason: format!("{path}: {e}") })?;
            let mut reply = self.send(Method::GET, &url, &Ok, auth).await?;
            if reply.status == 401 && auth == Auth::Anonymous {
                reply = self.send(Method::GET, &url, &Ok, Auth::Basic).await?;
            }
            if reply.status == 404 || reply.status == 405 {
                last = Some(self.status_error(&reply));
                continue;
            }
            let reply = self.ensure_success(reply)?;
            let root: ServiceRoot = reply.json(self.bmc_text())?;
            if let Ok(mut g) = self.inner.root_path.lock() {
                *g = Some(path);
            }
            return Ok((url, root));
        }
        Err(last.unwrap_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: self.base_url(),
            what: "the Redfish ServiceRoot".into(),
        }))
    }

    // ----- sessions ----------------------------------------------------------------------------

    /// The current session token, logging in if there is none or if the current one is `stale`.
    async fn session_token(&self, stale: Option<&str>) -> Result<String, RedfishError> {
        let mut guard = self.inner.session.lock().await;
        if let Some(s) = guard.as_ref() {
            if stale != Some(s.token.as_str()) {
                return Ok(s.token.clone());
            }
        }
        *guard = None;
        // Boxed: login fetches the ServiceRoot through `send`, which may call back here.
        let session = Box::pin(self.login()).await?;
        let token = session.token.clone();
        *guard = Some(session);
        Ok(token)
    }

    /// Drops the current session (without deleting it on the BMC) and logs in again. Used after
    /// a BMC reset, which invalidates every session. No-op in Basic mode.
    pub(crate) async fn relogin(&self) -> Result<(), RedfishError> {
        if self.inner.options.auth != AuthMode::Session {
            return Ok(());
        }
        let mut guard = self.inner.session.lock().await;
        *guard = None;
        *guard = Some(Box::pin(self.login()).await?);
        Ok(())
    }

    /// Creates a session: `POST` to `Links.Sessions` of the ServiceRoot, or to the `Sessions` of
    /// the root's `SessionService`.
    async fn login(&self) -> Result<Session, RedfishError> {
        let (root_url, root) = self.service_root_with(Auth::Anonymous).await?;
        let sessions_url = match root.links.as_ref().and_then(|l| link_target(&l.sessions)) {
            Some(link) => self.resolve_from(link, Some(&root_url))?,
            None => {
                let service_link = link_target(&root.session_service).ok_or_else(|| RedfishError::Unsupported {
                    bmc: self.bmc(),
                    url: root_url.to_string(),
                    what: "session login: the ServiceRoot has neither Links.Sessions nor SessionService".into(),
                })?;
                let service_url = self.resolve_from(service_link, Some(&root_url))?;
                let reply = self.send(Method::GET, &service_url, &Ok, Auth::Anonymous).await?;
                let reply = if reply.status == 401 {
                    self.send(Method::GET, &service_url, &Ok, Auth::Basic).await?
                } else {
                    reply
                };
                let service: SessionService = self.ensure_success(reply)?.json(self.bmc_text())?;
                let link = link_target(&service.sessions).ok_or_else(|| RedfishError::Missing {
                    bmc: self.bmc(),
                    url: service_url.to_string(),
                    what: "Sessions link in the SessionService".into(),
                })?;
                self.resolve_from(link, Some(&service_url))?
            }
        };
        let body = serde_json::json!({
            "UserName": self.inner.endpoint.username,
            "Password": self.inner.endpoint.password.expose(),
        });
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let build = move |rb: RequestBuilder| {
            Ok(rb.header(reqwest::header::CONTENT_TYPE, "application/json").body(bytes.clone()))
        };
        let reply = self.send(Method::POST, &sessions_url, &build, Auth::Anonymous).await?;
        if reply.status == 401 || reply.status == 403 {
            return Err(RedfishError::Unauthorized {
                bmc: self.bmc(),
                method: "POST".into(),
                url: sessions_url.to_string(),
                status: reply.status,
                message: reply.error_message(),
            });
        }
        let reply = self.ensure_success(reply)?;
        let token = reply.header("X-Auth-Token").ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: sessions_url.to_string(),
            what: "X-Auth-Token header in the session login answer".into(),
        })?;
        let uri = reply.location().or_else(|| {
            reply.json_value().and_then(|v| v.get("@odata.id").and_then(Value::as_str).map(str::to_string))
        });
        tracing::info!(bmc = %self.address(), "logged in (Redfish session)");
        Ok(Session { token, uri })
    }

    /// Deletes the current session on the BMC, if any (best effort: a BMC that already forgot it
    /// is fine). No-op in Basic mode.
    pub async fn logout(&self) -> Result<(), RedfishError> {
        let session = self.inner.session.lock().await.take();
        let Some(Session { token, uri: Some(uri) }) = session else {
            return Ok(());
        };
        let url = self.resolve(&uri)?;
        let build = move |rb: RequestBuilder| Ok(rb.header("X-Auth-Token", token.as_str()));
        let reply = self.send(Method::DELETE, &url, &build, Auth::Anonymous).await?;
        if reply.is_success() || reply.status == 404 || reply.status == 401 {
            Ok(())
        } else {
            Err(self.status_error(&reply))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(address: &str) -> RedfishClient {
        RedfishClient::new(
            BmcEndpoint { address: address.parse().unwrap(), username: "u".into(), password: "secret-pw".into() },
            ClientOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn retry_after_seconds() {
        let now = SystemTime::now();
        assert_eq!(parse_retry_after("5", now), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("1.5", now), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }

    #[test]
    fn retry_after_http_date() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now), Some(Duration::from_secs(30)));
        // a date in the past means "now"
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now), Some(Duration::ZERO));
        // the obsolete RFC 850 form is accepted too
        assert_eq!(parse_retry_after("Sunday, 06-Nov-94 08:49:47 GMT", now), Some(Duration::from_secs(10)));
    }

    #[test]
    fn address_forms() {
        let systems = |address: &str| client(address).resolve("/redfish/v1/Systems").unwrap().to_string();
        // A bare address is https (443 when no port): Basic auth never goes out in clear unasked.
        assert_eq!(systems("127.0.0.1:8000"), "https://127.0.0.1:8000/redfish/v1/Systems");
        assert_eq!(systems("10.0.4.17:443"), "https://10.0.4.17/redfish/v1/Systems");
        assert_eq!(systems("10.0.4.17"), "https://10.0.4.17/redfish/v1/Systems");
        assert_eq!(client("10.0.4.17").address().to_string(), "https://10.0.4.17:443");
        // http only when written (80 when no port); scheme and host in any case, trailing slash.
        assert_eq!(systems("http://127.0.0.1:8000"), "http://127.0.0.1:8000/redfish/v1/Systems");
        assert_eq!(systems("HTTP://127.0.0.1:8000/"), "http://127.0.0.1:8000/redfish/v1/Systems");
        assert_eq!(systems("http://bmc-1.Example"), "http://bmc-1.example/redfish/v1/Systems");
        assert_eq!(systems("https://10.0.0.1"), "https://10.0.0.1/redfish/v1/Systems");
        assert_eq!(systems("[fe80::1]:8443"), "https://[fe80::1]:8443/redfish/v1/Systems");
        // Errors name the BMC by its canonical text.
        assert_eq!(client("HTTP://127.0.0.1:8000/").bmc(), "http://127.0.0.1:8000");
    }

    #[test]
    fn prefix_and_absolute_links() {
        let c = client("http://127.0.0.1:9000/bmc/h1/");
        assert_eq!(
            c.resolve("/redfish/v1/Systems").unwrap().as_str(),
            "http://127.0.0.1:9000/bmc/h1/redfish/v1/Systems"
        );
        assert_eq!(
            c.resolve("/bmc/h1/redfish/v1/Systems").unwrap().as_str(),
            "http://127.0.0.1:9000/bmc/h1/redfish/v1/Systems"
        );
        // absolute URLs naming another host are rebased onto ours
        assert_eq!(
            c.resolve("https://192.168.1.5/redfish/v1/TaskService/Tasks/1?x=1").unwrap().as_str(),
            "http://127.0.0.1:9000/bmc/h1/redfish/v1/TaskService/Tasks/1?x=1"
        );
        // query-only links resolve against the current document
        let current = c.resolve("/redfish/v1/Coll").unwrap();
        assert_eq!(
            c.resolve_from("?$skip=2", Some(&current)).unwrap().as_str(),
            "http://127.0.0.1:9000/bmc/h1/redfish/v1/Coll?$skip=2"
        );
        assert!(c.resolve("").is_err());
    }

    #[test]
    fn links_naming_another_origin_are_refused_in_every_spelling() {
        let c = client("http://127.0.0.1:9000/bmc/h1/");
        let current = c.resolve("/redfish/v1/Coll").unwrap();
        for link in [
            "//127.0.0.2:9000/redfish/v1/Systems",
            "//evil.example/redfish/v1/Systems",
            "\\\\evil.example\\redfish\\v1",
            "/\\evil.example/redfish/v1",
            "\\/evil.example/redfish/v1",
            "/redfish\\v1/Systems",
            "/\t/evil.example/redfish/v1",
            "/\n/evil.example/redfish/v1",
            "/\r\n/evil.example/redfish/v1",
            "file:///etc/passwd",
            "ftp://evil.example/redfish/v1",
            "javascript:alert(1)",
        ] {
            for from in [None, Some(&current)] {
                match c.resolve_from(link, from) {
                    Err(RedfishError::ForeignLink { link: named, reason, .. }) => {
                        assert_eq!(named, link.trim());
                        assert!(!reason.is_empty());
                    }
                    other => panic!("{link:?} from {from:?} must be refused as a foreign link, got {other:?}"),
                }
            }
        }
        // A relative reference cannot climb out of the origin either (`..` stays on the host).
        assert_eq!(c.resolve_from("../../../../x", Some(&current)).unwrap().as_str(), "http://127.0.0.1:9000/x");
        // An absolute URL naming another host, with user info or another port, is rebased: the
        // request goes to the registered BMC only.
        for link in [
            "http://evil.example:9999/redfish/v1/Systems",
            "https://127.0.0.1:9000@evil.example/redfish/v1/Systems",
            "http://user:pw@evil.example/redfish/v1/Systems",
            "HTTP://EVIL.example/redfish/v1/Systems",
        ] {
            assert_eq!(c.resolve(link).unwrap().as_str(), "http://127.0.0.1:9000/bmc/h1/redfish/v1/Systems", "{link}");
        }
        let message = c.resolve("//evil.example/x").unwrap_err().to_string();
        assert!(message.contains("\"//evil.example/x\""), "{message}");
        assert!(message.contains("nothing was sent"), "{message}");
    }

    #[test]
    fn origin_difference_names_what_differs() {
        let origin = Url::parse("https://10.0.0.1/").unwrap();
        let diff = |u: &str| origin_difference(&origin, &Url::parse(u).unwrap());
        assert_eq!(diff("https://10.0.0.1:443/redfish/v1"), None);
        assert!(diff("http://10.0.0.1/redfish/v1").unwrap().contains("scheme http"));
        assert!(diff("https://10.0.0.1:8443/redfish/v1").unwrap().contains("10.0.0.1:8443"));
        assert!(diff("https://10.0.0.2/redfish/v1").unwrap().contains("10.0.0.2:443"));
        assert!(diff("https://u@10.0.0.1/redfish/v1").unwrap().contains("user info"));
    }

    #[test]
    fn debug_never_shows_the_password() {
        let c = client("127.0.0.1:1");
        assert!(!format!("{c:?}").contains("secret-pw"));
    }

    #[test]
    fn error_message_from_bodies() {
        let reply = |body: &str| Reply {
            method: Method::GET,
            url: Url::parse("http://x/").unwrap(),
            status: 400,
            headers: HeaderMap::new(),
            body: body.as_bytes().to_vec(),
        };
        assert_eq!(
            reply(
                r##"{"error":{"message":"bad","@Message.ExtendedInfo":[{"MessageId":"Base.1.0.X","Message":"why"}]}}"##
            )
            .error_message(),
            "bad; Base.1.0.X: why"
        );
        assert_eq!(reply("<html>oops</html>").error_message(), "<html>oops</html>");
        assert_eq!(reply(r##"{"odd":1}"##).error_message(), "");
        let long = "x".repeat(1000);
        assert!(reply(&long).error_message().chars().count() <= timeouts::MAX_ERROR_BODY_QUOTE + 1);
    }
}
