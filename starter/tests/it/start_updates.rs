//! `managed-host start-updates`: one window on every machine, the defaults, local and UTC times,
//! `--cancel`, and the refusals (unknown machines, bad times, conflicting flags) that write
//! nothing; its JSON output.

use chrono::{Duration, Local, TimeZone, Utc};
use clap::error::ErrorKind;

use crate::common::{json, parse_err, utc_forms, whole_second, Site};

#[tokio::test]
async fn start_updates_sets_one_window_on_every_machine() {
    let site = Site::new();
    site.add_machines(&["m1", "m2", "m3"]).await;
    let start = whole_second(Utc::now() + Duration::hours(1));
    let end = start + Duration::hours(4);
    let (start_arg, start_utc) = utc_forms(start);
    let (end_arg, end_utc) = utc_forms(end);
    let out = site
        .ok(&["managed-host", "start-updates", "--machines", "m1", "m2", "--start", &start_arg, "--end", &end_arg])
        .await;
    for id in ["m1", "m2"] {
        assert!(out.lines().any(|l| l.starts_with(id) && l.contains(&start_utc) && l.contains(&end_utc)), "{out}");
        assert_eq!(site.window(id).await, (Some(start.timestamp_millis()), Some(end.timestamp_millis())));
    }
    assert!(out.contains("no update request was created"), "{out}");
    assert_eq!(site.window("m3").await, (None, None));
    let store = site.store().await;
    assert!(store.request_list().await.unwrap().is_empty(), "start-updates must not create requests");
    store.close().await;
}

#[tokio::test]
async fn start_updates_defaults_to_now_for_a_day() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let before = Utc::now().timestamp_millis();
    site.ok(&["managed-host", "start-updates", "--machines", "m1"]).await;
    let after = Utc::now().timestamp_millis();
    let (Some(start), Some(end)) = site.window("m1").await else { panic!("no window") };
    assert!(before <= start && start <= after, "{before} <= {start} <= {after}");
    assert_eq!(end - start, 24 * 3_600_000);
}

#[tokio::test]
async fn start_updates_accepts_local_times() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    // Noon two days ahead: never inside a daylight-saving change.
    let day = (Local::now() + Duration::days(2)).date_naive();
    let naive = day.and_hms_opt(12, 0, 0).unwrap();
    let text = naive.format("%Y-%m-%dT%H:%M:%S").to_string();
    site.ok(&["managed-host", "start-updates", "--machines", "m1", "--start", &text]).await;
    let expected = Local.from_local_datetime(&naive).single().unwrap().timestamp_millis();
    assert_eq!(site.window("m1").await, (Some(expected), Some(expected + 24 * 3_600_000)));
}

#[tokio::test]
async fn start_updates_names_every_unknown_machine_and_writes_nothing() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    let before = site.audit_count().await;
    let err = site.fails(&["managed-host", "start-updates", "--machines", "m1", "ghost-a", "m2", "ghost-b"]).await;
    assert!(err.contains("ghost-a, ghost-b are not registered"), "{err}");
    assert!(err.contains("hostfw machine list"), "{err}");
    assert_eq!(site.window("m1").await, (None, None));
    assert_eq!(site.window("m2").await, (None, None));
    assert_eq!(site.audit_count().await, before);
    let err = site.fails(&["managed-host", "start-updates", "--machines", "ghost", "--cancel"]).await;
    assert!(err.contains("machine ghost is not registered"), "{err}");
}

#[tokio::test]
async fn start_updates_refuses_bad_times_and_writes_nothing() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let before = site.audit_count().await;
    let err = site.fails(&["managed-host", "start-updates", "--machines", "m1", "--start", "2030-01-01 10:00"]).await;
    assert!(err.contains("--start \"2030-01-01 10:00\""), "{err}");
    assert!(err.contains("YYYY-MM-DDTHH:MM:SS+0000"), "{err}");

    let err = site
        .fails(&[
            "managed-host",
            "start-updates",
            "--machines",
            "m1",
            "--start",
            "2030-01-02T00:00:00+0000",
            "--end",
            "2030-01-01T00:00:00+0000",
        ])
        .await;
    assert!(err.contains("must start before it ends"), "{err}");

    let err = site
        .fails(&[
            "managed-host",
            "start-updates",
            "--machines",
            "m1",
            "--start",
            "2020-01-01T00:00:00+0000",
            "--end",
            "2020-01-02T00:00:00+0000",
        ])
        .await;
    assert!(err.contains("in the past"), "{err}");
    assert!(err.contains("2020-01-02T00:00:00Z"), "{err}");

    assert_eq!(site.window("m1").await, (None, None));
    assert_eq!(site.audit_count().await, before);
}

#[tokio::test]
async fn start_updates_cancel_clears_the_window() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    site.ok(&["managed-host", "start-updates", "--machines", "m1", "m2"]).await;
    assert!(site.window("m1").await.0.is_some());
    let out = site.ok(&["managed-host", "start-updates", "--machines", "m1", "--cancel"]).await;
    assert!(out.contains("cancelled"), "{out}");
    assert_eq!(site.window("m1").await, (None, None));
    assert!(site.window("m2").await.0.is_some());
}

#[test]
fn start_updates_cancel_conflicts_with_times_and_machines_are_required() {
    let cancel_start =
        ["managed-host", "start-updates", "--machines", "m1", "--cancel", "--start", "2030-01-01T00:00:00"];
    assert_eq!(parse_err(&cancel_start), ErrorKind::ArgumentConflict);
    let cancel_end = ["managed-host", "start-updates", "--machines", "m1", "--end", "2030-01-01T00:00:00", "--cancel"];
    assert_eq!(parse_err(&cancel_end), ErrorKind::ArgumentConflict);
    assert_eq!(parse_err(&["managed-host", "start-updates"]), ErrorKind::MissingRequiredArgument);
}

#[tokio::test]
async fn start_updates_json_output_parses() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    let end = whole_second(Utc::now() + Duration::hours(2));
    let (end_arg, end_utc) = utc_forms(end);
    let out = site
        .ok(&["--format", "json", "managed-host", "start-updates", "--machines", "m2", "m1", "--end", &end_arg])
        .await;
    let v = json(&out);
    let rows = v.as_array().expect("an array");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["machine_id"], "m2");
    assert_eq!(rows[1]["window_end"], end_utc.as_str());
    assert!(rows[1].get("window_end_ms").is_none(), "times are RFC 3339 only: {out}");
}
