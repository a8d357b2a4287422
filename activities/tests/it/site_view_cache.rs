//! `SiteViewCache`: across reads it gives exactly the `SiteView` a full `site_view::read` gives,
//! while machines, requests, reports and health reports are written, rows are deleted (and
//! inserted again), and the catalog changes; and it re-reads only the rows that changed. On
//! SQLite always, on PostgreSQL when reachable (see `backends`).

use std::sync::Arc;

use hostfw_activities::host_state::HEALTH_SOURCE;
use hostfw_activities::site_view;
use hostfw_activities::site_view_cache::{Refresh, SiteViewCache};
use hostfw_activities::CatalogSource;
use hostfw_fixtures::{Firmware, HostModel, SiteToml};
use hostfw_model::gates::FirmwareStatus;
use hostfw_model::{BmcAddress, HostState, InventoryMember, InventoryReport, SiteConfig, TimeWindow};
use hostfw_store::{HealthReport, NewMachine, NewRequest, Registration, Store};

use crate::backends::{on_postgres, on_sqlite, Db};

/// The site on `database_url`: auto-update on, a ceiling of 3, and an R760 whose BMC and BIOS
/// defaults are 2.0 (no images: read, never installed).
fn site_toml(database_url: &str) -> SiteToml {
    let r760 = HostModel::new("r760", "Dell", "PowerEdge R760")
        .ordering(&["bmc", "uefi"])
        .component("bmc", "^BMC$", [Firmware::known("2.0")])
        .component("uefi", "^BIOS$", [Firmware::known("2.0")]);
    SiteToml::named("site-view-cache")
        .database_url(database_url)
        .firmware_global("autoupdate", true)
        .firmware_global("firmware_directory", "firmware")
        .machine_updater("max_concurrent_machine_updates_absolute", 3)
        .model(&r760)
}

fn id(i: usize) -> String {
    format!("m{i:02}")
}

fn bmc(i: usize) -> BmcAddress {
    format!("https://10.0.0.{i}:443").parse().unwrap()
}

fn member(id: &str, version: &str) -> InventoryMember {
    InventoryMember {
        id: id.into(),
        name: None,
        version: version.into(),
        version_raw: None,
        version_unknown: None,
        odata_id: format!("/redfish/v1/UpdateService/FirmwareInventory/{id}"),
        staged_version: None,
    }
}

fn inventory(model: &str, bmc_version: &str) -> InventoryReport {
    InventoryReport {
        vendor: "Dell".into(),
        model: model.into(),
        serial: None,
        power_state: Some("On".into()),
        members: vec![member("BMC", bmc_version), member("BIOS", "2.0")],
    }
}

fn machine(i: usize, state: HostState, instance: Option<&str>) -> Registration {
    Registration {
        machine: NewMachine {
            id: id(i),
            bmc_address: bmc(i),
            vendor: Some("Dell".into()),
            model: Some("PowerEdge R760".into()),
            state,
            instance_id: instance.map(str::to_string),
            labels: None,
        },
        login: None,
        keep_state: false,
    }
}

fn health(i: usize, source: &str) -> HealthReport {
    HealthReport {
        machine_id: id(i),
        source: source.into(),
        alert_id: "Alert".into(),
        message: "something".into(),
        classifications: vec!["PreventAllocations".into()],
    }
}

fn request(i: usize) -> NewRequest {
    NewRequest { machine_id: id(i), initiator: "AdminCli".into(), update_message: None, workflow_id: None }
}

struct Site {
    site: SiteConfig,
    store: Store,
    catalogs: CatalogSource,
    cache: SiteViewCache,
}

impl Site {
    /// A cached read and a full read at the same instant must be equal; returns what the cached
    /// read re-read.
    async fn same_view(&self, when: &str) -> Refresh {
        let catalog = self.catalogs.current().await.unwrap();
        let now = hostfw_store::now_ms();
        let (cached, refresh) = self.cache.read(&self.store, &catalog, &self.site, now).await.unwrap();
        let fresh = site_view::read(&self.store, &catalog, &self.site, now).await.unwrap();
        assert_eq!(cached, fresh, "{when}: the cached view differs from a full read");
        refresh
    }

    /// The firmware status of machine `i` in a full read.
    async fn firmware(&self, i: usize) -> FirmwareStatus {
        let catalog = self.catalogs.current().await.unwrap();
        let view = site_view::read(&self.store, &catalog, &self.site, hostfw_store::now_ms()).await.unwrap();
        view.input.hosts.into_iter().find(|h| h.machine_id == id(i)).unwrap().firmware
    }
}

async fn the_cached_view_is_the_full_view(db: Db) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("firmware")).unwrap();
    let (_, site) = site_toml(&db.url).write(dir.path()).unwrap();
    let store = Store::connect(&db.url).await.unwrap();
    let catalogs = CatalogSource::new(Arc::new(site.clone()), store.clone());
    let s = Site { site, store: store.clone(), catalogs, cache: SiteViewCache::new() };

    // 20 machines: 0..15 Ready, 15..20 Assigned. Reports: 0..16 (even: drifted BMC 1.0, odd:
    // compliant), 16 an unknown model, 17 a failed first exploration, 18 and 19 none.
    let mut batch: Vec<Registration> = (0..15).map(|i| machine(i, HostState::Ready, None)).collect();
    batch.extend((15..20).map(|i| machine(i, HostState::Assigned, Some("tenant-1"))));
    store.machines_register(&batch).await.unwrap();
    let reports: Vec<_> = (0..16)
        .map(|i| (bmc(i), Some(id(i)), inventory("PowerEdge R760", if i % 2 == 0 { "1.0" } else { "2.0" })))
        .collect();
    store.reports_put_many(&reports).await.unwrap();
    store.report_put(&bmc(16), Some(&id(16)), &Ok(inventory("PowerEdge R999", "1.0"))).await.unwrap();
    store.report_put(&bmc(17), Some(&id(17)), &Err("connection refused".into())).await.unwrap();
    store.request_create(&request(2)).await.unwrap();
    store.health_report_put(&health(4, "ops-alerts")).await.unwrap();
    store.health_report_put(&health(5, HEALTH_SOURCE)).await.unwrap();

    let first = s.same_view("first read").await;
    assert!(first.first, "{first:?}");
    assert_eq!((first.machines_read, first.reports_read), (20, 18), "{first:?}");
    assert!(matches!(s.firmware(0).await, FirmwareStatus::Drifted { .. }));

    let again = s.same_view("nothing changed").await;
    assert_eq!(again, Refresh::default(), "nothing changed, nothing is re-read");

    // Machine writes through every path that changes a row.
    store.machine_set_state(&id(0), HostState::HostReprovision, None, "test").await.unwrap();
    store.machine_set_auto_update(&id(1), Some(false)).await.unwrap();
    let window = TimeWindow { start_ms: 1_000, end_ms: 2_000 };
    store.machine_set_update_windows(&[id(3)], Some(window)).await.unwrap();
    store.machine_set_update_windows(&[id(6), id(7)], Some(window)).await.unwrap();
    store.machine_maintenance(&id(8), true, "test").await.unwrap();
    store.machines_register(&[machine(9, HostState::Assigned, Some("tenant-2"))]).await.unwrap();
    store.machines_register(&[machine(20, HostState::Ready, None)]).await.unwrap();
    // Report writes: a new version, a failed exploration over a good report, the same inventory
    // again (changes nothing the view reads), a report for a new machine, and a second BMC linked
    // to machine 11 (the greater address wins).
    store.report_put(&bmc(10), Some(&id(10)), &Ok(inventory("PowerEdge R760", "2.0"))).await.unwrap();
    store.report_put(&bmc(12), None, &Err("timed out".into())).await.unwrap();
    store.report_put(&bmc(13), Some(&id(13)), &Ok(inventory("PowerEdge R760", "2.0"))).await.unwrap();
    store.report_put(&bmc(20), Some(&id(20)), &Ok(inventory("PowerEdge R760", "1.0"))).await.unwrap();
    let second_bmc: BmcAddress = "https://10.0.1.11:443".parse().unwrap();
    store.report_put(&second_bmc, Some(&id(11)), &Ok(inventory("PowerEdge R760", "1.0"))).await.unwrap();
    // Requests and health reports, added and removed.
    store.request_create(&request(14)).await.unwrap();
    store.request_delete(&id(2)).await.unwrap();
    store.health_report_put(&health(6, "ops-alerts")).await.unwrap();
    store.health_report_remove(&id(4), "ops-alerts").await.unwrap();

    let changed = s.same_view("after writes").await;
    assert_eq!(
        changed,
        Refresh { machines_read: 8, reports_read: 4, ..Refresh::default() },
        "machines 0, 1, 3, 6, 7, 8, 9, 20; reports 10, 12, 20 and the second of 11 (13 is unchanged)"
    );
    assert!(matches!(s.firmware(11).await, FirmwareStatus::Drifted { .. }), "the greater BMC address wins");

    // Rows deleted behind the store's back (an operator's SQL): they are forgotten. A report
    // deleted and written again gets a fresh rev and is re-read.
    db.execute(&format!("DELETE FROM machines WHERE id = '{}'", id(19))).await;
    db.execute(&format!("DELETE FROM explored_reports WHERE bmc_address = '{}'", bmc(14))).await;
    db.execute(&format!("DELETE FROM explored_reports WHERE bmc_address = '{}'", bmc(15))).await;
    store.report_put(&bmc(15), Some(&id(15)), &Ok(inventory("PowerEdge R760", "2.0"))).await.unwrap();
    let deleted = s.same_view("after deletes").await;
    assert_eq!(
        deleted,
        Refresh { machines_gone: 1, reports_read: 1, reports_gone: 1, ..Refresh::default() },
        "machine 19 and report 14 are gone; report 15 was written again"
    );

    // A new catalog (a runtime document makes 1.0 the BMC default): every report is read again
    // under it, the machines are not.
    let doc = "[host_models.r760-bmc]\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n\
               [[host_models.r760-bmc.components.bmc.known_firmware]]\nversion = \"1.0\"\ndefault = true\n";
    store.firmware_config_put("test", doc, "sha-1").await.unwrap();
    let recatalogued = s.same_view("after a catalog change").await;
    assert_eq!(
        recatalogued,
        Refresh { catalog_changed: true, reports_read: 19, ..Refresh::default() },
        "every report is read again"
    );
    assert_eq!(s.firmware(0).await, FirmwareStatus::Compliant, "BMC 1.0 is now the default");
    assert_eq!(s.same_view("settled").await, Refresh::default());
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cached_view_is_the_full_view_on_sqlite() {
    on_sqlite(the_cached_view_is_the_full_view).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cached_view_is_the_full_view_on_postgres() {
    on_postgres("the_cached_view_is_the_full_view", the_cached_view_is_the_full_view).await;
}
