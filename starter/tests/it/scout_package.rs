//! `hostfw scout-package keygen` and `hostfw scout-package sign`: neither needs a site config;
//! `sign` writes a manifest bound to the package's vendor, model and component, the `--version`
//! it installs and the `--not-after` given (a date meaning through that day, UTC), whose
//! signature verifies with the public key; it refuses a missing `--version`, a root of several
//! packages (naming them), a `--not-after` already past or unreadable, writing nothing.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use clap::Parser;
use hostfw_model::ScoutManifest;
use hostfw_starter::cli::Cli;
use hostfw_starter::output;

use crate::common::{json, parse_err, Site};

const METADATA: &str = "execution_timeout_seconds = 5\nartifact_download_timeout_seconds = 5\n";

/// A package directory `<site>/scripts/<rel>` with a script and its metadata.
fn package(site: &Site, rel: &str) -> PathBuf {
    let pkg = site.dir.join("scripts").join(rel);
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("upgrade.sh"), "echo hi\n").unwrap();
    std::fs::write(pkg.join("metadata.toml"), METADATA).unwrap();
    pkg
}

/// Runs `hostfw --config /nonexistent/site.toml ARGS`: these commands must not open the site.
async fn run(args: &[&str]) -> (anyhow::Result<()>, String) {
    let mut full = vec!["hostfw", "--config", "/nonexistent/site.toml"];
    full.extend_from_slice(args);
    let cli = Cli::try_parse_from(full).expect("parses");
    output::capture(hostfw_starter::run(cli)).await
}

/// A fresh key pair in `<site>/keys`; returns the private key's path.
async fn keygen(site: &Site) -> String {
    let keys = site.dir.join("keys");
    let (res, out) = run(&["scout-package", "keygen", "--out", &keys.display().to_string()]).await;
    res.unwrap();
    assert!(out.contains("scout-signing.key") && out.contains("--trusted-key"), "{out}");
    keys.join("scout-signing.key").display().to_string()
}

/// The manifest of `pkg`, checked to verify with the public key in `<site>/keys`.
fn verified_manifest(site: &Site, pkg: &Path) -> ScoutManifest {
    let b64 = |path: PathBuf| {
        base64::engine::general_purpose::STANDARD.decode(std::fs::read_to_string(path).unwrap().trim()).unwrap()
    };
    let public: [u8; 32] = b64(site.dir.join("keys/scout-signing.pub")).try_into().unwrap();
    let sig: [u8; 64] = b64(pkg.join("upgrade.sig")).try_into().unwrap();
    let text = std::fs::read_to_string(pkg.join("upgrade.manifest")).unwrap();
    ed25519_dalek::VerifyingKey::from_bytes(&public)
        .unwrap()
        .verify_strict(text.as_bytes(), &ed25519_dalek::Signature::from_bytes(&sig))
        .expect("the signature verifies with the public key");
    ScoutManifest::parse(&text).unwrap()
}

#[tokio::test]
async fn scout_package_keygen_and_sign_need_no_site_config() {
    let site = Site::new();
    let key = keygen(&site).await;
    let pkg = package(&site, "dell/r760/bmc");
    let scripts = site.dir.join("scripts").display().to_string();
    // A scripts root holding one package signs that package.
    let (res, out) = run(&["scout-package", "sign", "--key", &key, "--version", "7.10.30.00", &scripts]).await;
    res.unwrap();
    assert!(out.contains("signed ") && out.contains("for firmware version 7.10.30.00"), "{out}");
    assert!(pkg.join("upgrade.sig").is_file() && pkg.join("upgrade.manifest").is_file());
    let keys = site.dir.join("keys").display().to_string();
    let (res, _) = run(&["scout-package", "keygen", "--out", &keys]).await;
    assert!(format!("{:#}", res.expect_err("second keygen")).contains("refusing to overwrite"));
}

#[tokio::test]
async fn sign_binds_vendor_model_component_version_and_not_after() {
    let site = Site::new();
    let key = keygen(&site).await;
    let pkg = package(&site, "nvidia/dgx_h100/nic");
    let dir = pkg.display().to_string();

    let (res, out) = run(&[
        "--format",
        "json",
        "scout-package",
        "sign",
        "--key",
        &key,
        "--version",
        "28.43.1014",
        "--not-after",
        "2999-06-30",
        &dir,
    ])
    .await;
    res.unwrap();
    let out = json(&out);
    assert_eq!(out["version"], "28.43.1014", "{out}");
    assert_eq!(out["expires_at"], "2999-06-30T23:59:59Z", "{out}");
    let manifest = verified_manifest(&site, &pkg);
    assert_eq!((manifest.vendor(), manifest.model(), manifest.component()), ("nvidia", "dgx_h100", "nic"));
    assert_eq!(manifest.version, "28.43.1014");
    assert_eq!(manifest.not_after_ms, Some(hostfw_model::parse_not_after("2999-06-30T23:59:59Z").unwrap()));
    let text = std::fs::read_to_string(pkg.join("upgrade.manifest")).unwrap();
    assert!(
        text.starts_with(
            "hostfw-scout-manifest v2\npackage nvidia/dgx_h100/nic\nversion 28.43.1014\n\
             not_after 2999-06-30T23:59:59Z\nscript upgrade.sh sha256 "
        ),
        "{text}"
    );

    // Signed again for the next version, with an RFC 3339 time in another offset and no expiry.
    let (res, _) = run(&[
        "scout-package",
        "sign",
        "--key",
        &key,
        "--version",
        "28.45",
        "--not-after",
        "2999-01-01T02:00:00+02:00",
        &dir,
    ])
    .await;
    res.unwrap();
    let manifest = verified_manifest(&site, &pkg);
    assert_eq!(manifest.version, "28.45");
    assert_eq!(manifest.not_after_ms, Some(hostfw_model::parse_not_after("2999-01-01T00:00:00Z").unwrap()));
    let (res, out) =
        run(&["--format", "json", "scout-package", "sign", "--key", &key, "--version", "28.46", &dir]).await;
    res.unwrap();
    assert!(json(&out)["expires_at"].is_null(), "{out}");
    let manifest = verified_manifest(&site, &pkg);
    assert_eq!((manifest.version.as_str(), manifest.not_after_ms), ("28.46", None));
}

#[tokio::test]
async fn sign_refuses_what_it_cannot_bind_and_writes_nothing() {
    let site = Site::new();
    let key = keygen(&site).await;
    let nic = package(&site, "nvidia/dgx_h100/nic");
    package(&site, "dell/r760/bmc");
    let scripts = site.dir.join("scripts").display().to_string();
    let dir = nic.display().to_string();

    assert_eq!(
        parse_err(&["scout-package", "sign", "--key", &key, &dir]),
        clap::error::ErrorKind::MissingRequiredArgument,
        "--version is required"
    );
    let (res, _) = run(&["scout-package", "sign", "--key", &key, "--version", "1.0", &scripts]).await;
    let err = format!("{:#}", res.expect_err("two packages under the root"));
    assert!(err.contains("2 were found") && err.contains("dell/r760/bmc, nvidia/dgx_h100/nic"), "{err}");
    assert!(err.contains("sign each package directory with its own --version"), "{err}");

    let (res, _) =
        run(&["scout-package", "sign", "--key", &key, "--version", "1.0", "--not-after", "2020-01-31", &dir]).await;
    let err = format!("{:#}", res.expect_err("an expiry in the past"));
    assert!(err.contains("2020-01-31T23:59:59Z is already past"), "{err}");

    let (res, _) =
        run(&["scout-package", "sign", "--key", &key, "--version", "1.0", "--not-after", "next tuesday", &dir]).await;
    let err = format!("{:#}", res.expect_err("not a time"));
    assert!(err.contains("neither an RFC 3339 time") && err.contains("next tuesday"), "{err}");

    let (res, _) = run(&["scout-package", "sign", "--key", &key, "--version", " 1.0", &dir]).await;
    let err = format!("{:#}", res.expect_err("a padded version"));
    assert!(err.contains("version must be"), "{err}");

    for rel in ["nvidia/dgx_h100/nic", "dell/r760/bmc"] {
        let pkg = site.dir.join("scripts").join(rel);
        assert!(!pkg.join("upgrade.manifest").exists() && !pkg.join("upgrade.sig").exists(), "{rel} was signed");
    }
}
