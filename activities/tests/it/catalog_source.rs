//! `CatalogSource`: the effective catalog is reloaded when the firmware directory or the runtime
//! layer (`firmware-config set`, and `unset`, which removes it) changes, and a change that does
//! not load keeps the last good catalog (seed S5: the desired snapshot refreshes on either change).

use std::sync::Arc;

use hostfw_activities::catalog_source::CatalogUnavailable;
use hostfw_activities::CatalogSource;
use hostfw_fixtures::{Firmware, HostModel, SiteToml};
use hostfw_model::{Catalog, ComponentType};
use hostfw_store::Store;
use temporalio_common::ActivityError;

/// The site: SQLite, and an R760 whose BIOS default is 3.0 (no image: read, never installed).
fn site_toml() -> SiteToml {
    let r760 = HostModel::new("r760", "Dell", "PowerEdge R760").ordering(&["uefi"]).component(
        "uefi",
        "^BIOS$",
        [Firmware::known("3.0")],
    );
    SiteToml::named("catalog-source")
        .database_url("sqlite://site.db")
        .firmware_global("firmware_directory", "firmware")
        .model(&r760)
}

fn default_of(c: &Catalog, vendor: &str, model: &str) -> Option<String> {
    c.find(vendor, model)?.default_entry(ComponentType::Uefi).map(|e| e.version.clone())
}

#[tokio::test]
async fn the_catalog_follows_the_directory_and_the_runtime_layer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("firmware")).unwrap();
    let site = Arc::new(site_toml().write(dir.path()).unwrap().1);
    let store = Store::open_site(&site).await.unwrap();
    let source = CatalogSource::new(site.clone(), store.clone());

    let first = source.current().await.unwrap();
    assert_eq!(default_of(&first, "Dell", "PowerEdge R760").as_deref(), Some("3.0"));
    assert!(Arc::ptr_eq(&first, &source.current().await.unwrap()), "unchanged inputs: no reload");

    // A new model in the firmware directory.
    let overlay = dir.path().join("firmware/smc");
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::write(
        overlay.join("metadata.toml"),
        "vendor = \"Supermicro\"\nmodel = \"SYS-221H\"\nordering = [\"uefi\"]\n[components.uefi]\n\
         current_version_reported_as = \"^BIOS$\"\n[[components.uefi.known_firmware]]\nversion = \"2.4\"\ndefault = true\n",
    )
    .unwrap();
    let second = source.current().await.unwrap();
    assert_eq!(default_of(&second, "Supermicro", "SYS-221H").as_deref(), Some("2.4"));

    // A runtime document with a new default for the static model.
    let doc = "[host_models.r760-bios]\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n\
               [[host_models.r760-bios.components.uefi.known_firmware]]\nversion = \"3.1\"\ndefault = true\n";
    store.firmware_config_put("test", doc, "sha-1").await.unwrap();
    let third = source.current().await.unwrap();
    assert_eq!(default_of(&third, "Dell", "PowerEdge R760").as_deref(), Some("3.1"));

    // A stored document that no longer loads (it could only get there from an older hostfw):
    // the last good catalog stays.
    store.firmware_config_put("test", "[host_models.x]\nbogus = 1\n", "sha-2").await.unwrap();
    let fourth = source.current().await.unwrap();
    assert!(Arc::ptr_eq(&third, &fourth), "kept the last good catalog");

    // A source that never loaded reports the error instead.
    let fresh = CatalogSource::new(site, store.clone());
    let err = fresh.current().await.unwrap_err().to_string();
    assert!(err.contains("bogus"), "{err}");

    // `firmware-config unset`: a version that removes the runtime layer (its document is empty)
    // leaves the static config and the firmware directory.
    let detail = |_: &hostfw_store::FirmwareConfigVersion| "unset".to_string();
    let audit = hostfw_store::FirmwareConfigAudit {
        action: "firmware-config unset",
        target: "firmware-config",
        detail: &detail,
    };
    let unset = hostfw_store::NewFirmwareConfig { document: "", sha256: "e3b0", message: None, removes_layer: true };
    store.firmware_config_append("test", &unset, &audit).await.unwrap();
    let fifth = source.current().await.unwrap();
    assert_eq!(default_of(&fifth, "Dell", "PowerEdge R760").as_deref(), Some("3.0"), "the static default again");
    assert_eq!(default_of(&fifth, "Supermicro", "SYS-221H").as_deref(), Some("2.4"), "the directory stays");
}

/// Issue 11 finding 1: a site database that cannot be read is transient. The activities that read
/// the catalog (inventory's catalog lookup, the scheduler pass, uploads, platform steps) must fail
/// with a retryable error, never the non-retryable `BadInput` that ended workflows.
#[tokio::test]
async fn a_database_error_while_reading_the_catalog_is_retried_never_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("firmware")).unwrap();
    let site = Arc::new(site_toml().write(dir.path()).unwrap().1);
    let store = Store::open_site(&site).await.unwrap();
    let source = CatalogSource::new(site.clone(), store.clone());
    source.current().await.expect("loads while the database is up");

    store.close().await; // the database goes away
    let err = source.current().await.expect_err("the runtime layer cannot be read");
    assert!(matches!(err, CatalogUnavailable::Store(_)), "{err:?}");
    match hostfw_activities::error::catalog(err) {
        ActivityError::Application(f) => {
            assert!(!f.is_non_retryable(), "a database error must be retried");
            assert_eq!(f.type_name(), Some("Store"));
        }
        other => panic!("unexpected {other:?}"),
    }

    // A catalog that has never loaded is retried as well (the operator fixes it; the host waits).
    let other = Store::connect(&format!("sqlite://{}", dir.path().join("other.db").display())).await.unwrap();
    other.firmware_config_put("test", "[host_models.x]\nbogus = 1\n", "sha-x").await.unwrap();
    let err = CatalogSource::new(site, other).current().await.expect_err("never loaded");
    assert!(matches!(err, CatalogUnavailable::Invalid(_)), "{err:?}");
    match hostfw_activities::error::catalog(err) {
        ActivityError::Application(f) => assert!(!f.is_non_retryable(), "an invalid catalog waits for its fix"),
        other => panic!("unexpected {other:?}"),
    }
}
