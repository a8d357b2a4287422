//! `[notifications]`: the webhooks hostfw tells about site events (issue 27 item 7), and how
//! their deliveries are retried, given up and pruned.
//!
//! Owns the table's fields, defaults and rules: each webhook has a unique name, an http(s) URL
//! (plain http only to a loopback host unless `allow_plain_http`), known event kinds
//! (`hostfw_model::NotificationKind`) and a secret (`secret_file`, preferred, or `secret_env`);
//! the retry schedule is ordered. It must not keep the secret (`load` only checks that the
//! `secret_file` reads; the notifier activity reads it at each delivery round) nor send anything. The secret never appears in a serialized config.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::notification::NotificationKind;

/// `[notifications]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NotificationsSection {
    /// The receivers (`[[notifications.webhooks]]`). None: events are still recorded (and listed
    /// by `hostfw notifications list`), nothing is sent.
    pub webhooks: Vec<WebhookSection>,
    /// Delay before the first retry of a failed delivery; each later retry doubles it.
    #[serde(with = "crate::duration::serde_duration")]
    pub retry_first: Duration,
    /// The longest delay between two attempts.
    #[serde(with = "crate::duration::serde_duration")]
    pub retry_max: Duration,
    /// A delivery still failing this long after its event is given up (its last error kept).
    #[serde(with = "crate::duration::serde_duration")]
    pub give_up_after: Duration,
    /// Delivered and given-up deliveries (and their events) older than this are pruned.
    #[serde(with = "crate::duration::serde_duration")]
    pub retention: Duration,
    /// How often the notifier looks for due deliveries.
    #[serde(with = "crate::duration::serde_duration")]
    pub poll_interval: Duration,
    /// Bound on one POST (connect, send, answer).
    #[serde(with = "crate::duration::serde_duration")]
    pub timeout: Duration,
}

impl Default for NotificationsSection {
    fn default() -> Self {
        NotificationsSection {
            webhooks: Vec::new(),
            retry_first: Duration::from_secs(5),
            retry_max: Duration::from_secs(600),
            give_up_after: Duration::from_secs(24 * 3600),
            retention: Duration::from_secs(7 * 24 * 3600),
            poll_interval: Duration::from_secs(2),
            timeout: Duration::from_secs(10),
        }
    }
}

/// One `[[notifications.webhooks]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSection {
    /// Unique name: the key of its deliveries in the site database, shown by `notifications list`.
    pub name: String,
    /// Where events are POSTed (`https://...`; `http://` only to a loopback host unless allowed).
    pub url: String,
    /// The event kinds it receives; empty or absent: every kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// A file holding the HMAC-SHA256 secret (trailing line breaks are not part of it; resolved
    /// against the config file's directory). Preferred over `secret_env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_file: Option<PathBuf>,
    /// The name of an environment variable holding the secret (when there is no `secret_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_env: Option<String>,
    /// Allow `http://` to a host that is not loopback (the signature still authenticates, but the
    /// payload crosses the network in the clear).
    #[serde(default)]
    pub allow_plain_http: bool,
}

impl WebhookSection {
    /// Whether this webhook receives events of `kind`.
    pub fn wants(&self, kind: NotificationKind) -> bool {
        self.events.is_empty() || self.events.iter().any(|e| e == kind.as_str())
    }
}

impl NotificationsSection {
    /// The webhook named `name`.
    pub fn webhook(&self, name: &str) -> Option<&WebhookSection> {
        self.webhooks.iter().find(|w| w.name == name)
    }

    /// The table's rules; `Err` names the key and the problem (and the webhook).
    pub(super) fn check(&self) -> Result<(), (&'static str, String)> {
        let pos = |key: &'static str, d: Duration| {
            if d.is_zero() {
                Err((key, "must be greater than zero".to_string()))
            } else {
                Ok(())
            }
        };
        pos("notifications.retry_first", self.retry_first)?;
        pos("notifications.retry_max", self.retry_max)?;
        pos("notifications.give_up_after", self.give_up_after)?;
        pos("notifications.retention", self.retention)?;
        pos("notifications.poll_interval", self.poll_interval)?;
        pos("notifications.timeout", self.timeout)?;
        if self.retry_max < self.retry_first {
            return Err((
                "notifications.retry_max",
                format!("{:?} is shorter than retry_first ({:?})", self.retry_max, self.retry_first),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for w in &self.webhooks {
            let name = w.name.trim();
            if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err((
                    "notifications.webhooks.name",
                    format!("`{}` is not a webhook name: give each webhook a non-empty name without spaces", w.name),
                ));
            }
            if !names.insert(name) {
                return Err(("notifications.webhooks.name", format!("two webhooks are named `{name}`")));
            }
            check_url(&w.url, w.allow_plain_http)
                .map_err(|problem| ("notifications.webhooks.url", format!("webhook `{name}`: {problem}")))?;
            for e in &w.events {
                e.parse::<NotificationKind>()
                    .map_err(|err| ("notifications.webhooks.events", format!("webhook `{name}`: {err}")))?;
            }
            match (&w.secret_file, &w.secret_env) {
                (None, None) => {
                    return Err((
                        "notifications.webhooks.secret_file",
                        format!("webhook `{name}` has no secret: set secret_file (preferred) or secret_env"),
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err((
                        "notifications.webhooks.secret_env",
                        format!("webhook `{name}` sets both secret_file and secret_env: keep one"),
                    ))
                }
                (None, Some(var)) if var.trim().is_empty() || var.contains('=') => {
                    return Err((
                        "notifications.webhooks.secret_env",
                        format!("webhook `{name}`: `{var}` is not an environment variable name"),
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// An absolute http(s) URL with a host; `http://` only to a loopback host unless `allow_plain_http`.
fn check_url(url: &str, allow_plain_http: bool) -> Result<(), String> {
    let (scheme, rest) =
        url.split_once("://").ok_or_else(|| format!("`{url}` is not a URL: write https://host[:port]/path"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("`{url}` is not an http(s) URL"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map(|(_, h)| h).unwrap_or(authority);
    if authority.contains('@') {
        return Err(format!("`{url}` carries credentials: put the secret in secret_file instead"));
    }
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    if host.is_empty() || rest.chars().any(char::is_whitespace) {
        return Err(format!("`{url}` has no host"));
    }
    if scheme == "http" && !allow_plain_http && !loopback_host(host) {
        return Err(format!(
            "`{url}` is plain http to a host that is not loopback: use https, or set allow_plain_http = true"
        ));
    }
    Ok(())
}

/// `load`'s check of a `secret_file`: readable and not empty (its content is not kept).
pub(super) fn check_secret_file(path: &std::path::Path) -> Result<(), String> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim_end_matches(['\r', '\n']).is_empty() => Err(format!("{} is empty", path.display())),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{NotificationKind, SiteConfig};

    fn load(extra: &str) -> Result<SiteConfig, String> {
        let text = format!("[site]\nname = \"s\"\n{extra}");
        SiteConfig::from_toml_str(&text, Path::new("/etc/hostfw/site.toml")).map_err(|e| e.to_string())
    }

    fn hook(body: &str) -> String {
        format!("[[notifications.webhooks]]\nname = \"ops\"\n{body}")
    }

    #[test]
    fn a_webhook_loads_with_its_defaults_and_a_resolved_secret_file() {
        let site = load(&hook("url = \"https://hooks.example/hostfw\"\nsecret_file = \"ops.secret\"\n")).unwrap();
        let n = &site.notifications;
        assert_eq!(n.webhooks.len(), 1);
        assert_eq!(n.webhooks[0].secret_file.as_deref(), Some(Path::new("/etc/hostfw/ops.secret")));
        assert!(NotificationKind::ALL.into_iter().all(|k| n.webhooks[0].wants(k)), "no events = every kind");
        assert_eq!(n.retry_first, std::time::Duration::from_secs(5));
        let some =
            load(&hook("url = \"http://127.0.0.1:9/x\"\nsecret_env = \"OPS_SECRET\"\nevents = [\"freeze_changed\"]\n"))
                .unwrap();
        let w = &some.notifications.webhooks[0];
        assert!(w.wants(NotificationKind::FreezeChanged) && !w.wants(NotificationKind::TargetPaused));
        // No [notifications] at all: nothing to send.
        assert!(load("").unwrap().notifications.webhooks.is_empty());
    }

    #[test]
    fn bad_webhooks_are_refused_naming_the_key_and_the_webhook() {
        let err = |body: &str| load(&hook(body)).unwrap_err();
        let e = err("url = \"ftp://x/y\"\nsecret_env = \"S\"\n");
        assert!(e.contains("notifications.webhooks.url") && e.contains("`ops`") && e.contains("http(s)"), "{e}");
        let e = err("url = \"hooks.example/x\"\nsecret_env = \"S\"\n");
        assert!(e.contains("notifications.webhooks.url") && e.contains("not a URL"), "{e}");
        let e = err("url = \"http://10.1.2.3/x\"\nsecret_env = \"S\"\n");
        assert!(e.contains("plain http") && e.contains("allow_plain_http"), "{e}");
        assert!(load(&hook("url = \"http://10.1.2.3/x\"\nsecret_env = \"S\"\nallow_plain_http = true\n")).is_ok());
        let e = err("url = \"https://h/x\"\nsecret_env = \"S\"\nevents = [\"target_paused\", \"host_died\"]\n");
        assert!(
            e.contains("notifications.webhooks.events") && e.contains("unknown notification event kind `host_died`"),
            "{e}"
        );
        let e = err("url = \"https://h/x\"\n");
        assert!(e.contains("notifications.webhooks.secret_file") && e.contains("has no secret"), "{e}");
        let e = err("url = \"https://h/x\"\nsecret_env = \"S\"\nsecret_file = \"f\"\n");
        assert!(e.contains("both secret_file and secret_env"), "{e}");
        let e = err("url = \"https://user:pw@h/x\"\nsecret_env = \"S\"\n");
        assert!(e.contains("credentials"), "{e}");
        let twice = format!(
            "{}{}",
            hook("url = \"https://h/x\"\nsecret_env = \"S\"\n"),
            hook("url = \"https://h/y\"\nsecret_env = \"S\"\n")
        );
        let e = load(&twice).unwrap_err();
        assert!(e.contains("two webhooks are named `ops`"), "{e}");
        let e = load("[notifications]\nretry_first = \"1m\"\nretry_max = \"10s\"\n").unwrap_err();
        assert!(e.contains("notifications.retry_max"), "{e}");
        let e = load("[notifications]\ngive_up_after = \"0s\"\n").unwrap_err();
        assert!(e.contains("notifications.give_up_after"), "{e}");
    }

    #[test]
    fn load_checks_the_secret_file_without_keeping_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.toml");
        let text = format!("[site]\nname = \"s\"\n{}", hook("url = \"https://h/x\"\nsecret_file = \"ops.secret\"\n"));
        std::fs::write(&path, text).unwrap();
        let e = SiteConfig::load(&path).unwrap_err().to_string();
        assert!(e.contains("notifications.webhooks.secret_file") && e.contains("cannot read"), "{e}");
        std::fs::write(dir.path().join("ops.secret"), "\n").unwrap();
        let e = SiteConfig::load(&path).unwrap_err().to_string();
        assert!(e.contains("is empty"), "{e}");
        std::fs::write(dir.path().join("ops.secret"), "s3cret\n").unwrap();
        let site = SiteConfig::load(&path).unwrap();
        let json = serde_json::to_string(&site).unwrap();
        assert!(!json.contains("s3cret"), "the secret is never part of the config: {json}");
    }
}
