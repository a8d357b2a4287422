//! The production deployment files: `docker-compose.yml`, `Dockerfile`, `config/compose/`.
//!
//! Always: the compose file has the services docs/deploy.md describes, pins every image (and the
//! Dockerfile's `FROM`s) to an exact version, writes no literal secret (nor do the init script
//! and the site config), gives every long-running service a healthcheck, binds every published
//! port to 127.0.0.1 (or an env var defaulting to it), mounts only files that exist, keeps the
//! simulator in the `trial` profile; `config/compose/site.toml` parses and
//! `config/compose/trial-fleet.toml` is a valid bmc-sim fleet of a catalog model; the Scout
//! systemd unit passes `systemd-analyze verify` (or, without systemd, has its key settings).
//! When the docker CLI has the compose plugin: `docker compose config -q` accepts the file, with
//! and without the trial profile, with `config/compose/env.example` as its env file. Nothing is
//! built or pulled.

use std::path::{Path, PathBuf};
use std::process::Command;

use hostfw_bmc_sim::FleetSpec;
use hostfw_model::{Catalog, SiteConfig};
use serde_yaml::{Mapping, Value};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

fn compose() -> Value {
    let path = repo().join("docker-compose.yml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn services(doc: &Value) -> &Mapping {
    doc.get("services").and_then(Value::as_mapping).expect("docker-compose.yml has a services mapping")
}

fn service<'a>(doc: &'a Value, name: &str) -> &'a Value {
    services(doc).get(name).unwrap_or_else(|| panic!("docker-compose.yml has no service {name:?}"))
}

/// `environment` as (key, value) pairs, in either compose form (mapping or `KEY=value` list).
fn environment(svc: &Value) -> Vec<(String, String)> {
    match svc.get("environment") {
        Some(Value::Mapping(m)) => m
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => serde_yaml::to_string(other).unwrap_or_default().trim().to_string(),
                };
                (k.as_str().unwrap_or_default().to_string(), value)
            })
            .collect(),
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| match s.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (s.to_string(), String::new()),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn env_value(svc: &Value, key: &str) -> Option<String> {
    environment(svc).into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The `ports` entries as strings (`"9464:9464"`, `"127.0.0.1:7233:7233"`, or a long-form target).
fn ports(svc: &Value) -> Vec<String> {
    svc.get("ports")
        .and_then(Value::as_sequence)
        .map(|items| {
            items
                .iter()
                .map(|p| match p {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Mapping(m) => m
                        .get("target")
                        .map(|t| serde_yaml::to_string(t).unwrap_or_default().trim().to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The container port of a `ports` entry: the part after the last `:`, without `/tcp`.
fn container_port(entry: &str) -> &str {
    let last = entry.rsplit(':').next().unwrap_or(entry);
    last.split('/').next().unwrap_or(last)
}

/// The host-side sources of the service's bind mounts that name a path (short or long syntax);
/// named volumes are left out.
fn bind_sources(svc: &Value) -> Vec<String> {
    let Some(items) = svc.get("volumes").and_then(Value::as_sequence) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|v| match v {
            Value::String(s) => s.split(':').next().map(str::to_string),
            Value::Mapping(m) => {
                let is_bind = m.get("type").and_then(Value::as_str) == Some("bind");
                let source = m.get("source").and_then(Value::as_str).map(str::to_string);
                if is_bind {
                    source
                } else {
                    source.filter(|s| s.starts_with('.') || s.starts_with('/'))
                }
            }
            _ => None,
        })
        .filter(|s| s.starts_with('.') || s.starts_with('/') || s.starts_with('~'))
        .collect()
}

fn profiles(svc: &Value) -> Vec<String> {
    svc.get("profiles")
        .and_then(Value::as_sequence)
        .map(|p| p.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn compose_file_has_the_documented_services() {
    let doc = compose();
    for name in [
        "postgresql",
        "temporal-schema",
        "temporal",
        "temporal-admin-tools",
        "temporal-ui",
        "hostfw-worker",
        "prometheus",
        "bmc-sim",
    ] {
        service(&doc, name);
    }

    let pg = service(&doc, "postgresql");
    assert!(pg.get("healthcheck").is_some(), "postgresql needs a healthcheck (temporal and the worker wait for it)");

    let schema = serde_yaml::to_string(service(&doc, "temporal-schema")).unwrap();
    assert!(schema.contains("temporalio/admin-tools:"), "the schema job runs admin-tools");
    for needle in ["temporal-sql-tool", "create", "setup-schema", "update-schema", "temporal_visibility"] {
        assert!(schema.contains(needle), "temporal-schema lacks {needle:?}");
    }

    let temporal = service(&doc, "temporal");
    let image = temporal.get("image").and_then(Value::as_str).unwrap_or_default();
    assert!(image.starts_with("temporalio/server:"), "temporal runs the server image, not {image}");
    let after_schema = serde_yaml::to_string(&temporal["depends_on"]["temporal-schema"]).unwrap();
    assert!(after_schema.contains("service_completed_successfully"), "temporal waits for the schema job");
    assert_eq!(env_value(temporal, "DB").as_deref(), Some("postgres12"));
    assert_eq!(env_value(temporal, "POSTGRES_SEEDS").as_deref(), Some("postgresql"));
    for key in ["DB_PORT", "POSTGRES_USER", "POSTGRES_PWD"] {
        assert!(env_value(temporal, key).is_some(), "temporal: {key} missing");
    }

    let admin = serde_yaml::to_string(service(&doc, "temporal-admin-tools")).unwrap();
    assert!(admin.contains("search-attribute create"), "admin tools must create the search attributes");
    for (name, kind) in hostfw_workflows::search_attributes::REGISTRATION {
        assert!(admin.contains(&format!("{name}:{kind}")), "admin tools do not register {name} as {kind}");
    }
    assert!(admin.contains("namespace create"), "admin tools must create the namespace");

    let ui = service(&doc, "temporal-ui");
    assert_eq!(env_value(ui, "TEMPORAL_ADDRESS").as_deref(), Some("temporal:7233"));
    let ui_ports = ports(ui);
    assert!(ui_ports.iter().any(|p| p == "127.0.0.1:8233:8080"), "temporal-ui: 127.0.0.1:8233:8080, got {ui_ports:?}");

    let worker = service(&doc, "hostfw-worker");
    assert!(worker.get("build").is_some(), "hostfw-worker is built from the Dockerfile");
    assert_eq!(env_value(worker, "TEMPORAL_ADDRESS").as_deref(), Some("temporal:7233"));
    assert!(env_value(worker, "TEMPORAL_NAMESPACE").is_some());
    let worker_ports = ports(worker);
    for port in ["9464", "8089", "9443"] {
        assert!(
            worker_ports.iter().any(|p| container_port(p) == port),
            "hostfw-worker does not publish {port}: {worker_ports:?}"
        );
    }
    let depends = serde_yaml::to_string(worker.get("depends_on").expect("hostfw-worker depends_on")).unwrap();
    for dep in ["temporal", "temporal-admin-tools", "postgresql"] {
        assert!(depends.contains(dep), "hostfw-worker does not depend on {dep}");
    }
    assert!(
        bind_sources(worker).iter().any(|s| s.trim_end_matches('/') == "./config/compose"),
        "hostfw-worker mounts ./config/compose"
    );
    assert!(profiles(worker).is_empty(), "hostfw-worker runs without a profile");
    let health = serde_yaml::to_string(&worker["healthcheck"]).unwrap();
    assert!(health.contains("--health-check") && health.contains("/readyz"), "worker healthcheck: {health}");

    let prometheus = serde_yaml::to_string(service(&doc, "prometheus")).unwrap();
    assert!(prometheus.contains("./deploy/prometheus:"), "prometheus loads deploy/prometheus");
    let scrape = std::fs::read_to_string(repo().join("config/compose/prometheus.yml")).unwrap();
    assert!(scrape.contains("job_name: hostfw-worker") && scrape.contains("hostfw-worker:9464"), "{scrape}");
    assert!(scrape.contains("/etc/prometheus/rules/hostfw.rules.yml"), "{scrape}");

    assert_eq!(profiles(service(&doc, "bmc-sim")), vec!["trial".to_string()], "bmc-sim is only in profile trial");
    // The standalone API (issue 27): its own process on the same config, https, profile `api`.
    let api = service(&doc, "hostfw-api");
    assert_eq!(profiles(api), vec!["api".to_string()], "hostfw-api is only in profile api");
    assert_eq!(serde_yaml::to_string(&api["entrypoint"]).unwrap().trim(), "- hostfw-api");
    assert!(ports(api).iter().any(|p| container_port(p) == "9443"), "hostfw-api publishes 9443");
    let site = std::fs::read_to_string(repo().join("config/compose/site.toml")).unwrap();
    for needle in ["listen = \"0.0.0.0:9443\"", "/run/secrets/hostfw_api_cert", "/run/secrets/hostfw_api_key"] {
        assert!(site.contains(needle), "config/compose/site.toml [api] lacks {needle}");
    }
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("-p hostfw-api") && dockerfile.contains("/out/hostfw-api"), "the image has hostfw-api");
    for (name, svc) in services(&doc) {
        let name = name.as_str().unwrap_or_default();
        if name != "bmc-sim" && name != "hostfw-api" {
            assert!(profiles(svc).is_empty(), "{name} must run without a profile");
        }
    }
}

/// An exact version: a `major.minor[.patch]` number or an 8-digit date somewhere in the tag (so
/// `16.6-bookworm`, `v2.53.3`, `bookworm-20250317-slim` pass; `16`, `1-bookworm`, `latest`,
/// `bookworm-slim` do not), or a digest.
fn exact_version(image: &str) -> bool {
    if image.contains("@sha256:") {
        return true;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    let Some((_, tag)) = last.split_once(':') else { return false };
    let numbered = tag.split(|c: char| !(c.is_ascii_digit() || c == '.')).any(|part| {
        let pieces: Vec<&str> = part.split('.').collect();
        pieces.len() >= 2 && pieces.iter().all(|p| !p.is_empty())
    });
    let dated = tag.split('-').any(|part| part.len() == 8 && part.bytes().all(|b| b.is_ascii_digit()));
    numbered || dated
}

#[test]
fn exact_versions_are_told_from_floating_tags() {
    for ok in ["postgres:16.6-bookworm", "prom/prometheus:v2.53.3", "debian:bookworm-20250317-slim", "hostfw:0.1.0"] {
        assert!(exact_version(ok), "{ok}");
    }
    for floating in ["postgres:16", "rust:1-bookworm", "debian:bookworm-slim", "ui:latest", "postgres"] {
        assert!(!exact_version(floating), "{floating}");
    }
}

#[test]
fn compose_images_and_dockerfile_bases_are_pinned_to_exact_versions() {
    let doc = compose();
    let mut seen = 0;
    for (name, svc) in services(&doc) {
        let Some(image) = svc.get("image").and_then(Value::as_str) else {
            assert!(svc.get("build").is_some(), "{name:?} has neither image nor build");
            continue;
        };
        seen += 1;
        assert!(exact_version(image), "{name:?}: image {image} is not pinned to an exact version");
    }
    assert!(seen >= 6);
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    let froms: Vec<&str> = dockerfile.lines().filter_map(|l| l.strip_prefix("FROM ")).collect();
    assert_eq!(froms.len(), 2, "builder and runtime stages");
    for from in froms {
        let image = from.split_whitespace().next().unwrap_or_default();
        assert!(exact_version(image), "Dockerfile: FROM {image} is not pinned to an exact version");
    }
}

/// A key that names a secret.
fn secret_key(key: &str) -> bool {
    let upper = key.to_ascii_uppercase();
    ["PASSWORD", "PWD", "SECRET", "TOKEN", "API_KEY"].iter().any(|s| upper.contains(s))
}

/// `postgres://user:password@` with a literal password.
fn url_with_password(text: &str) -> Option<&str> {
    text.match_indices("://").find_map(|(i, _)| {
        let rest = &text[i + 3..];
        let authority = rest.split(|c: char| c == '/' || c.is_whitespace() || c == '"').next().unwrap_or_default();
        let userinfo = authority.rsplit_once('@')?.0;
        userinfo.contains(':').then_some(authority)
    })
}

#[test]
fn no_literal_secret_in_compose_init_script_or_site_config() {
    let doc = compose();
    for (name, svc) in services(&doc) {
        for (key, value) in environment(svc) {
            if !secret_key(&key) {
                continue;
            }
            let from_file = key.ends_with("_FILE") && value.starts_with("/run/secrets/");
            let from_env = value.starts_with("${") && value.ends_with('}') && !value.contains(":-");
            assert!(from_file || from_env, "{name:?}: {key} has a literal value; take it from .env or a secret");
        }
    }
    let secrets = doc.get("secrets").and_then(Value::as_mapping).expect("top-level secrets");
    for (name, secret) in secrets {
        assert!(secret.get("environment").is_some() || secret.get("file").is_some(), "secret {name:?} has a source");
    }
    let root = repo();
    let mut files = vec![root.join("docker-compose.yml"), root.join("config/compose/site.toml")];
    for entry in std::fs::read_dir(root.join("config/compose/postgres-init")).unwrap() {
        files.push(entry.unwrap().path());
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(url_with_password(&text).is_none(), "{}: a URL with a password", file.display());
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            let upper = line.to_ascii_uppercase();
            if let Some(at) = upper.find("PASSWORD '") {
                panic!("{}: literal password in {:?}", file.display(), &line[at..]);
            }
        }
    }
    assert_eq!(url_with_password("postgres://hostfw:pw@db/hostfw"), Some("hostfw:pw@db"));
    assert_eq!(url_with_password("postgres://hostfw@db/hostfw"), None);
    let ignored = std::fs::read_to_string(root.join(".gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l.trim() == "/.env" || l.trim() == ".env"), ".env must be git-ignored");
    let example = std::fs::read_to_string(root.join("config/compose/env.example")).unwrap();
    for var in ["POSTGRES_PASSWORD=", "HOSTFW_ARTIFACT_BIND="] {
        assert!(example.lines().any(|l| l.starts_with(var)), "env.example lacks {var}");
    }
}

/// One-shot jobs: not restarted and waited for with `service_completed_successfully`.
fn one_shot(doc: &Value, name: &str) -> bool {
    let restart_no = service(doc, name).get("restart").and_then(Value::as_str) == Some("no");
    let awaited = services(doc).iter().any(|(_, svc)| {
        svc.get("depends_on").and_then(|d| d.get(name)).and_then(|d| d.get("condition")).and_then(Value::as_str)
            == Some("service_completed_successfully")
    });
    restart_no && awaited
}

#[test]
fn every_long_running_service_has_a_healthcheck() {
    let doc = compose();
    let mut one_shots = Vec::new();
    for (name, svc) in services(&doc) {
        let name = name.as_str().unwrap_or_default();
        if one_shot(&doc, name) {
            one_shots.push(name);
            continue;
        }
        let test = svc.get("healthcheck").and_then(|h| h.get("test"));
        assert!(test.is_some(), "{name:?} has no healthcheck");
    }
    one_shots.sort();
    assert_eq!(one_shots, vec!["temporal-admin-tools", "temporal-schema"]);
}

#[test]
fn published_ports_bind_loopback_or_an_env_var_defaulting_to_it() {
    let doc = compose();
    let mut published = 0;
    for (name, svc) in services(&doc) {
        for port in ports(svc) {
            published += 1;
            let loopback = port.starts_with("127.0.0.1:");
            let env_default = port.starts_with("${") && port.contains(":-127.0.0.1}:");
            assert!(loopback || env_default, "{name:?}: port {port:?} binds every interface");
        }
    }
    assert!(published >= 5);
}

#[test]
fn compose_mounts_and_build_contexts_exist() {
    let doc = compose();
    let root = repo();
    let mut checked = 0;
    for (name, svc) in services(&doc) {
        for source in bind_sources(svc) {
            let path = root.join(&source);
            assert!(path.exists(), "{name:?} mounts {source}, which does not exist in the repository");
            checked += 1;
        }
        let context = match svc.get("build") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Mapping(m)) => Some(m.get("context").and_then(Value::as_str).unwrap_or(".").to_string()),
            _ => None,
        };
        if let Some(context) = context {
            let dir = root.join(&context);
            assert!(dir.join("Dockerfile").is_file(), "{name:?}: no Dockerfile in build context {context}");
            assert!(dir.join(".dockerignore").is_file(), "{name:?}: no .dockerignore in build context {context}");
        }
    }
    assert!(checked >= 2, "expected the config and init-script mounts, checked {checked}");
    for file in ["site.toml", "trial-fleet.toml"] {
        assert!(root.join("config/compose").join(file).is_file(), "config/compose/{file} is missing");
    }
    let bmc_sim = serde_yaml::to_string(service(&doc, "bmc-sim")).unwrap();
    assert!(bmc_sim.contains("/etc/hostfw/trial-fleet.toml"), "bmc-sim serves config/compose/trial-fleet.toml");
}

#[test]
fn dockerfile_builds_the_five_binaries() {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    for needle in [
        "FROM rust:1.95.0-bookworm AS builder",
        "protobuf-compiler",
        "cargo build --release --locked --bins",
        "FROM debian:bookworm-20250317-slim",
        "ARG HOSTFW_GIT_COMMIT",
        "ca-certificates",
        "USER hostfw",
        "ENTRYPOINT [\"hostfw-worker\"]",
        "CMD [\"--config\", \"/etc/hostfw/site.toml\"]",
        "EXPOSE 9464 8089 9443",
    ] {
        assert!(text.contains(needle), "Dockerfile lacks {needle:?}");
    }
    for package in ["hostfw-worker", "hostfw-api", "hostfw-starter", "hostfw-bmc-sim", "hostfw-scout"] {
        assert!(text.contains(&format!("-p {package}")), "Dockerfile does not build {package}");
    }
    for bin in ["hostfw-worker", "hostfw-api", "hostfw", "bmc-sim", "scout"] {
        assert!(
            text.contains(&format!("target/release/{bin} ")) || text.contains(&format!("target/release/{bin}\n")),
            "Dockerfile does not install {bin}"
        );
    }
    let ignore = std::fs::read_to_string(repo().join(".dockerignore")).unwrap();
    for dir in ["target/", ".demo/", ".tools/", ".git/"] {
        assert!(ignore.lines().any(|l| l.trim() == dir), ".dockerignore lacks {dir}");
    }
}

/// The compose site config, parsed and checked as `SiteConfig::load` does but without reading the
/// files it names (the password secret exists only in the container).
fn compose_site() -> SiteConfig {
    let path = repo().join("config/compose/site.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    SiteConfig::from_toml_str(&text, &path).unwrap_or_else(|e| panic!("{e}"))
}

/// Relative paths resolve against the file's directory, absolute ones and `postgres://` URLs stay
/// as written; no directory is checked (a missing firmware directory is an empty overlay, found
/// only when the catalog loads), so nothing has to exist on this machine.
#[test]
fn compose_site_config_parses() {
    let site = compose_site();
    assert_eq!(site.site.database_url, "postgres://hostfw@postgresql:5432/hostfw");
    assert_eq!(site.site.database_password_file, Some(PathBuf::from("/run/secrets/hostfw_db_password")));
    assert_eq!(site.firmware_global.firmware_directory, Path::new("/var/lib/hostfw/firmware"));
    assert_eq!(site.firmware_global.scout_scripts_directory, Path::new("/var/lib/hostfw/scout-firmware-scripts"));
    assert_eq!(site.site.data_dir, Path::new("/var/lib/hostfw"));
    assert_eq!(site.worker.metrics_listen, "0.0.0.0:9464");
    assert_eq!(site.worker.artifact_listen, "0.0.0.0:8089");
    assert_eq!(site.worker.artifact_base_url, "http://hostfw-worker:8089");
    assert!(site.worker.site_workflows);
    assert_eq!(site.temporal.task_queue, "hostfw");
    let ceiling = site.machine_updater.max_concurrent_machine_updates_absolute;
    assert!(matches!(ceiling, Some(1..=4)), "a conservative ceiling, got {ceiling:?}");
    assert!(site.credentials.default_username.is_none(), "no default BMC credentials in production");

    // The catalog of this config alone (no [host_models]; the overlay directory is the
    // container's, normally absent here) loads.
    if !site.firmware_global.firmware_directory.exists() {
        let catalog = Catalog::load(&site).unwrap_or_else(|e| panic!("{e}"));
        assert!(catalog.models().is_empty());
    }
}

/// The trial fleet is a valid bmc-sim fleet of three BMCs on fixed ports of every interface, and
/// its model is in the overlay docs/deploy.md copies into the worker's firmware volume.
#[test]
fn trial_fleet_matches_the_demo_overlay() {
    let root = repo();
    let fleet = FleetSpec::load(root.join("config/compose/trial-fleet.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fleet.hosts.len(), 3);
    for host in &fleet.hosts {
        assert!(
            host.bmc_address.ip().is_unspecified(),
            "{}: listen on 0.0.0.0 to be reachable from the worker",
            host.id
        );
        assert_ne!(host.bmc_address.port(), 0, "{}: fixed port, registered as bmc-sim:<port>", host.id);
    }

    let mut site = compose_site();
    site.firmware_global.firmware_directory = root.join("config/firmware");
    let catalog = Catalog::load(&site).unwrap_or_else(|e| panic!("{e}"));
    for host in &fleet.hosts {
        assert!(
            catalog.find(&host.vendor, &host.model).is_some(),
            "{}: {} {} is not in config/firmware",
            host.id,
            host.vendor,
            host.model
        );
    }
    assert!(root.join("config/firmware/smc-821ge/metadata.toml").is_file());
}

/// `config -q` on the file with `config/compose/env.example` as its env file, with and without
/// the trial profile, by every Compose that is installed: the docker CLI's plugin (`docker
/// compose`) and the standalone `docker-compose` (Debian's 1.29, which `scripts/tools.sh`
/// installs). Validates only: nothing is built, pulled or started.
#[test]
fn docker_compose_config_is_valid() {
    let works = |program: &str, args: &[&str]| {
        Command::new(program).args(args).output().map(|o| o.status.success()).unwrap_or(false)
    };
    let mut composes: Vec<(&str, Vec<&str>)> = Vec::new();
    if works("docker", &["compose", "version"]) {
        composes.push(("docker", vec!["compose"]));
    }
    if works("docker-compose", &["version"]) {
        composes.push(("docker-compose", vec![]));
    }
    if composes.is_empty() {
        println!("skipped: neither `docker compose` nor `docker-compose` is installed");
        return;
    }
    let file = repo().join("docker-compose.yml");
    let file = file.to_str().expect("UTF-8 path");
    let env = repo().join("config/compose/env.example");
    let env = env.to_str().expect("UTF-8 path");
    for (program, prefix) in &composes {
        for profile in [None, Some("trial")] {
            let mut args = prefix.clone();
            args.extend(["-f", file, "--env-file", env]);
            if let Some(p) = profile {
                args.extend(["--profile", p]);
            }
            args.extend(["config", "-q"]);
            let out = Command::new(program).args(&args).output().expect("running compose");
            assert!(
                out.status.success(),
                "{program} {}: {}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The Scout unit file: `systemd-analyze verify` when systemd's tools are here (the binary path
/// is replaced by one that exists, since the test machine has no /usr/local/bin/scout), else its
/// key settings.
#[test]
fn scout_unit_file_is_valid() {
    let root = repo();
    let unit = std::fs::read_to_string(root.join("deploy/scout/hostfw-scout.service")).unwrap();
    for needle in [
        "[Unit]",
        "[Service]",
        "[Install]",
        "ExecStart=/usr/local/bin/scout",
        "EnvironmentFile=/etc/hostfw-scout/scout.env",
        "StateDirectory=hostfw-scout",
        "NoNewPrivileges=yes",
        "ProtectSystem=",
        "PrivateTmp=yes",
        "Restart=on-failure",
        "KillMode=mixed",
        "WantedBy=multi-user.target",
    ] {
        assert!(unit.contains(needle), "hostfw-scout.service lacks {needle:?}");
    }
    let env = std::fs::read_to_string(root.join("deploy/scout/scout.env")).unwrap();
    for var in ["SCOUT_MACHINE_ID=", "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE="] {
        assert!(env.lines().any(|l| l.starts_with(var)), "scout.env lacks {var}");
    }
    let available = Command::new("systemd-analyze").arg("--version").output().map(|o| o.status.success());
    if !available.unwrap_or(false) {
        println!("skipped systemd-analyze verify: systemd-analyze is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostfw-scout.service");
    std::fs::write(&path, unit.replace("/usr/local/bin/scout", "/bin/true")).unwrap();
    let out = Command::new("systemd-analyze").args(["verify", "--man=no"]).arg(&path).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let problems: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("hostfw-scout.service"))
        .filter(|l| !l.contains("EnvironmentFile") && !l.contains("No such file"))
        .collect();
    assert!(out.status.success() && problems.is_empty(), "systemd-analyze verify:\n{text}");
}
