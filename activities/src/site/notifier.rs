//! `hostfw.notifier.round`: deliver the site's webhook notifications for a while (the
//! `SiteNotifier` workflow runs one round after another).
//!
//! Each tick (`notifications.poll_interval`) it fans new outbox events out to the configured
//! webhooks, claims due deliveries with a lease (this process's [`owner`]), POSTs each one signed
//! (`X-Hostfw-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, `X-Hostfw-Timestamp`,
//! `X-Hostfw-Event-Id`) and records a 2xx as delivered, anything else as a failure retried with
//! exponential backoff (`retry_first` doubling to `retry_max`) until `give_up_after` from the
//! event, when it is given up with its last error. It prunes finished events older than
//! `retention` once per round. It reads `[notifications]` live each tick and each secret when it
//! sends (never logged, never in a workflow input or output). It must not decide which events
//! exist (their causes record them in the store) and never fails a round for a webhook's error:
//! only the site database's errors fail it (and the workflow retries it).

use std::sync::OnceLock;
use std::time::Duration;

use hmac::{Hmac, Mac};
use hostfw_model::config::{NotificationsSection, WebhookSection};
use hostfw_model::{rfc3339_utc, NotificationKind};
use hostfw_store::{now_ms, DueDelivery};
use hostfw_workflows::{NotifierRoundRequest, NotifierRoundSummary};
use sha2::Sha256;
use temporalio_common::ActivityError;

use crate::tunables::{NOTIFIER_CLAIM_LIMIT as CLAIM_LIMIT, NOTIFIER_LEASE_SLACK as LEASE_SLACK};
use crate::{error, Deps};

/// The signature header: `sha256=<hex>`.
pub const SIGNATURE_HEADER: &str = "X-Hostfw-Signature";
/// The unix seconds the signature was made at (part of the signed text).
pub const TIMESTAMP_HEADER: &str = "X-Hostfw-Timestamp";
/// The event's stable id, the same on every attempt.
pub const EVENT_ID_HEADER: &str = "X-Hostfw-Event-Id";
/// The version of the JSON document (docs/notifications.md).
pub const SCHEMA_VERSION: u32 = 1;

/// This process's lease owner name (host name and a random suffix, fixed for the process).
pub fn owner() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let mut bytes = [0u8; 4];
        let _ = getrandom::getrandom(&mut bytes);
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "worker".to_string());
        format!("{host}/{}/{}", std::process::id(), hex::encode(bytes))
    })
}

/// The signature of `body` sent at `timestamp` (unix seconds) with `secret`: the hex HMAC-SHA256
/// of `"<timestamp>.<body>"`, as the `X-Hostfw-Signature` header carries it after `sha256=`.
pub fn sign(secret: &[u8], timestamp: i64, body: &str) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// The JSON document POSTed for `delivery`: the same bytes on every attempt.
pub fn body(site: &str, delivery: &DueDelivery) -> String {
    let e = &delivery.event;
    serde_json::json!({
        "schema_version": SCHEMA_VERSION,
        "id": e.id,
        "kind": e.kind,
        "site": site,
        "subject": e.subject,
        "at_ms": e.created_at_ms,
        "at": rfc3339_utc(e.created_at_ms),
        "data": e.data,
    })
    .to_string()
}

/// The delay before retry number `attempts` (1 = the first retry): `first` doubling, at most `max`.
pub fn retry_delay(first: Duration, max: Duration, attempts: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempts.saturating_sub(1).min(30));
    first.saturating_mul(factor).min(max)
}

/// Read a webhook's secret: its `secret_file` (trailing line breaks dropped) or its `secret_env`.
fn secret(w: &WebhookSection) -> Result<Vec<u8>, String> {
    let text = match (&w.secret_file, &w.secret_env) {
        (Some(file), _) => {
            std::fs::read_to_string(file).map_err(|e| format!("cannot read the secret file {}: {e}", file.display()))?
        }
        (None, Some(var)) => {
            std::env::var(var).map_err(|_| format!("the environment variable {var} (secret_env) is not set"))?
        }
        (None, None) => return Err("no secret configured".to_string()),
    };
    let text = text.trim_end_matches(['\r', '\n']);
    if text.is_empty() {
        return Err("the secret is empty".to_string());
    }
    Ok(text.as_bytes().to_vec())
}

/// POST `delivery` to `w`: `Ok` on a 2xx answer, else what went wrong (never the secret).
async fn post(http: &reqwest::Client, site: &str, w: &WebhookSection, delivery: &DueDelivery) -> Result<(), String> {
    let secret = secret(w)?;
    let body = body(site, delivery);
    let timestamp = now_ms() / 1000;
    let signature = sign(&secret, timestamp, &body);
    let answer = http
        .post(&w.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(SIGNATURE_HEADER, format!("sha256={signature}"))
        .header(TIMESTAMP_HEADER, timestamp.to_string())
        .header(EVENT_ID_HEADER, &delivery.event.id)
        .header("X-Hostfw-Event-Kind", delivery.event.kind.as_str())
        .body(body)
        .send()
        .await
        .map_err(|e| format!("POST {} failed: {}", w.url, hostfw_model::error_chain(&e)))?;
    let status = answer.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("POST {} answered {status}", w.url))
    }
}

/// One tick: fan out, claim, send, record. Adds to `done`.
async fn tick(deps: &Deps, http: &reqwest::Client, done: &mut NotifierRoundSummary) -> Result<(), ActivityError> {
    let site = deps.site.current();
    let n: &NotificationsSection = &site.notifications;
    let webhooks: Vec<(String, Vec<NotificationKind>)> = n
        .webhooks
        .iter()
        .map(|w| (w.name.clone(), NotificationKind::ALL.into_iter().filter(|k| w.wants(*k)).collect()))
        .collect();
    deps.store.notification_fan_out(&webhooks).await.map_err(error::store)?;
    let lease = n.timeout + LEASE_SLACK;
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    // One claim per POST, so each lease covers one POST only (a slow receiver cannot outlast the
    // leases of deliveries still waiting their turn in this tick).
    for _ in 0..CLAIM_LIMIT {
        let claimed = deps.store.notification_claim(owner(), now_ms(), lease_ms, 1).await.map_err(error::store)?;
        let Some(delivery) = claimed.into_iter().next() else { break };
        let id = delivery.event.id.as_str();
        let outcome = match n.webhook(&delivery.webhook) {
            Some(w) => post(http, &site.site.name, w, &delivery).await,
            None => Err(format!("webhook `{}` is no longer configured", delivery.webhook)),
        };
        let at = now_ms();
        match outcome {
            Ok(()) => {
                deps.store.notification_delivered(id, &delivery.webhook, at).await.map_err(error::store)?;
                tracing::info!(event = id, kind = %delivery.event.kind, webhook = %delivery.webhook, "notification delivered");
                done.delivered += 1;
            }
            Err(problem) => {
                let attempts = delivery.attempts + 1;
                let age = Duration::from_millis(u64::try_from(at - delivery.event.created_at_ms).unwrap_or(0));
                let gone = n.webhook(&delivery.webhook).is_none();
                if gone || age >= n.give_up_after {
                    let why = if gone {
                        problem
                    } else {
                        format!(
                            "gave up after {attempts} attempts over {}: {problem}",
                            hostfw_model::format_duration(n.give_up_after)
                        )
                    };
                    deps.store
                        .notification_failed(id, &delivery.webhook, &why, None, at)
                        .await
                        .map_err(error::store)?;
                    tracing::error!(event = id, webhook = %delivery.webhook, "notification given up: {why}");
                    done.gave_up += 1;
                } else {
                    let delay = retry_delay(n.retry_first, n.retry_max, attempts);
                    let retry_at = at + i64::try_from(delay.as_millis()).unwrap_or(i64::MAX / 2);
                    deps.store
                        .notification_failed(id, &delivery.webhook, &problem, Some(retry_at), at)
                        .await
                        .map_err(error::store)?;
                    tracing::warn!(event = id, webhook = %delivery.webhook, attempts, retry_in = ?delay, "notification not delivered: {problem}");
                    done.failed += 1;
                }
            }
        }
    }
    Ok(())
}

/// Deliver for `input.run_for_secs`, a tick every `notifications.poll_interval`, or until the
/// worker begins to stop. The caller heartbeats.
pub async fn round(deps: &Deps, input: NotifierRoundRequest) -> Result<NotifierRoundSummary, ActivityError> {
    let mut done = NotifierRoundSummary::default();
    let retention = deps.site.current().notifications.retention;
    let before = now_ms() - i64::try_from(retention.as_millis()).unwrap_or(i64::MAX / 2);
    done.pruned = deps.store.notification_prune(before).await.map_err(error::store)?;
    let timeout = deps.site.current().notifications.timeout;
    let http = reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| error::bad_input(format!("cannot build the webhook HTTP client: {e}")))?;
    let end = tokio::time::Instant::now() + Duration::from_secs(input.run_for_secs.max(1));
    loop {
        tick(deps, &http, &mut done).await?;
        let pause = deps.site.current().notifications.poll_interval;
        let next = tokio::time::Instant::now() + pause;
        if next >= end {
            break;
        }
        // A stopping worker ends the round with what it delivered: the next round runs elsewhere.
        tokio::select! {
            () = tokio::time::sleep_until(next) => {}
            () = deps.stopping.wait() => break,
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_delay_doubles_up_to_its_cap() {
        let d = |n| retry_delay(Duration::from_secs(5), Duration::from_secs(60), n).as_secs();
        assert_eq!([d(1), d(2), d(3), d(4), d(5), d(40)], [5, 10, 20, 40, 60, 60]);
    }

    #[test]
    fn the_signature_is_the_hmac_of_timestamp_dot_body() {
        // The value Python's `hmac.new(b"key", b'1700000000.{"a":1}', hashlib.sha256)` gives.
        let sig = sign(b"key", 1700000000, "{\"a\":1}");
        assert_eq!(sig, "a438e398bfafc57e4396bb7fc2304422f0f768e965d073ca313cb52e22e6ad03");
        assert_ne!(sig, sign(b"key", 1700000001, "{\"a\":1}"), "the timestamp is signed");
        assert_ne!(sig, sign(b"other", 1700000000, "{\"a\":1}"));
    }
}
