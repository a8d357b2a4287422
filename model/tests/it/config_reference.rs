//! docs/config.md against the code: every key the site config and catalog parsers accept has a
//! row in the reference's tables, and every row names a key they accept. The accepted keys come
//! from the parsers themselves (every table is `deny_unknown_fields`, so an unknown probe key is
//! refused with serde's "expected one of" list), so a key added to a struct and not to the doc,
//! or removed from a struct and left in the doc, fails here. Every key of the site config is
//! marked `live` or `restart` in its table's `reload` column exactly as the worker's live reload
//! treats it (`hostfw_model::config::reload_kind`).

use std::collections::{BTreeMap, BTreeSet};

use hostfw_model::config::{
    reload_kind, ApiSection, CredentialsSection, FirmwareGlobalSection, HostReprovisionSection, MachineUpdaterSection,
    NotificationsSection, RedfishSection, ScriptsSection, SiteExplorerSection, SiteSection, TemporalSection,
    WebhookSection, WorkerSection,
};
use hostfw_model::{
    AcCycleSetting, ComponentDoc, FirmwareEntry, HostModelDoc, LockdownSetting, SiteConfig, UploadSetting,
};
use serde::de::DeserializeOwned;

const REFERENCE: &str = include_str!("../../../docs/config.md");

/// The keys `T` accepts, read from the error on an unknown one.
fn accepted<T: DeserializeOwned + std::fmt::Debug>() -> BTreeSet<String> {
    let err = toml::from_str::<T>("probe_key_no_struct_has = 0").expect_err("an unknown key is refused").to_string();
    // serde: "expected `a`", "expected `a` or `b`", "expected one of `a`, `b`, `c`".
    let list = err
        .split_once("unknown field `probe_key_no_struct_has`, expected ")
        .unwrap_or_else(|| panic!("{} does not list its keys: {err}", std::any::type_name::<T>()))
        .1;
    let list = list.lines().next().unwrap_or_default().trim_start_matches("one of ").replace(" or ", ", ");
    list.split(", ").map(|k| k.trim().trim_matches('`').to_string()).filter(|k| !k.is_empty()).collect()
}

/// Every table prefix the reference documents, with the keys its parser accepts.
fn accepted_by_prefix() -> BTreeMap<&'static str, BTreeSet<String>> {
    BTreeMap::from([
        ("site", accepted::<SiteSection>()),
        ("temporal", accepted::<TemporalSection>()),
        ("worker", accepted::<WorkerSection>()),
        ("api", accepted::<ApiSection>()),
        ("credentials", accepted::<CredentialsSection>()),
        ("redfish", accepted::<RedfishSection>()),
        ("host_reprovision", accepted::<HostReprovisionSection>()),
        ("firmware_global", accepted::<FirmwareGlobalSection>()),
        ("machine_updater", accepted::<MachineUpdaterSection>()),
        ("site_explorer", accepted::<SiteExplorerSection>()),
        ("scripts", accepted::<ScriptsSection>()),
        ("notifications", accepted::<NotificationsSection>()),
        ("notifications.webhooks.*", accepted::<WebhookSection>()),
        ("host_models.*", accepted::<HostModelDoc>()),
        ("host_models.*.lockdown", accepted::<LockdownSetting>()),
        ("host_models.*.ac_cycle", accepted::<AcCycleSetting>()),
        ("host_models.*.components.*", accepted::<ComponentDoc>()),
        ("host_models.*.components.*.upload", accepted::<UploadSetting>()),
        ("host_models.*.components.*.known_firmware", accepted::<FirmwareEntry>()),
    ])
}

/// The dotted keys in the first column of the reference's tables, up to the fleet file section
/// (whose keys belong to bmc-sim's format, not to these parsers).
fn documented_keys() -> Vec<String> {
    let config_part = REFERENCE.split("\n## Fleet file").next().unwrap_or_default();
    let mut keys = Vec::new();
    for line in config_part.lines() {
        let Some(first) = line.strip_prefix("| `").map(|rest| rest.split(" | ").next().unwrap_or_default()) else {
            continue;
        };
        let cell = format!("`{first}");
        keys.extend(cell.split('`').skip(1).step_by(2).map(str::to_string));
    }
    keys
}

#[test]
fn every_config_and_catalog_key_is_documented_and_every_documented_key_exists() {
    let expected = accepted_by_prefix();
    let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for key in documented_keys() {
        let (prefix, name) = key.rsplit_once('.').unwrap_or_else(|| panic!("docs/config.md: `{key}` has no table"));
        assert!(
            expected.contains_key(prefix),
            "docs/config.md documents `{key}`, but `{prefix}` is no table of the site config or catalog"
        );
        let new = documented.entry(prefix.to_string()).or_default().insert(name.to_string());
        assert!(new, "docs/config.md documents `{key}` twice");
    }
    for (prefix, keys) in &expected {
        let doc = documented.get(*prefix).cloned().unwrap_or_default();
        let missing: Vec<_> = keys.difference(&doc).collect();
        let stale: Vec<_> = doc.difference(keys).collect();
        assert!(missing.is_empty(), "docs/config.md lacks `{prefix}` keys {missing:?}");
        assert!(stale.is_empty(), "docs/config.md documents `{prefix}` keys the code does not accept: {stale:?}");
    }

    // Every table of the site config file is one of the prefixes above.
    let tables = accepted::<SiteConfig>();
    for table in &tables {
        let prefix = if table == "host_models" { "host_models.*".to_string() } else { table.clone() };
        assert!(expected.contains_key(prefix.as_str()), "[{table}] of the site config has no table in docs/config.md");
    }
    // The catalog adds five nested tables under `host_models.*`, the notifications one
    // (`notifications.webhooks.*`).
    assert_eq!(tables.len() + 6, expected.len(), "a table of the reference is not a table of the site config");
}

#[test]
fn every_component_type_is_listed() {
    let section = REFERENCE.split("### Component types").nth(1).expect("a Component types section");
    let listed = section.split("\n#").next().unwrap_or_default();
    for ty in hostfw_model::ComponentType::ALL.iter().map(|t| t.as_str()) {
        assert!(listed.contains(&format!("`{ty}`")), "component type {ty} is not listed in docs/config.md");
    }
}

#[test]
fn every_site_config_key_is_marked_live_or_restart_as_a_reload_treats_it() {
    let site_part = REFERENCE.split("\n## Site config").nth(1).expect("a Site config section");
    let site_part = site_part.split("\n## The firmware catalog").next().unwrap_or_default();
    let mut marked = 0;
    for line in site_part.lines() {
        if line.starts_with("| key ") {
            assert!(line.contains("| reload |"), "a site config table without its reload column: {line}");
        }
        let Some(rest) = line.strip_prefix("| `") else { continue };
        let key = rest.split('`').next().unwrap_or_default();
        let mark = line.split(" | ").nth(3).unwrap_or_default().trim();
        assert_eq!(mark, reload_kind(key).as_str(), "docs/config.md marks `{key}` {mark:?}");
        marked += 1;
    }
    let keys: usize =
        accepted_by_prefix().iter().filter(|(p, _)| !p.starts_with("host_models")).map(|(_, k)| k.len()).sum();
    assert_eq!(marked, keys, "every site config key is marked");
    assert_eq!(reload_kind("host_models").as_str(), "restart");
    assert!(
        REFERENCE.contains("The static catalog (`host_models` tables of the site config file) is\n  `restart`."),
        "docs/config.md says the static catalog needs a restart"
    );
}
