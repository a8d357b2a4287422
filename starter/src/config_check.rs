//! `hostfw config check`: is this site config usable as it stands? One line per check, each
//! `ok`, `WARN` or `FAIL` with its detail: the site config loads, the firmware directory adds
//! host models, the Scout scripts directory exists when one is configured, the site database is
//! reachable and holds machines, the effective catalog loads (static + firmware directory +
//! runtime layer), every default entry's artifacts exist and match their `sha256`, Temporal
//! answers within 5 s and its namespace has hostfw's search attributes.
//!
//! Owns the checks and their wording. Runs before the site is opened (a config that does not
//! load is a FAIL line, not an error) and changes nothing: a SQLite file that does not exist is
//! reported, never created. Exit status 1 when any check FAILs.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use hostfw_activities::ActivitySettings;
use hostfw_model::{error_chain, Catalog, OverlayScan, SiteConfig};
use hostfw_store::Store;
use serde::Serialize;

use crate::cli::Format;

/// How long Temporal gets to answer (connect, then list the search attributes).
pub const TEMPORAL_TIMEOUT: Duration = Duration::from_secs(5);

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One check and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
}

/// What `--format json` prints.
#[derive(Debug, Serialize)]
struct Outcome<'a> {
    checks: &'a [Check],
    ok: bool,
}

fn check(name: &str, status: Status, detail: impl Into<String>) -> Check {
    Check { name: name.to_string(), status, detail: detail.into() }
}

/// Runs every check on the config at `config`, prints them, and fails (exit status 1) if any FAILs.
pub async fn config_check(config: &Path, format: Format) -> anyhow::Result<()> {
    let checks = run_checks(config).await;
    let failed = checks.iter().filter(|c| c.status == Status::Fail).count();
    match format {
        Format::Json => {
            crate::outln!("{}", crate::json_contract::to_json(&Outcome { checks: &checks, ok: failed == 0 })?)
        }
        Format::Table => {
            let rows: Vec<Vec<String>> =
                checks.iter().map(|c| vec![c.status.label().to_string(), c.name.clone(), c.detail.clone()]).collect();
            crate::out!("{}", crate::output::table(&["STATUS", "CHECK", "DETAIL"], &rows));
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} config checks failed", checks.len());
    }
    Ok(())
}

/// Every check, in order. Checks that need an earlier one (the catalog needs the config) are
/// left out when it failed.
pub async fn run_checks(config: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let site = match SiteConfig::load(config) {
        Ok(site) => {
            checks.push(check("site config", Status::Ok, format!("{} loads", site.source.display())));
            site
        }
        Err(e) => {
            checks.push(check("site config", Status::Fail, error_chain(&e)));
            return checks;
        }
    };
    checks.push(site_key(&site));
    checks.push(firmware_directory(&site));
    checks.push(scout_scripts_directory(&site));
    let (db_check, store) = site_database(&site).await;
    checks.push(db_check);
    let catalog = effective_catalog(&site, store.as_ref()).await;
    if let Some(store) = &store {
        store.close().await;
    }
    match catalog {
        Ok((catalog, detail)) => {
            checks.push(check("catalog", Status::Ok, detail));
            checks.extend(artifacts(&site, &catalog));
        }
        Err(detail) => checks.push(check("catalog", Status::Fail, detail)),
    }
    checks.extend(temporal(&site).await);
    checks
}

/// The site key, read as the worker reads it (`HOSTFW_SITE_KEY`, `HOSTFW_SITE_KEY_FILE`, `[site]
/// secret_key_file`): a configured key that cannot be read FAILs (the worker could decrypt no
/// password); none at all WARNs (stored plaintext passwords are read, new ones refused). Only
/// the key's fingerprint is printed.
fn site_key(site: &SiteConfig) -> Check {
    let from = if std::env::var_os(hostfw_store::SITE_KEY_ENV).is_some() {
        format!("${}", hostfw_store::SITE_KEY_ENV)
    } else if let Some(file) = std::env::var_os(hostfw_store::SITE_KEY_FILE_ENV).filter(|f| !f.is_empty()) {
        format!("${} ({})", hostfw_store::SITE_KEY_FILE_ENV, Path::new(&file).display())
    } else if let Some(file) = &site.site.secret_key_file {
        format!("site.secret_key_file ({})", file.display())
    } else {
        String::new()
    };
    match hostfw_store::SiteKey::from_env_or(site.site.secret_key_file.as_deref()) {
        Ok(Some(key)) => check("site key", Status::Ok, format!("site key {} from {from}", key.id())),
        Ok(None) => check(
            "site key",
            Status::Warn,
            "no site key (site.secret_key_file, HOSTFW_SITE_KEY_FILE): stored plaintext passwords are read, new \
             ones are refused; `hostfw site-key generate --out FILE` makes one",
        ),
        Err(e) => check("site key", Status::Fail, format!("{from}: {}", error_chain(&e))),
    }
}

fn firmware_directory(site: &SiteConfig) -> Check {
    let scan = OverlayScan::of(&site.firmware_global.firmware_directory);
    match scan.warning() {
        Some(warning) => check("firmware directory", Status::Warn, warning),
        None => check(
            "firmware directory",
            Status::Ok,
            format!("{}: {} host model document(s)", scan.dir.display(), scan.models),
        ),
    }
}

fn scout_scripts_directory(site: &SiteConfig) -> Check {
    let dir = &site.firmware_global.scout_scripts_directory;
    let default =
        site.config_dir().join(hostfw_model::config::FirmwareGlobalSection::default().scout_scripts_directory);
    let name = "scout scripts directory";
    if dir.is_dir() {
        check(name, Status::Ok, format!("{} exists", dir.display()))
    } else if dir.exists() {
        check(
            name,
            Status::Fail,
            format!("firmware_global.scout_scripts_directory {} is not a directory", dir.display()),
        )
    } else if *dir == default {
        check(name, Status::Ok, format!("not configured ({} absent): no Scout route", dir.display()))
    } else {
        check(
            name,
            Status::Warn,
            format!("firmware_global.scout_scripts_directory {} does not exist: no Scout route", dir.display()),
        )
    }
}

/// Opens the site database unless it is a SQLite file that does not exist (never created here).
async fn site_database(site: &SiteConfig) -> (Check, Option<Store>) {
    let name = "site database";
    let url = &site.site.database_url;
    if let Some(path) = hostfw_store::sqlite_file(url) {
        if !path.exists() {
            let detail = format!(
                "{} does not exist: the worker would create a new, empty site database there; \
                 if you expected an existing one, check site.database_url",
                path.display()
            );
            return (check(name, Status::Warn, detail), None);
        }
    }
    let store = match Store::connect(url).await {
        Ok(store) => store,
        Err(e) => return (check(name, Status::Fail, error_chain(&e)), None),
    };
    let verdict = match store.emptiness_warning().await {
        Ok(Some(warning)) => check(name, Status::Warn, warning),
        Ok(None) => match store.machine_count().await {
            Ok(n) => check(name, Status::Ok, format!("{} reachable, {n} machine(s) registered", store.backend())),
            Err(e) => check(name, Status::Fail, error_chain(&e)),
        },
        Err(e) => check(name, Status::Fail, error_chain(&e)),
    };
    (verdict, Some(store))
}

/// The effective catalog and a description of its layers, or why it does not load.
async fn effective_catalog(site: &SiteConfig, store: Option<&Store>) -> Result<(Catalog, String), String> {
    let (runtime, layer) = match store {
        Some(store) => match store.firmware_config_latest().await {
            Ok(Some(v)) => {
                let layer = format!("runtime firmware-config version {}", v.version);
                (Some(v), layer)
            }
            Ok(None) => (None, "no runtime layer".to_string()),
            Err(e) => return Err(format!("reading the runtime layer: {}", error_chain(&e))),
        },
        None => (None, "runtime layer not read (no site database)".to_string()),
    };
    let catalog = hostfw_activities::catalog_source::load(site, runtime.as_ref()).map_err(|e| error_chain(&e))?;
    let detail =
        format!("{} host model(s) from the site config, the firmware directory and {layer}", catalog.models().len());
    Ok((catalog, detail))
}

/// One FAIL per default entry whose artifacts are missing or differ from their `sha256`, else
/// one ok line counting what was checked.
fn artifacts(site: &SiteConfig, catalog: &Catalog) -> Vec<Check> {
    let settings = ActivitySettings::from_site(site);
    let mut failures = Vec::new();
    let mut checked = 0;
    for model in catalog.models() {
        for (component, comp) in &model.components {
            for entry in comp.known_firmware.iter().filter(|e| e.default && !e.preingestion_exclusive_config) {
                checked += 1;
                if let Err(e) = hostfw_activities::artifacts::check_entry(&settings, entry) {
                    let what = format!("{} {} {component} {}", model.vendor, model.model, entry.version);
                    failures.push(check("artifacts", Status::Fail, format!("{what}: {e}")));
                }
            }
        }
    }
    if failures.is_empty() {
        let detail = format!(
            "{checked} default entr{} present and matching their sha256 under {}",
            if checked == 1 { "y" } else { "ies" },
            settings.artifact_root.display()
        );
        failures.push(check("artifacts", Status::Ok, detail));
    }
    failures
}

/// Temporal answers within [`TEMPORAL_TIMEOUT`], and its namespace has hostfw's search attributes.
async fn temporal(site: &SiteConfig) -> Vec<Check> {
    let address = &site.temporal.address;
    let namespace = &site.temporal.namespace;
    let endpoint = hostfw_connect::Endpoint::configured(address, namespace);
    let client = match tokio::time::timeout(TEMPORAL_TIMEOUT, hostfw_connect::connect(endpoint, "hostfw-cli")).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            let cause = error_chain(&e);
            let detail = if cause.contains(address.as_str()) { cause } else { format!("{address}: {cause}") };
            return vec![check("temporal", Status::Fail, detail)];
        }
        Err(_) => {
            return vec![check(
                "temporal",
                Status::Fail,
                format!("{address} did not answer within {} s", TEMPORAL_TIMEOUT.as_secs()),
            )]
        }
    };
    let reachable = check("temporal", Status::Ok, format!("{address} reachable, namespace {namespace}"));
    vec![reachable, search_attributes(client, namespace).await]
}

async fn search_attributes(client: temporalio_client::Client, namespace: &str) -> Check {
    use temporalio_client::grpc::OperatorService;
    use temporalio_client::tonic::Request;
    use temporalio_common::protos::temporal::api::operatorservice::v1::ListSearchAttributesRequest;

    let name = "search attributes";
    let mut client = client;
    let request = Request::new(ListSearchAttributesRequest { namespace: namespace.to_string() });
    let listed = match tokio::time::timeout(TEMPORAL_TIMEOUT, client.list_search_attributes(request)).await {
        Ok(Ok(reply)) => reply.into_inner().custom_attributes,
        Ok(Err(status)) => return check(name, Status::Fail, format!("listing them: {}", status.message())),
        Err(_) => {
            return check(name, Status::Fail, format!("not listed within {} s", TEMPORAL_TIMEOUT.as_secs()));
        }
    };
    let missing = missing_attributes(&listed);
    if missing.is_empty() {
        let names: Vec<&str> = hostfw_workflows::search_attributes::REGISTRATION.iter().map(|(n, _)| *n).collect();
        check(name, Status::Ok, format!("namespace {namespace} has {}", names.join(", ")))
    } else {
        check(
            name,
            Status::Fail,
            format!(
                "namespace {namespace} lacks {}; register each with `temporal operator search-attribute create \
                 --namespace {namespace} --name NAME --type TYPE` (see docs/config.md)",
                missing.join(", ")
            ),
        )
    }
}

/// `NAME (Type)` of every registration missing from `listed` (name → indexed value type).
fn missing_attributes(listed: &HashMap<String, i32>) -> Vec<String> {
    hostfw_workflows::search_attributes::REGISTRATION
        .iter()
        .filter(|(name, _)| !listed.contains_key(*name))
        .map(|(name, ty)| format!("{name} ({ty})"))
        .collect()
}
