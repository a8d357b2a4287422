//! What the operator CLI tests share: a temporary offline site ([`Site`]: its config built with
//! `hostfw-fixtures`' [`SiteToml`], a SQLite site database, a firmware directory with the
//! catalog's images), running `hostfw` commands on it through `hostfw_starter::run`, and the
//! inventory reports and documents the tests store or pass.
//!
//! Owns the fixtures only; must not hold a test, and must not need the network.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{TimeZone, Utc};
use clap::error::ErrorKind;
use clap::Parser;
use hostfw_fixtures::{Firmware, HostModel, SiteToml};
use hostfw_starter::cli::Cli;
use hostfw_starter::output;
use hostfw_store::Store;

/// The offline site's config: `cli-test` with SQLite, site workflows' settings at their defaults,
/// firmware auto-update on, and the R760 of [`r760`].
pub fn site_toml() -> SiteToml {
    SiteToml::minimal("cli-test").firmware_global("autoupdate", true).model(&r760())
}

/// The Dell PowerEdge R760 as its iDRAC reports it: iDRAC 7.10.30.00 then BIOS 2.3.5, both by
/// image file under `dell-r760/`.
pub fn r760() -> HostModel {
    HostModel::new("r760", "Dell", "PowerEdge R760")
        .ordering(&["bmc", "uefi"])
        .component("bmc", "^Installed-.*__iDRAC\\.", [Firmware::file("7.10.30.00", "dell-r760/idrac-7.10.30.00.bin")])
        .component("uefi", "^Installed-.*__BIOS\\.Setup\\.", [Firmware::file("2.3.5", "dell-r760/bios-2.3.5.bin")])
}

/// A runtime catalog document (the file `firmware-config set` reads, not a site.toml; an
/// overlay of a model without its match rules, which the builder does not make) that moves the R760 BMC default and adds a model needing explicit start.
pub const RUNTIME_DOC: &str = r#"
[host_models.r760-bmc]
vendor = "Dell"
model = "PowerEdge R760"
[[host_models.r760-bmc.components.bmc.known_firmware]]
version = "7.20.10.00"
default = true
filename = "dell-r760/idrac-7.20.10.00.bin"

[host_models.gb200]
vendor = "NVIDIA"
model = "GB200 NVL"
ordering = ["bmc"]
explicit_start_needed = true
[host_models.gb200.components.bmc]
current_version_reported_as = "^HGX_FW_BMC_0$"
[[host_models.gb200.components.bmc.known_firmware]]
version = "25.01"
default = true
filename = "gb200/bmc-25.01.fwpkg"
"#;

/// The images of `RUNTIME_DOC`'s defaults, then of `site_toml`'s, under the firmware directory:
/// (path, content).
pub const IMAGES: &[(&str, &str)] = &[
    ("dell-r760/idrac-7.20.10.00.bin", "idrac 7.20.10.00 image"),
    ("gb200/bmc-25.01.fwpkg", "gb200 bmc 25.01 image"),
    ("dell-r760/idrac-7.10.30.00.bin", "idrac 7.10.30.00 image"),
    ("dell-r760/bios-2.3.5.bin", "bios 2.3.5 image"),
];

/// A temporary site: config file ([`site_toml`]), SQLite database and a firmware directory holding [`IMAGES`].
pub struct Site {
    pub dir: PathBuf,
    pub config: PathBuf,
    toml: std::cell::RefCell<SiteToml>,
}

impl Site {
    pub fn new() -> Site {
        Site::with_autoupdate(true)
    }

    pub fn with_autoupdate(autoupdate: bool) -> Site {
        Site::from_toml(site_toml().firmware_global("autoupdate", autoupdate))
    }

    /// A site with `toml` for its config (e.g. [`site_toml`] with a setting added).
    pub fn from_toml(toml: SiteToml) -> Site {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!(
            "hostfw-operator-cli-{}-{nanos:x}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        // Writes the site key too.
        let (config, _) = toml.write(&dir).expect("site.toml");
        for (image, content) in IMAGES {
            let path = dir.join("firmware").join(image);
            std::fs::create_dir_all(path.parent().unwrap()).expect("firmware dir");
            std::fs::write(path, content).expect("image");
        }
        Site { dir, config, toml: toml.into() }
    }

    /// Rewrites the site's `site.toml` with `change` applied to its config (the site key stays).
    pub fn reconfigure(&self, change: impl FnOnce(SiteToml) -> SiteToml) {
        let toml = change(self.toml.borrow().clone());
        toml.write(&self.dir).expect("site.toml");
        *self.toml.borrow_mut() = toml;
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    pub async fn run(&self, args: &[&str]) -> (anyhow::Result<()>, String) {
        let mut full = vec!["hostfw", "--config", self.config.to_str().expect("utf-8 path"), "--local"];
        full.extend_from_slice(args);
        let cli = Cli::try_parse_from(full).unwrap_or_else(|e| panic!("{args:?} does not parse: {e}"));
        output::capture(hostfw_starter::run(cli)).await
    }

    /// Runs a command that must succeed; returns what it printed.
    pub async fn ok(&self, args: &[&str]) -> String {
        let (res, out) = self.run(args).await;
        if let Err(e) = res {
            panic!("{args:?} failed: {e:#}\noutput:\n{out}");
        }
        out
    }

    /// Runs a command that must fail; returns the error with its causes.
    pub async fn fails(&self, args: &[&str]) -> String {
        let (res, out) = self.run(args).await;
        match res {
            Ok(()) => panic!("{args:?} succeeded but should fail; output:\n{out}"),
            Err(e) => format!("{e:#}"),
        }
    }

    pub async fn store(&self) -> Store {
        let key = hostfw_store::SiteKey::from_file(&self.dir.join("site.key")).expect("site key");
        Store::connect(&format!("sqlite://{}", self.dir.join("site.db").display()))
            .await
            .expect("open store")
            .with_site_key(Some(key))
    }

    pub async fn add_machines(&self, ids: &[&str]) {
        for (i, id) in ids.iter().enumerate() {
            let bmc = format!("10.0.0.{}:443", i + 1);
            self.ok(&["machine", "add", "--id", id, "--bmc", &bmc]).await;
        }
    }

    pub async fn audit_count(&self) -> usize {
        let store = self.store().await;
        let n = store.audit_list(10_000).await.unwrap().len();
        store.close().await;
        n
    }

    pub async fn window(&self, id: &str) -> (Option<i64>, Option<i64>) {
        let store = self.store().await;
        let m = store.machine_get(id).await.unwrap().expect("machine");
        store.close().await;
        (m.window.map(|w| w.start_ms), m.window.map(|w| w.end_ms))
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn parse_err(args: &[&str]) -> ErrorKind {
    let mut full = vec!["hostfw"];
    full.extend_from_slice(args);
    Cli::try_parse_from(full).expect_err("should be refused by clap").kind()
}

pub fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

/// `t` in the `+0000` form and as RFC 3339 UTC.
pub fn utc_forms(t: chrono::DateTime<Utc>) -> (String, String) {
    (t.format("%Y-%m-%dT%H:%M:%S+0000").to_string(), t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

pub fn whole_second(t: chrono::DateTime<Utc>) -> chrono::DateTime<Utc> {
    Utc.timestamp_opt(t.timestamp(), 0).unwrap()
}

pub const IDRAC: &str = "Installed-25227__iDRAC.Embedded.1-1";
pub const BIOS: &str = "Installed-159-2.1.0__BIOS.Setup.1-1";

/// An R760 report with these (Version as sent, Status.State) for its iDRAC and BIOS members,
/// read the way the crawl reads them.
pub fn r760_report(idrac: (Option<&str>, &str), bios: (Option<&str>, &str)) -> hostfw_model::InventoryReport {
    let member = |id: &str, (version, state): (Option<&str>, &str)| {
        hostfw_model::InventoryMember::reported(
            id,
            format!("/redfish/v1/UpdateService/FirmwareInventory/{id}"),
            version,
            Some(state),
        )
    };
    hostfw_model::InventoryReport {
        vendor: "Dell".into(),
        model: "PowerEdge R760".into(),
        serial: None,
        power_state: Some("On".into()),
        members: vec![member(IDRAC, idrac), member(BIOS, bios)],
    }
}

/// m1: iDRAC `Version: null`, BIOS padded but equal (only unknown: never started); m2: iDRAC
/// drifted, BIOS "Not Present"; m3: compliant with an NBSP after the BIOS version.
pub async fn site_with_unreported_versions() -> Site {
    let site = Site::new();
    site.add_machines(&["m1", "m2", "m3"]).await;
    let store = site.store().await;
    let reports = [
        ("10.0.0.1:443", "m1", r760_report((None, "Enabled"), (Some("2.3.5 "), "Enabled"))),
        ("10.0.0.2:443", "m2", r760_report((Some("7.00.00.00"), "Enabled"), (Some("Not Present"), "Enabled"))),
        ("10.0.0.3:443", "m3", r760_report((Some("7.10.30.00"), "Enabled"), (Some("2.3.5\u{a0}"), "Enabled"))),
    ];
    for (bmc, id, report) in reports {
        store.report_put(&bmc.parse().unwrap(), Some(id), &Ok(report)).await.expect("report stored");
    }
    store.close().await;
    site
}
