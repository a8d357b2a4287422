//! End-to-end: webhook notifications (issue 27 item 7) on a real Temporal dev server with the
//! real `hostfw-worker` binary and a test receiver (axum) that checks every POST's signature
//! itself (HMAC-SHA256 of `"<X-Hostfw-Timestamp>.<body>"` with the webhook's secret file).
//! - `hostfw budget pause` produces a `target_paused` event, delivered once, signed, with the
//!   event id of the site database's outbox; `notifications list` shows it delivered;
//! - the receiver goes down (answers 503): a freeze's event fails and is scheduled for retry
//!   (its last error kept); the worker is killed with SIGKILL; the receiver comes back; the
//!   restarted worker delivers the event: nothing was lost, under the same event id;
//! - `/metrics` counts the deliveries by outcome.
//!
//! With `HOSTFW_RECORD_HISTORIES=1` it records the Site Notifier's history as `site-notifier`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use hmac::{Hmac, Mac};
use hostfw_model::NotificationKind;
use hostfw_tests::{free_port, Catalog, ChildWorker, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::names::SITE_NOTIFIER_ID;
use hostfw_workflows::SiteNotifierWorkflow;

const SECRET: &str = "webhook-secret-for-the-e2e-test";

const FLEET: &str = r#"
[[host]]
id = "a"
vendor = "Lenovo"
model = "SR630"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" } ]
"#;

const IMAGES: &[(&str, &str, &str)] = &[("lenovo/uefi-3.0.bin", "^BIOS$", "3.0")];

/// One POST the receiver took.
#[derive(Debug, Clone)]
struct Received {
    event_id: String,
    body: serde_json::Value,
    /// The signature matched the secret, the timestamp and the body.
    signed: bool,
}

#[derive(Clone, Default)]
struct Receiver {
    up: Arc<AtomicBool>,
    got: Arc<Mutex<Vec<Received>>>,
    refused: Arc<Mutex<u32>>,
}

fn signature_ok(headers: &HeaderMap, body: &str) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let Some(hex_sig) = header("x-hostfw-signature").strip_prefix("sha256=").map(str::to_string) else {
        return false;
    };
    let Ok(sig) = hex::decode(hex_sig) else { return false };
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{}.{body}", header("x-hostfw-timestamp")).as_bytes());
    mac.verify_slice(&sig).is_ok()
}

async fn hook(State(r): State<Receiver>, headers: HeaderMap, body: String) -> StatusCode {
    if !r.up.load(Ordering::SeqCst) {
        *r.refused.lock().unwrap() += 1;
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let event_id = headers.get("x-hostfw-event-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let signed = signature_ok(&headers, &body);
    // A tampered body must not verify with the same headers (the check itself can fail).
    assert!(!signature_ok(&headers, &format!("{body} ")), "a changed body still verified");
    let body = serde_json::from_str(&body).unwrap_or(serde_json::Value::Null);
    r.got.lock().unwrap().push(Received { event_id, body, signed });
    StatusCode::OK
}

impl Receiver {
    async fn start(port: u16) -> Receiver {
        let r = Receiver::default();
        r.up.store(true, Ordering::SeqCst);
        let app = Router::new().route("/hook", post(hook)).with_state(r.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        r
    }

    fn of_kind(&self, kind: NotificationKind) -> Vec<Received> {
        self.got.lock().unwrap().iter().filter(|r| r.body["kind"] == kind.as_str()).cloned().collect()
    }
}

fn webhook(port: u16) -> toml::Value {
    let mut t = toml::Table::new();
    t.insert("name".into(), "ops".into());
    t.insert("url".into(), format!("http://127.0.0.1:{port}/hook").into());
    t.insert("secret_file".into(), "hook.secret".into());
    toml::Value::Table(t)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_signed_delivered_and_survive_a_receiver_outage_and_a_worker_sigkill() {
    let port = free_port();
    let metrics = format!("127.0.0.1:{}", free_port());
    let receiver = Receiver::start(port).await;
    let model = HostModel::new("sr630", "Lenovo", "SR630").component(
        "uefi",
        "^BIOS$",
        [Firmware::file("3.0", "lenovo/uefi-3.0.bin")],
    );
    let config = SiteToml::default()
        .catalog(&Catalog::of([model]))
        .manager(10, "1h")
        .site_workflows(true)
        .explorer_interval("1h")
        .firmware_global("autoupdate", false)
        .set("worker", "metrics_listen", metrics.as_str())
        .set("notifications", "retry_first", "1s")
        .set("notifications", "retry_max", "2s")
        .set("notifications", "poll_interval", "200ms")
        .set("notifications", "webhooks", toml::Value::Array(vec![webhook(port)]));
    let secret = format!("{SECRET}\n");
    let files = [("hook.secret", secret.as_str())];
    let site = Site::start(SiteSpec {
        fleet: FLEET,
        config,
        images: IMAGES,
        files: &files,
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let mut worker = ChildWorker::start(&site).await;

    // A target paused by hand: one signed target_paused event, delivered.
    let target = ["--model", "SR630", "--component", "uefi", "--version", "3.0"];
    site.cli(&[&["budget", "pause"], &target[..], &["--reason", "vendor recall"]].concat()).await.unwrap();
    let got = site
        .wait_for("the target_paused event at the receiver", Duration::from_secs(60), || async {
            let got = receiver.of_kind(NotificationKind::TargetPaused);
            (!got.is_empty()).then_some(got)
        })
        .await;
    assert_eq!(got.len(), 1, "{got:?}");
    let paused = &got[0];
    assert!(paused.signed, "the signature verifies with the webhook's secret: {paused:?}");
    assert_eq!(paused.body["site"], "e2e");
    assert_eq!(paused.body["data"]["reason"], "vendor recall");
    assert_eq!(paused.body["data"]["cause"], "operator");
    let stored = site.store.notification_list(10).await.unwrap();
    let event = stored.iter().find(|r| r.event.kind == NotificationKind::TargetPaused).expect("in the outbox");
    assert_eq!(paused.event_id, event.event.id, "the header carries the outbox's event id");
    assert_eq!(paused.body["id"], event.event.id.as_str());
    site.wait_for("the delivery to be recorded", Duration::from_secs(30), || async {
        let list = site.store.notification_list(10).await.ok()?;
        let r = list.into_iter().find(|r| r.event.kind == NotificationKind::TargetPaused)?;
        (r.deliveries.first()?.state == "delivered").then_some(())
    })
    .await;
    let listed = site.cli(&["notifications", "list"]).await.unwrap();
    assert!(listed.contains("target_paused") && listed.contains("ops: delivered (1 attempts)"), "{listed}");

    // The receiver goes down; a freeze's event fails and waits for its retry.
    receiver.up.store(false, Ordering::SeqCst);
    site.cli(&["freeze", "--reason", "datacenter power work"]).await.unwrap();
    let failed = site
        .wait_for("a failed attempt of the freeze event", Duration::from_secs(60), || async {
            let list = site.store.notification_list(10).await.ok()?;
            let r = list.into_iter().find(|r| r.event.kind == NotificationKind::FreezeChanged)?;
            let d = r.deliveries.first()?.clone();
            (d.attempts >= 1 && d.state == "pending").then_some((r.event.id, d))
        })
        .await;
    let (freeze_id, delivery) = failed;
    assert!(delivery.last_error.as_deref().is_some_and(|e| e.contains("503")), "{delivery:?}");
    assert!(*receiver.refused.lock().unwrap() >= 1);

    // SIGKILL the worker while the event is undelivered; the receiver comes back; a new worker
    // delivers it.
    worker.kill_9();
    receiver.up.store(true, Ordering::SeqCst);
    worker.restart().await;
    let got = site
        .wait_for("the freeze event after the restart", Duration::from_secs(120), || async {
            let got = receiver.of_kind(NotificationKind::FreezeChanged);
            (!got.is_empty()).then_some(got)
        })
        .await;
    assert!(got.iter().all(|r| r.signed && r.event_id == freeze_id), "{got:?}");
    assert_eq!(got[0].body["data"]["action"], "set");
    assert_eq!(got[0].body["data"]["reason"], "datacenter power work");
    site.wait_for("the freeze delivery to be recorded", Duration::from_secs(30), || async {
        let list = site.store.notification_list(10).await.ok()?;
        let r = list.into_iter().find(|r| r.event.id == freeze_id)?;
        (r.deliveries.first()?.state == "delivered").then_some(())
    })
    .await;
    assert_eq!(site.store.notification_pending().await.unwrap(), 0);

    // The JSON read and the metrics.
    let json = site.cli(&["--format", "json", "notifications", "list"]).await.unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = &json[0];
    assert_eq!(first["kind"], "freeze_changed", "{json:#}");
    assert!(first["deliveries"][0]["delivered_at"].is_string(), "{json:#}");
    let page = hostfw_tests::metrics_page::scrape(&metrics).await;
    // (`scrape` checked every sample's `site` label and took it off.)
    for line in
        ["hostfw_notification_deliveries_total{outcome=\"delivered\"} 2", "hostfw_notification_deliveries_pending 0"]
    {
        assert!(page.lines().any(|l| l == line), "{line} in {page}");
    }
    let failed = page.lines().find(|l| l.starts_with("hostfw_notification_deliveries_total{outcome=\"failed\"}"));
    assert!(failed.is_some_and(|l| !l.ends_with(" 0")), "the refused attempts are counted: {page}");

    // One round completes on the new worker before the history is recorded.
    site.wait_for("a notifier round to complete", Duration::from_secs(150), || async {
        let handle = site.client.get_workflow_handle::<SiteNotifierWorkflow>(SITE_NOTIFIER_ID.to_string());
        let status = handle
            .query(SiteNotifierWorkflow::status, (), temporalio_client::WorkflowQueryOptions::default())
            .await
            .ok()?;
        (status.rounds >= 1).then_some(())
    })
    .await;
    site.record_workflow_history::<SiteNotifierWorkflow>(SITE_NOTIFIER_ID, "site-notifier").await;
    drop(worker);
    site.shutdown().await;
}
