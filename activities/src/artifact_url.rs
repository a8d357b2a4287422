//! Signed, expiring URLs of the worker's artifact server: `/a/<expiry>/<mac>/<path>`.
//!
//! Owns minting (activities give BMCs an `ImageURI` and Scout its script and artifact URLs) and
//! checking (the artifact server) of those URLs. `<path>` is `artifacts/<file under the firmware
//! directory>` or `scout-scripts/<file under the Scout scripts directory>`; `<expiry>` is unix
//! seconds; `<mac>` is hex HMAC-SHA256 over `v1\n<expiry>\n<path>` with a key derived from the
//! site key (label `hostfw artifact url v1`), so every worker of a site accepts the URLs of the
//! others. A process without a site key uses a random key of its own (logged once as a WARN):
//! its URLs work on that worker only. MACs are compared in constant time.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use hostfw_store::SiteKey;
use sha2::Sha256;

/// URL path prefix of every signed URL.
pub const SIGNED_PREFIX: &str = "/a/";
/// First segment of `<path>` for files of the firmware directory.
pub const ARTIFACTS_SEGMENT: &str = "artifacts";
/// First segment of `<path>` for files of the Scout scripts directory.
pub const SCOUT_SCRIPTS_SEGMENT: &str = "scout-scripts";

const LABEL: &str = "hostfw artifact url v1";

/// Mints and checks signed artifact URLs. Cheap to clone; prints no key.
#[derive(Clone)]
pub struct ArtifactUrls {
    key: [u8; 32],
    base_url: String,
    lifetime: Duration,
}

/// Why a signed URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    /// The expiry is not a number of seconds or the MAC is not hex of the right length.
    #[error("malformed signed URL")]
    Malformed,
    /// The MAC does not match the path and expiry.
    #[error("bad signature")]
    BadSignature,
    /// The URL was valid until `expired_at` (unix seconds).
    #[error("link expired at {expired_at} (unix seconds)")]
    Expired { expired_at: u64 },
}

impl std::fmt::Debug for ArtifactUrls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArtifactUrls")
            .field("base_url", &self.base_url)
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

impl ArtifactUrls {
    /// URLs under `base_url` (the worker's `artifact_base_url`) valid for `lifetime`, keyed by
    /// `site_key` (or, without one, by this process's random key).
    pub fn new(site_key: Option<&SiteKey>, base_url: &str, lifetime: Duration) -> ArtifactUrls {
        let key = match site_key {
            Some(k) => k.derive(LABEL),
            None => *process_key(),
        };
        ArtifactUrls { key, base_url: base_url.trim_end_matches('/').to_string(), lifetime }
    }

    /// The URL of `rel` (a `/`-separated path) under the firmware directory.
    pub fn artifact(&self, rel: &str) -> String {
        self.url(&format!("{ARTIFACTS_SEGMENT}/{rel}"), now_unix() + self.lifetime.as_secs())
    }

    /// The URL of `rel` (a `/`-separated path) under the Scout scripts directory.
    pub fn scout_script(&self, rel: &str) -> String {
        self.url(&format!("{SCOUT_SCRIPTS_SEGMENT}/{rel}"), now_unix() + self.lifetime.as_secs())
    }

    /// The URL of `path` (`<segment>/<rel>`) valid until `expires` (unix seconds).
    pub fn url(&self, path: &str, expires: u64) -> String {
        format!("{}{SIGNED_PREFIX}{expires}/{}/{path}", self.base_url, hex::encode(self.mac(path, expires)))
    }

    /// Checks a request for `/a/<expiry>/<mac>/<path>` at time `now` (unix seconds).
    pub fn check(&self, expiry: &str, mac: &str, path: &str, now: u64) -> Result<(), UrlRefusal> {
        let expires: u64 = expiry.parse().map_err(|_| UrlRefusal::Malformed)?;
        let given = hex::decode(mac).map_err(|_| UrlRefusal::Malformed)?;
        let mut m = self.hmac();
        m.update(message(path, expires).as_bytes());
        m.verify_slice(&given).map_err(|_| UrlRefusal::BadSignature)?;
        if now > expires {
            return Err(UrlRefusal::Expired { expired_at: expires });
        }
        Ok(())
    }

    fn hmac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length")
    }

    fn mac(&self, path: &str, expires: u64) -> Vec<u8> {
        let mut m = self.hmac();
        m.update(message(path, expires).as_bytes());
        m.finalize().into_bytes().to_vec()
    }
}

fn message(path: &str, expires: u64) -> String {
    format!("v1\n{expires}\n{path}")
}

/// Now, unix seconds.
pub fn now_unix() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

/// The random key of a process that has no site key (one per process, so the artifact server and
/// the activities of one worker agree).
fn process_key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(|| {
        tracing::warn!(
            "no site key configured: artifact URLs are signed with a random key of this process and \
             only this worker accepts them; configure [site] secret_key_file on every worker"
        );
        let mut key = [0u8; 32];
        getrandom::getrandom(&mut key).expect("operating system random source");
        key
    })
}
