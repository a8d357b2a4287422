//! Live configuration: which site config keys a running worker may take from a re-read file
//! (`live`) and which only take effect when it restarts (`restart`), and what a reload of a new
//! file over the running one would change.
//!
//! Owns the one table of that split ([`reload_kind`]; docs/config.md marks every key from it and
//! a test reconciles the two) and the comparison of two loaded configs key by key
//! ([`ReloadPlan::between`]). It must not read files, decide logging or storage, or hand out
//! values: a plan names keys only, never their values (a database URL may carry a password).

use serde::Serialize;

use super::SiteConfig;

/// Whether a changed key can take effect in a running worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReloadKind {
    /// Read per scheduler pass, per crawl or per activity (host workflow settings: for host
    /// workflows started from then on): a reload applies it.
    Live,
    /// Read once when the worker starts (connections, listeners, the Redfish client settings,
    /// the catalog's sources): a reload that changes it is refused with "needs a restart".
    Restart,
}

impl ReloadKind {
    /// `live` or `restart`, as docs/config.md marks it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReloadKind::Live => "live",
            ReloadKind::Restart => "restart",
        }
    }
}

/// The reload kind of the site config key `key` (dotted, `table.key`; any `host_models` key).
/// A key this table does not know is `Restart`: never applied live by accident.
pub fn reload_kind(key: &str) -> ReloadKind {
    let (table, name) = key.split_once('.').unwrap_or((key, ""));
    match table {
        "machine_updater" | "site_explorer" | "scripts" | "notifications" => ReloadKind::Live,
        // Polled by the activities with the Redfish client's settings too (`ActivitySettings`).
        "host_reprovision" if name == "task_poll_interval" => ReloadKind::Restart,
        "host_reprovision" => ReloadKind::Live,
        // The artifact server's roots and the upload slots are set up at start.
        "firmware_global" if matches!(name, "firmware_directory" | "scout_scripts_directory" | "max_uploads") => {
            ReloadKind::Restart
        }
        "firmware_global" => ReloadKind::Live,
        // Read by the worker's patch activation callback each time a change may activate.
        "worker" if name == "workflow_changes_through" => ReloadKind::Live,
        _ => ReloadKind::Restart,
    }
}

/// What loading a new site config over the running one would change, by key (sorted, dotted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReloadPlan {
    /// Changed keys a running worker takes at once.
    pub live: Vec<String>,
    /// Changed keys that need a restart; any of them refuses the whole reload.
    pub restart: Vec<String>,
}

impl ReloadPlan {
    /// The keys whose values differ between `running` and `new`. A table's keys are compared
    /// one by one; the static catalog (`host_models`) is compared whole.
    pub fn between(running: &SiteConfig, new: &SiteConfig) -> ReloadPlan {
        let mut changed = Vec::new();
        for (table, old_value, new_value) in
            tables(running).into_iter().zip(tables(new)).map(|((t, a), (_, b))| (t, a, b))
        {
            let empty = serde_json::Map::new();
            let old_keys = old_value.as_object().unwrap_or(&empty);
            let new_keys = new_value.as_object().unwrap_or(&empty);
            let mut names: Vec<&String> = old_keys.keys().chain(new_keys.keys()).collect();
            names.sort();
            names.dedup();
            for name in names {
                if old_keys.get(name) != new_keys.get(name) {
                    changed.push(format!("{table}.{name}"));
                }
            }
        }
        // Never serialized, so compared apart.
        if running.credentials.default_password != new.credentials.default_password {
            changed.push("credentials.default_password".to_string());
        }
        if running.host_models != new.host_models {
            changed.push("host_models".to_string());
        }
        changed.sort();
        let (live, restart) = changed.into_iter().partition(|key| reload_kind(key) == ReloadKind::Live);
        ReloadPlan { live, restart }
    }

    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty() && self.restart.is_empty()
    }
}

/// Every table of the site config but `host_models`, as JSON values (same order for any config).
fn tables(c: &SiteConfig) -> Vec<(&'static str, serde_json::Value)> {
    let json = |v: Result<serde_json::Value, serde_json::Error>| v.unwrap_or(serde_json::Value::Null);
    vec![
        ("site", json(serde_json::to_value(&c.site))),
        ("temporal", json(serde_json::to_value(&c.temporal))),
        ("worker", json(serde_json::to_value(&c.worker))),
        ("credentials", json(serde_json::to_value(&c.credentials))),
        ("redfish", json(serde_json::to_value(&c.redfish))),
        ("host_reprovision", json(serde_json::to_value(&c.host_reprovision))),
        ("firmware_global", json(serde_json::to_value(&c.firmware_global))),
        ("machine_updater", json(serde_json::to_value(&c.machine_updater))),
        ("site_explorer", json(serde_json::to_value(&c.site_explorer))),
        ("scripts", json(serde_json::to_value(&c.scripts))),
        ("notifications", json(serde_json::to_value(&c.notifications))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn config(extra: &str) -> SiteConfig {
        let text = format!("[site]\nname = \"s\"\n{extra}");
        SiteConfig::from_toml_str(&text, Path::new("/etc/hostfw/site.toml")).expect("config loads")
    }

    #[test]
    fn the_same_file_changes_nothing() {
        let a = config("[machine_updater]\nmax_concurrent_machine_updates_absolute = 3\n");
        assert!(ReloadPlan::between(&a, &a.clone()).is_empty());
    }

    #[test]
    fn live_and_restart_keys_are_told_apart() {
        let running = config("[machine_updater]\nmax_concurrent_machine_updates_absolute = 3\n");
        let new = config(
            "[machine_updater]\nmax_concurrent_machine_updates_absolute = 5\ncanary_soak = \"1m\"\n\
             [temporal]\naddress = \"http://10.0.0.1:7233\"\n[worker]\nmetrics_listen = \"0.0.0.0:9464\"\n",
        );
        let plan = ReloadPlan::between(&running, &new);
        assert_eq!(
            plan.live,
            ["machine_updater.canary_soak", "machine_updater.max_concurrent_machine_updates_absolute"]
        );
        assert_eq!(plan.restart, ["temporal.address", "worker.metrics_listen"]);
    }

    #[test]
    fn a_key_set_or_unset_counts_and_secrets_and_the_catalog_are_compared() {
        let running = config("");
        let new = config(
            "[machine_updater]\nmax_concurrent_machine_updates_percent = 10\n\
             [credentials]\ndefault_username = \"root\"\ndefault_password = \"pw\"\n",
        );
        let plan = ReloadPlan::between(&running, &new);
        assert_eq!(plan.live, ["machine_updater.max_concurrent_machine_updates_percent"]);
        assert_eq!(plan.restart, ["credentials.default_password", "credentials.default_username"]);
        let back = ReloadPlan::between(&new, &running);
        assert_eq!(back.live, plan.live, "unsetting a key changes it too");
        let with_model = config("[host_models.r760]\nvendor = \"Dell\"\nmodel = \"R760\"\n");
        assert_eq!(ReloadPlan::between(&running, &with_model).restart, ["host_models"]);
    }

    #[test]
    fn kinds() {
        assert_eq!(reload_kind("machine_updater.canary_waves"), ReloadKind::Live);
        assert_eq!(reload_kind("firmware_global.autoupdate"), ReloadKind::Live);
        assert_eq!(reload_kind("firmware_global.max_uploads"), ReloadKind::Restart);
        assert_eq!(reload_kind("host_reprovision.max_retries"), ReloadKind::Live);
        assert_eq!(reload_kind("host_reprovision.task_poll_interval"), ReloadKind::Restart);
        assert_eq!(reload_kind("site.name"), ReloadKind::Restart);
        assert_eq!(reload_kind("no_such_table.key"), ReloadKind::Restart);
    }
}
