//! The production deployment files: `docker-compose.yml`, `Dockerfile`, `config/compose/`.
//!
//! Always: the compose file has the services docs/deploy.md describes, pins every image tag, mounts
//! only files that exist, keeps the simulator in the `trial` profile; `config/compose/site.toml`
//! loads and `config/compose/trial-fleet.toml` is a valid bmc-sim fleet of a catalog model.
//! When the docker CLI has the compose plugin: `docker compose config -q` accepts the file, with
//! and without the trial profile. Nothing is built or pulled.

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
    for name in ["postgresql", "temporal", "temporal-admin-tools", "temporal-ui", "hostfw-worker", "bmc-sim"] {
        service(&doc, name);
    }

    let pg = service(&doc, "postgresql");
    assert!(pg.get("healthcheck").is_some(), "postgresql needs a healthcheck (temporal and the worker wait for it)");

    let temporal = service(&doc, "temporal");
    assert_eq!(env_value(temporal, "DB").as_deref(), Some("postgres12"));
    assert_eq!(env_value(temporal, "POSTGRES_SEEDS").as_deref(), Some("postgresql"));
    for key in ["DB_PORT", "POSTGRES_USER", "POSTGRES_PWD"] {
        assert!(env_value(temporal, key).is_some(), "temporal: {key} missing");
    }

    let admin = serde_yaml::to_string(service(&doc, "temporal-admin-tools")).unwrap();
    assert!(admin.contains("search-attribute create"), "admin tools must create the search attributes");
    for (name, kind) in hostfw_workflows::search_attributes::REGISTRATION {
        assert!(admin.contains(name), "admin tools do not register {name}");
        assert_eq!(*kind, "Keyword");
    }
    assert!(admin.contains("Keyword"));

    let ui = service(&doc, "temporal-ui");
    assert_eq!(env_value(ui, "TEMPORAL_ADDRESS").as_deref(), Some("temporal:7233"));
    assert!(ports(ui).iter().any(|p| p == "8233:8080"), "temporal-ui: port 8233:8080, got {:?}", ports(ui));

    let worker = service(&doc, "hostfw-worker");
    assert!(worker.get("build").is_some(), "hostfw-worker is built from the Dockerfile");
    assert_eq!(env_value(worker, "TEMPORAL_ADDRESS").as_deref(), Some("temporal:7233"));
    assert!(env_value(worker, "TEMPORAL_NAMESPACE").is_some());
    let worker_ports = ports(worker);
    for port in ["9464", "8089"] {
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

    assert_eq!(profiles(service(&doc, "bmc-sim")), vec!["trial".to_string()], "bmc-sim is only in profile trial");
    for (name, svc) in services(&doc) {
        let name = name.as_str().unwrap_or_default();
        if name != "bmc-sim" {
            assert!(profiles(svc).is_empty(), "{name} must run without a profile");
        }
    }
}

#[test]
fn compose_images_are_pinned() {
    let doc = compose();
    let mut seen = 0;
    for (name, svc) in services(&doc) {
        let Some(image) = svc.get("image").and_then(Value::as_str) else {
            assert!(svc.get("build").is_some(), "{name:?} has neither image nor build");
            continue;
        };
        seen += 1;
        let last = image.rsplit('/').next().unwrap_or(image);
        let tag = last.split_once(':').map(|(_, t)| t);
        match tag {
            Some(tag) => {
                assert!(!tag.is_empty() && tag != "latest", "{name:?}: image {image} must pin a tag other than latest")
            }
            None => assert!(image.contains('@'), "{name:?}: image {image} has no tag (that is latest)"),
        }
    }
    assert!(seen >= 4);
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
fn dockerfile_builds_the_four_binaries() {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    for needle in [
        "FROM rust:1-bookworm",
        "protobuf-compiler",
        "cargo build --release --locked --bins",
        "FROM debian:bookworm-slim",
        "ca-certificates",
        "USER hostfw",
        "ENTRYPOINT [\"hostfw-worker\"]",
        "CMD [\"--config\", \"/etc/hostfw/site.toml\"]",
        "EXPOSE 9464 8089",
    ] {
        assert!(text.contains(needle), "Dockerfile lacks {needle:?}");
    }
    for package in ["hostfw-worker", "hostfw-starter", "hostfw-bmc-sim", "hostfw-scout"] {
        assert!(text.contains(&format!("-p {package}")), "Dockerfile does not build {package}");
    }
    for bin in ["hostfw-worker", "hostfw", "bmc-sim", "scout"] {
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

/// `SiteConfig::load` resolves relative paths against the file's directory and leaves absolute
/// ones and `postgres://` URLs as written; it checks no directory (a missing firmware directory is
/// an empty overlay, found only when the catalog loads), so nothing has to exist on this machine.
#[test]
fn compose_site_config_loads() {
    let path = repo().join("config/compose/site.toml");
    let site = SiteConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(site.site.database_url, "postgres://hostfw:hostfw@postgresql:5432/hostfw");
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

    let mut site = SiteConfig::load(&root.join("config/compose/site.toml")).unwrap_or_else(|e| panic!("{e}"));
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

/// `docker compose config -q` on the file, with and without the trial profile, when the docker CLI
/// has the compose plugin. Validates only: nothing is built, pulled or started.
#[test]
fn docker_compose_config_is_valid() {
    let available =
        Command::new("docker").args(["compose", "version"]).output().map(|o| o.status.success()).unwrap_or(false);
    if !available {
        println!("skipped: docker compose is not available");
        return;
    }
    let file = repo().join("docker-compose.yml");
    let file = file.to_str().expect("UTF-8 path");
    for args in
        [vec!["compose", "-f", file, "config", "-q"], vec!["compose", "-f", file, "--profile", "trial", "config", "-q"]]
    {
        let out = Command::new("docker").args(&args).output().expect("running docker");
        assert!(
            out.status.success(),
            "docker {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
