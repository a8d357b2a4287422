//! Shared test helpers: fleets on port 0, a small Redfish client on reqwest, a tolerant task
//! poller, an image file server for SimpleUpdate, and `eventually` (poll with a deadline).
#![allow(dead_code)] // each test binary uses a different subset

use std::future::Future;
use std::time::Duration;

use hostfw_bmc_sim::{FirmwareSpec, FleetSpec, HostSpec, RunningFleet, SimHost};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

pub const BMC_MEMBER: &str = "Installed-25227-7.00.00.00__iDRAC.Embedded.1-1";
pub const BIOS_MEMBER: &str = "Installed-159-2.1.0__BIOS.Setup.1-1";
/// Generous: CI machines are slow, and every wait polls, so passing tests stay fast.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// A Dell-like host on 127.0.0.1:0 with fast timings.
pub fn host(id: &str) -> HostSpec {
    let mut bios = FirmwareSpec::new(BIOS_MEMBER, "2.1.0");
    bios.name = Some("BIOS".into());
    let mut h = HostSpec::new(
        id,
        "Dell",
        "PowerEdge R760",
        "127.0.0.1:0".parse().unwrap(),
        vec![FirmwareSpec::new(BMC_MEMBER, "7.00.00.00"), bios],
    );
    h.serial = Some(format!("SN-{id}"));
    h.task_seconds = 0.3;
    h.reset_seconds = 0.2;
    h.manager_reset_seconds = 1.0;
    h
}

pub async fn start_fleet(hosts: Vec<HostSpec>) -> RunningFleet {
    hostfw_bmc_sim::start(FleetSpec::new(hosts)).await.expect("fleet starts")
}

/// Poll `f` every 50 ms until it yields `Some`, or panic after [`DEADLINE`].
pub async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A minimal Redfish client: Basic auth by default, or a session token.
#[derive(Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub user: String,
    pub pass: String,
    pub token: Option<String>,
    pub anonymous: bool,
}

/// A response read in full.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub raw: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    /// `error.@Message.ExtendedInfo[0].MessageId` of a Redfish error body.
    pub fn message_id(&self) -> &str {
        self.body["error"]["@Message.ExtendedInfo"][0]["MessageId"].as_str().unwrap_or("")
    }
}

impl Client {
    pub fn new(h: &SimHost) -> Self {
        Client {
            http: reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap(),
            base: h.base_url.clone(),
            user: h.username.clone(),
            pass: h.password.expose().to_string(),
            token: None,
            anonymous: false,
        }
    }

    pub fn anonymous(h: &SimHost) -> Self {
        Client { anonymous: true, ..Self::new(h) }
    }

    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let url = if path.starts_with("http") { path.to_string() } else { format!("{}{}", self.base, path) };
        let rb = self.http.request(method, url);
        match (&self.token, self.anonymous) {
            (_, true) => rb,
            (Some(t), _) => rb.header("X-Auth-Token", t),
            (None, _) => rb.basic_auth(&self.user, Some(&self.pass)),
        }
    }

    pub async fn send(&self, rb: reqwest::RequestBuilder) -> Reply {
        let resp = rb.send().await.expect("request sent");
        read(resp).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(self.request(Method::GET, path)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(self.request(Method::POST, path).json(&body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Reply {
        self.send(self.request(Method::PATCH, path).json(&body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.send(self.request(Method::PUT, path).json(&body)).await
    }

    /// Whether the BMC's ServiceRoot can be reached at all (any HTTP answer counts).
    pub async fn reachable(&self) -> bool {
        self.http.get(format!("{}/redfish/v1", self.base)).send().await.is_ok()
    }

    /// GET that must succeed with 200; returns the body.
    pub async fn resource(&self, path: &str) -> Value {
        let r = self.get(path).await;
        assert_eq!(r.status, StatusCode::OK, "GET {path}: {}", r.raw);
        r.body
    }

    pub async fn version_of(&self, member: &str) -> String {
        let v = self.resource(&format!("/redfish/v1/UpdateService/FirmwareInventory/{member}")).await;
        v["Version"].as_str().unwrap().to_string()
    }

    pub async fn power_state(&self) -> String {
        let v = self.resource("/redfish/v1/Systems/System.Embedded.1").await;
        v["PowerState"].as_str().unwrap().to_string()
    }

    /// Multipart upload to the advertised `MultipartHttpPushUri`.
    pub async fn push_multipart(&self, image: Vec<u8>, params: Value) -> Reply {
        let svc = self.resource("/redfish/v1/UpdateService").await;
        let uri = svc["MultipartHttpPushUri"].as_str().expect("MultipartHttpPushUri advertised").to_string();
        self.push_multipart_to(&uri, image, params).await
    }

    pub async fn push_multipart_to(&self, uri: &str, image: Vec<u8>, params: Value) -> Reply {
        let len = image.len() as u64;
        let form = reqwest::multipart::Form::new()
            .part(
                "UpdateParameters",
                reqwest::multipart::Part::text(params.to_string()).mime_str("application/json").unwrap(),
            )
            .part(
                "UpdateFile",
                reqwest::multipart::Part::stream_with_length(image, len)
                    .file_name("firmware.bin")
                    .mime_str("application/octet-stream")
                    .unwrap(),
            );
        self.send(self.request(Method::POST, uri).multipart(form)).await
    }

    /// Raw upload to the advertised `HttpPushUri`.
    pub async fn push_http(&self, image: Vec<u8>) -> Reply {
        let svc = self.resource("/redfish/v1/UpdateService").await;
        let uri = svc["HttpPushUri"].as_str().expect("HttpPushUri advertised").to_string();
        let rb = self.request(Method::POST, &uri).header("Content-Type", "application/octet-stream").body(image);
        self.send(rb).await
    }

    /// POST to the advertised SimpleUpdate target.
    pub async fn simple_update(&self, body: Value) -> Reply {
        let svc = self.resource("/redfish/v1/UpdateService").await;
        let target = svc["Actions"]["#UpdateService.SimpleUpdate"]["target"].as_str().unwrap().to_string();
        self.post(&target, body).await
    }

    /// Log in; later requests use the token.
    pub async fn login(&mut self) -> Reply {
        let body = json!({"UserName": self.user, "Password": self.pass});
        let r =
            self.send(self.http.post(format!("{}/redfish/v1/SessionService/Sessions", self.base)).json(&body)).await;
        if r.status == StatusCode::CREATED {
            self.token = r.header("X-Auth-Token").map(str::to_string);
        }
        r
    }

    /// Follow an accepted update the way a tolerant client does (202 → poll, 200+Task →
    /// check state, 204 → done, 404 after a final answer → done) and return the final Task.
    pub async fn wait_task(&self, accepted: &Reply) -> Value {
        assert!(
            [StatusCode::ACCEPTED, StatusCode::NO_CONTENT, StatusCode::OK].contains(&accepted.status),
            "update not accepted: {} {}",
            accepted.status,
            accepted.raw
        );
        let location = accepted.header("Location").map(str::to_string);
        let monitor = location.clone().or_else(|| accepted.body["@odata.id"].as_str().map(str::to_string)).unwrap();
        let task_uri = accepted.body["@odata.id"].as_str().map(str::to_string).unwrap_or_else(|| monitor.clone());
        eventually("task finished", || async {
            let r = self.get(&monitor).await;
            match r.status.as_u16() {
                202 => None,
                200 if is_finished_task(&r.body) => Some(()),
                200 => None,
                204 | 404 => Some(()),
                other => panic!("monitor {monitor} answered {other}: {}", r.raw),
            }
        })
        .await;
        let task = self.resource(&task_uri).await;
        assert!(is_finished_task(&task), "task not finished: {task}");
        task
    }
}

pub const SYSTEM: &str = "/redfish/v1/Systems/System.Embedded.1";
pub const SYSTEM_RESET: &str = "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset";
pub const MANAGER_RESET: &str = "/redfish/v1/Managers/BMC/Actions/Manager.Reset";
pub const CHASSIS_RESET: &str = "/redfish/v1/Chassis/1/Actions/Chassis.Reset";

/// Poll until the System reports `PowerState == want`.
pub async fn wait_power(c: &Client, want: &str) {
    eventually(&format!("PowerState {want}"), || async { (c.power_state().await == want).then_some(()) }).await;
}

/// Poll until the BMC stops answering, then until it answers again.
pub async fn wait_down_and_up(c: &Client) {
    eventually("BMC unreachable", || async { (!c.reachable().await).then_some(()) }).await;
    eventually("BMC back", || async { c.reachable().await.then_some(()) }).await;
}

pub fn is_finished_task(v: &Value) -> bool {
    v["@odata.type"].as_str().is_some_and(|t| t.contains("#Task."))
        && matches!(v["TaskState"].as_str(), Some("Completed" | "Exception" | "Killed" | "Cancelled"))
}

pub fn message_ids(task: &Value) -> Vec<String> {
    task["Messages"].as_array().unwrap().iter().map(|m| m["MessageId"].as_str().unwrap().to_string()).collect()
}

pub fn messages_text(task: &Value) -> String {
    task["Messages"].as_array().unwrap().iter().map(|m| m["Message"].as_str().unwrap()).collect::<Vec<_>>().join(" | ")
}

pub async fn read(resp: reqwest::Response) -> Reply {
    let status = resp.status();
    let headers = resp.headers().clone();
    let raw = resp.text().await.unwrap_or_default();
    let body = serde_json::from_str(&raw).unwrap_or(Value::Null);
    Reply { status, headers, body, raw }
}

/// Serves files over HTTP for SimpleUpdate; dropped with the test runtime.
pub async fn serve_files(files: Vec<(&'static str, Vec<u8>)>) -> String {
    use axum::routing::get;
    let mut app = axum::Router::new();
    for (path, bytes) in files {
        app = app.route(path, get(move || async move { bytes.clone() }));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });
    base
}

/// `../shared/redfish/vendor-mockups/<name>`, or `None` (and a "skipped" line) when absent.
pub fn tree(name: &str) -> Option<std::path::PathBuf> {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/redfish/vendor-mockups").join(name);
    if dir.join("redfish/v1/index.json").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}
