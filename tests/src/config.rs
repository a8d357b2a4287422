//! A typed site-config builder: [`SiteToml`] holds the tables of a `site.toml` as TOML values and
//! renders the text that `hostfw_model::SiteConfig::load` reads. Tests and benchmarks set what
//! they need with methods (`.max_uploads(2)`, `.catalog(&r760())`) instead of formatting TOML
//! strings by hand; a setting without its own method goes through the table setters
//! (`.host_reprovision("power_drain_off_wait", "1s")`).
//!
//! [`SiteToml::default`] is the end-to-end tests' site: short Redfish timeouts, host workflow
//! polls of one second, a one-second retry interval. The addresses (Temporal, artifact server,
//! database) are set by whoever starts the site ([`crate::Site::start`], a benchmark).

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use hostfw_model::SiteConfig;
use toml::{Table, Value};

use crate::fixtures::{Catalog, HostModel};

/// The tables of one `site.toml`.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteToml {
    tables: Table,
}

impl Default for SiteToml {
    /// The end-to-end site: [`SiteToml::new`]`("e2e")` with [`SiteToml::short_host_polls`].
    fn default() -> Self {
        SiteToml::new("e2e").short_host_polls()
    }
}

impl SiteToml {
    /// A site named `name`: SQLite `site.db` and `data/` in the site directory, Temporal on
    /// 127.0.0.1:7233 (namespace `default`, task queue `hostfw-<name>`), metrics on a port the
    /// system picks, no site workflows, Redfish timeouts 5 s / task 2 min, firmware in
    /// `firmware/`, Scout packages in `scout/`, a failed host retried after 1 s.
    pub fn new(name: &str) -> SiteToml {
        let mut s = SiteToml { tables: Table::new() };
        s = s
            .set("site", "name", name)
            .set("site", "database_url", "sqlite://site.db")
            .set("site", "data_dir", "data")
            .set("temporal", "namespace", "default")
            .set("temporal", "task_queue", format!("hostfw-{name}"))
            .set("worker", "metrics_listen", "127.0.0.1:0")
            .site_workflows(false)
            .temporal_port(7233)
            .artifact_port(0)
            .set("redfish", "timeout", "5s")
            .set("redfish", "task_timeout", "2m")
            .set("firmware_global", "firmware_directory", "firmware")
            .set("firmware_global", "scout_scripts_directory", "scout")
            .set("firmware_global", "host_firmware_upgrade_retry_interval", "1s");
        for table in ["host_reprovision", "machine_updater", "site_explorer"] {
            s.table(table);
        }
        s
    }

    /// Set `key` of `[table]` (a dotted table name, e.g. `host_models.r760`, makes the nesting).
    pub fn set(mut self, table: &str, key: &str, value: impl Into<Value>) -> SiteToml {
        self.table(table).insert(key.to_string(), value.into());
        self
    }

    /// Remove `key` of `[table]`.
    pub fn unset(mut self, table: &str, key: &str) -> SiteToml {
        self.table(table).remove(key);
        self
    }

    /// The value of `key` in `[table]`.
    pub fn get(&self, table: &str, key: &str) -> Option<&Value> {
        let mut t = &self.tables;
        for part in table.split('.') {
            t = t.get(part)?.as_table()?;
        }
        t.get(key)
    }

    fn table(&mut self, dotted: &str) -> &mut Table {
        let mut t = &mut self.tables;
        for part in dotted.split('.') {
            t = t
                .entry(part.to_string())
                .or_insert_with(|| Value::Table(Table::new()))
                .as_table_mut()
                .unwrap_or_else(|| panic!("{dotted}: {part} is not a table"));
        }
        t
    }

    // [site]

    /// The site database: `sqlite://site.db` (relative to the site directory) by default.
    pub fn database_url(self, url: &str) -> SiteToml {
        self.set("site", "database_url", url)
    }

    // [temporal]

    /// The Temporal frontend on 127.0.0.1.
    pub fn temporal_port(self, port: u16) -> SiteToml {
        self.set("temporal", "address", format!("http://127.0.0.1:{port}"))
    }

    pub fn task_queue(self, queue: &str) -> SiteToml {
        self.set("temporal", "task_queue", queue)
    }

    // [worker]

    /// The worker's artifact server (what BMCs download images from) on 127.0.0.1.
    pub fn artifact_port(self, port: u16) -> SiteToml {
        self.set("worker", "artifact_listen", format!("127.0.0.1:{port}")).set(
            "worker",
            "artifact_base_url",
            format!("http://127.0.0.1:{port}"),
        )
    }

    /// Whether the worker starts the site workflows (Machine Update Manager, Site Explorer).
    pub fn site_workflows(self, on: bool) -> SiteToml {
        self.set("worker", "site_workflows", on)
    }

    // [redfish]

    pub fn redfish(self, key: &str, value: impl Into<Value>) -> SiteToml {
        self.set("redfish", key, value)
    }

    // [host_reprovision]

    pub fn host_reprovision(self, key: &str, value: impl Into<Value>) -> SiteToml {
        self.set("host_reprovision", key, value)
    }

    /// Host workflow polls of one second: verify every 1 s (20 times at most), task monitor every
    /// 1 s, the BMC healthy after 2 reads.
    pub fn short_host_polls(self) -> SiteToml {
        self.host_reprovision("verify_poll_interval", "1s")
            .host_reprovision("verify_max_polls", 20)
            .host_reprovision("task_poll_interval", "1s")
            .host_reprovision("bmc_healthy_reads", 2)
    }

    /// `host_reprovision.max_retries`.
    pub fn max_retries(self, n: i64) -> SiteToml {
        self.host_reprovision("max_retries", n)
    }

    /// `host_reprovision.heartbeat_timeout`, e.g. `"5s"`: how soon a dead worker's activity times out.
    pub fn heartbeat_timeout(self, d: &str) -> SiteToml {
        self.host_reprovision("heartbeat_timeout", d)
    }

    /// The three power-drain waits (`power_drain_{off,cycle,on}_wait`) set to `d`.
    pub fn power_drain_waits(self, d: &str) -> SiteToml {
        self.host_reprovision("power_drain_off_wait", d)
            .host_reprovision("power_drain_cycle_wait", d)
            .host_reprovision("power_drain_on_wait", d)
    }

    // [firmware_global]

    pub fn firmware_global(self, key: &str, value: impl Into<Value>) -> SiteToml {
        self.set("firmware_global", key, value)
    }

    /// `firmware_global.max_uploads`: site-wide upload slots.
    pub fn max_uploads(self, n: i64) -> SiteToml {
        self.firmware_global("max_uploads", n)
    }

    // [machine_updater]

    pub fn machine_updater(self, key: &str, value: impl Into<Value>) -> SiteToml {
        self.set("machine_updater", key, value)
    }

    /// The Machine Update Manager: at most `ceiling` hosts at once
    /// (`max_concurrent_machine_updates_absolute`), a pass every `interval`.
    pub fn manager(self, ceiling: i64, interval: &str) -> SiteToml {
        self.machine_updater("max_concurrent_machine_updates_absolute", ceiling)
            .machine_updater("machine_update_run_interval", interval)
    }

    // [site_explorer]

    pub fn site_explorer(self, key: &str, value: impl Into<Value>) -> SiteToml {
        self.set("site_explorer", key, value)
    }

    /// `site_explorer.run_interval`.
    pub fn explorer_interval(self, d: &str) -> SiteToml {
        self.site_explorer("run_interval", d)
    }

    // [host_models.*]

    /// Add every model of `catalog` (replacing a model of the same key).
    pub fn catalog(mut self, catalog: &Catalog) -> SiteToml {
        for model in catalog.models() {
            self = self.model(model);
        }
        self
    }

    /// Add one host model.
    pub fn model(mut self, model: &HostModel) -> SiteToml {
        self.table("host_models").insert(model.key().to_string(), Value::Table(model.table().clone()));
        self
    }

    /// Add the `[host_models.*]` tables of a catalog document written as TOML (the form of the
    /// catalogs in `config/`), for a catalog that is data rather than a variant of a fixture.
    pub fn catalog_toml(mut self, text: &str) -> SiteToml {
        let doc: Table = toml::from_str(text).unwrap_or_else(|e| panic!("catalog TOML: {e}\n{text}"));
        for (key, value) in doc {
            assert_eq!(key, "host_models", "a catalog document has only [host_models.*] tables");
            let models = value.as_table().cloned().unwrap_or_default();
            self.table("host_models").extend(models);
        }
        self
    }

    /// The `site.toml` text.
    pub fn render(&self) -> String {
        toml::to_string(&self.tables).expect("a TOML table renders")
    }

    /// Write `<dir>/site.toml` and load it as the worker and the CLI will.
    pub fn write(&self, dir: &Path) -> anyhow::Result<(PathBuf, SiteConfig)> {
        let path = dir.join("site.toml");
        std::fs::write(&path, self.render())?;
        let site = SiteConfig::load(&path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        Ok((path, site))
    }
}
