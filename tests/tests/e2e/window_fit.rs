//! End-to-end: window fit (`[machine_updater] window_fit_min_samples`, default 3) on a real
//! Temporal dev server and bmc-sim. Four Dell XE9680s (a model that needs an explicit start) take
//! a BIOS update.
//!
//! - Three hosts with day-long windows update for real: each restore records its run's duration
//!   under (Dell, PowerEdge XE9680, uefi) in the site database.
//! - Three older runs of two hours are on record too (a site's history), so the p90 of the six
//!   is 2 h.
//! - s1's window is opened for one hour: the manager's pass (woken by the change) holds it with
//!   `WindowTooShort`, and `plan` gives both numbers.
//! - Widened to three hours, s1 starts and finishes.

use std::time::Duration;

use hostfw_model::{rfc3339_utc, ComponentType};
use hostfw_tests::fixtures::bios_fleet;
use hostfw_tests::{Catalog, Firmware, HostModel, Site, SiteSpec, SiteToml};

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];
const XE: &str = "PowerEdge XE9680";
const HOUR_MS: i64 = 3_600_000;

fn catalog() -> Catalog {
    Catalog::of([HostModel::new("xe", "Dell", XE).ordering(&["uefi"]).set("explicit_start_needed", true).component(
        "uefi",
        "^BIOS$",
        [Firmware::file("3.0", "dell/bios.bin")],
    )])
}

async fn done(site: &Site, id: &str) -> Option<()> {
    let updated = site.fleet.versions(id).iter().any(|(member, v)| member == "BIOS" && v == "3.0");
    (updated && site.store.request_get(id).await.ok()?.is_none()).then_some(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_whose_window_closes_before_the_p90_of_past_updates_waits_until_its_window_is_widened() {
    let fleet = bios_fleet(&["w1", "w2", "w3", "s1"].map(|id| (id, "Dell", XE)));
    let config = SiteToml::default().catalog(&catalog()).manager(10, "1h").site_workflows(true).explorer_interval("1h");
    let site = Site::start(SiteSpec { fleet: &fleet, config, images: IMAGES, ..SiteSpec::default() }).await.unwrap();
    site.cli(&["site-explorer", "explore"]).await.unwrap();

    // Three real runs, recorded by their restores.
    site.cli(&["managed-host", "start-updates", "--machines", "w1", "w2", "w3"]).await.unwrap();
    for id in ["w1", "w2", "w3"] {
        site.wait_for(&format!("{id} to update"), Duration::from_secs(120), || done(&site, id)).await;
    }
    let durations = site.store.update_durations().await.unwrap();
    assert_eq!(durations.len(), 1, "{durations:?}");
    assert_eq!((durations[0].vendor.as_str(), durations[0].model.as_str()), ("Dell", XE));
    assert_eq!(durations[0].components, vec![ComponentType::Uefi]);
    assert_eq!(durations[0].durations_ms.len(), 3, "one run per host: {durations:?}");
    assert!(durations[0].durations_ms.iter().all(|d| *d > 0 && *d < HOUR_MS), "{durations:?}");

    // The site's older history: three runs of two hours.
    let day_ms = 24 * HOUR_MS;
    let now = hostfw_store::now_ms();
    for i in 1..=3 {
        let start = now - i * day_ms;
        let id = format!("past-{i}");
        site.store
            .update_run_insert(&id, "Dell", XE, &[ComponentType::Uefi], start, start + 2 * HOUR_MS)
            .await
            .unwrap();
    }

    // A one-hour window: the manager (woken by the change) does not start s1.
    let passes = site.manager_status().await.expect("the manager answers").passes_total;
    let start = rfc3339_utc(now - 60_000);
    let short_end = rfc3339_utc(now + HOUR_MS);
    site.cli(&["managed-host", "start-updates", "--machines", "s1", "--start", &start, "--end", &short_end])
        .await
        .unwrap();
    let held = site
        .wait_for("a manager pass holding s1 for its window", Duration::from_secs(60), || async {
            let status = site.manager_status().await?;
            let pass = status.last_pass?;
            let held = pass.waiting.iter().any(|(kind, n)| kind == "WindowTooShort" && *n == 1);
            (status.passes_total > passes && held).then_some(pass)
        })
        .await;
    assert!(held.started.is_empty(), "{held:?}");
    assert!(site.store.request_get("s1").await.unwrap().is_none(), "s1 got a request");
    let plan = site.cli(&["plan"]).await.unwrap();
    println!("{plan}");
    let line = plan.lines().find(|l| l.starts_with("s1")).unwrap_or_else(|| panic!("s1 in {plan}"));
    assert!(
        line.contains("window fit: an update of Dell PowerEdge XE9680 (uefi) takes 2h 00m (p90 of 6 past updates)"),
        "{line}"
    );
    assert!(line.contains("but this machine's update window closes in 59m"), "{line}");
    let json: serde_json::Value =
        serde_json::from_str(&site.cli(&["--format", "json", "plan"]).await.unwrap()).unwrap();
    let skipped = json["skipped"].as_array().unwrap().iter().find(|s| s["machine_id"] == "s1").unwrap().clone();
    assert_eq!(skipped["reason"]["WindowTooShort"]["estimate"]["p90_ms"], 2 * HOUR_MS, "{skipped}");
    assert_eq!(skipped["reason"]["WindowTooShort"]["estimate"]["samples"], 6, "{skipped}");

    // Widened to three hours: it fits, and the change wakes the manager.
    let wide_end = rfc3339_utc(now + 3 * HOUR_MS);
    site.cli(&["managed-host", "start-updates", "--machines", "s1", "--start", &start, "--end", &wide_end])
        .await
        .unwrap();
    site.wait_for("s1 to update", Duration::from_secs(120), || done(&site, "s1")).await;
    let durations = site.store.update_durations().await.unwrap();
    assert_eq!(durations[0].durations_ms.len(), 7, "s1's run is recorded too: {durations:?}");
    site.shutdown().await;
}
