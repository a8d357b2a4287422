//! `plan`, `compliance` and `site-explorer get-report` on the offline site: the ceiling and why
//! each host waits, versions that are not reported (for hosts and components), counts per model
//! and component, quoting, and an unknown BMC refused.

use crate::common::{json, r760_report, site_with_unreported_versions, Site, IDRAC};

#[tokio::test]
async fn plan_explains_the_ceiling_and_why_each_host_waits() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    let out = site.ok(&["plan"]).await;
    assert!(out.contains("ceiling: 0"), "{out}");
    assert!(out.contains("unset"), "both limits unset is said: {out}");
    assert!(out.contains("would start: none"), "{out}");
    for id in ["m1", "m2"] {
        assert!(out.lines().any(|l| l.starts_with(id)), "{id} has its reason: {out}");
        // Issue 26 item 12: the remedy names the host, ready to run.
        assert!(out.contains(&format!("site-explorer explore --machine {id}`")), "{out}");
    }
    assert!(!out.contains("<machine-id>"), "{out}");
    let plan = json(&site.ok(&["--format", "json", "plan"]).await);
    assert_eq!(plan["ceiling"]["limit"], 0);
    assert_eq!(plan["fleet"]["total"], 2);
    let reasons: Vec<String> = plan["skipped"].as_array().unwrap().iter().map(|s| s["reason"].to_string()).collect();
    assert!(reasons.iter().all(|r| r.contains("NotExplored")), "{reasons:?}");
    assert_eq!(site.audit_count().await, 2, "plan writes nothing (only the two machine adds)");
}

#[tokio::test]
async fn plan_says_version_not_reported_for_hosts_and_components() {
    let site = site_with_unreported_versions().await;
    let out = site.ok(&["plan"]).await;
    assert!(out.contains("compliant: 1"), "only m3 is compliant: {out}");
    let m1 = out.lines().find(|l| l.starts_with("m1")).unwrap_or_else(|| panic!("m1 has a reason: {out}"));
    assert!(
        m1.contains(&format!("version not reported: bmc ({IDRAC}: no Version)")),
        "m1 waits because a version is not reported, not for the ceiling: {m1}"
    );
    let m2 = out.lines().find(|l| l.starts_with("m2")).unwrap_or_else(|| panic!("m2 has a reason: {out}"));
    assert!(m2.contains("ceiling is 0"), "m2 drifts (bmc) and waits for a slot: {m2}");
    assert!(out.contains("version not reported (left out of drift"), "{out}");
    let section: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("version not reported (")).collect();
    assert!(section.iter().any(|l| l.starts_with("m1") && l.contains("bmc") && l.contains("no Version")), "{out}");
    assert!(
        section
            .iter()
            .any(|l| l.starts_with("m2") && l.contains("uefi") && l.contains("\"Not Present\": placeholder Version")),
        "{out}"
    );
    assert!(!section.iter().any(|l| l.starts_with("m3")), "{out}");

    let plan = json(&site.ok(&["--format", "json", "plan"]).await);
    assert_eq!(plan["compliant"], 1);
    let skipped = plan["skipped"].as_array().unwrap();
    let m1 = skipped.iter().find(|s| s["machine_id"] == "m1").expect("m1 skipped");
    let typed = &m1["reason"]["VersionNotReported"]["not_reported"][0];
    assert_eq!(typed["component"], "bmc");
    assert_eq!(typed["members"][0]["id"], IDRAC);
    assert_eq!(typed["members"][0]["reason"]["reason"], "missing");
    let reasons = plan["reasons"].as_array().unwrap();
    let m1_says = |r: &serde_json::Value| r[0] == "m1" && r[1].as_str().unwrap().starts_with("version not reported");
    assert!(reasons.iter().any(m1_says), "{reasons:?}");
    let hosts: Vec<&str> =
        plan["version_not_reported"].as_array().unwrap().iter().map(|h| h["machine_id"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["m1", "m2"]);
}

/// `compliance` over `site_with_unreported_versions` plus m4 (iDRAC drifted, its request's budget
/// spent) and m5 (never explored); the ceiling is 0, so m2 is held only by it: pending.
#[tokio::test]
async fn compliance_counts_versions_and_statuses_per_model_and_component() {
    let site = site_with_unreported_versions().await;
    for (id, bmc) in [("m4", "10.0.0.4:443"), ("m5", "10.0.0.5:443")] {
        site.ok(&["machine", "add", "--id", id, "--bmc", bmc]).await;
    }
    let store = site.store().await;
    let report = r760_report((Some("7.00.00.00"), "Enabled"), (Some("2.3.5"), "Enabled"));
    store.report_put(&"10.0.0.4:443".parse().unwrap(), Some("m4"), &Ok(report)).await.unwrap();
    let new = hostfw_store::NewRequest {
        machine_id: "m4".into(),
        initiator: "AdminCli".into(),
        update_message: None,
        workflow_id: None,
    };
    store.request_create(&new).await.unwrap();
    store.request_mark_started("m4", 1_000).await.unwrap();
    store.request_record_retry("m4", 5, true).await.unwrap();
    store.close().await;
    let audits = site.audit_count().await;

    let view = json(&site.ok(&["--format", "json", "compliance"]).await);
    assert_eq!((view["not_explored"].as_u64(), view["no_catalog_entry"].as_u64()), (Some(1), Some(0)), "{view}");
    let rows = view["components"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{view}");
    let bmc = &rows[0];
    assert_eq!((bmc["vendor"].as_str(), bmc["model"].as_str()), (Some("Dell"), Some("PowerEdge R760")));
    assert_eq!((bmc["component"].as_str(), bmc["desired"].as_str()), (Some("bmc"), Some("7.10.30.00")));
    assert_eq!(
        bmc["versions"],
        serde_json::json!([
            { "version": "7.00.00.00", "hosts": 2 },
            { "version": "7.10.30.00", "hosts": 1 },
            { "version": null, "hosts": 1 },
        ])
    );
    let counts = |row: &serde_json::Value| -> Vec<u64> {
        ["hosts", "compliant", "drifted", "pending", "active", "failed", "exhausted", "not_reported", "unmatched"]
            .iter()
            .map(|k| row[*k].as_u64().unwrap_or_else(|| panic!("{k} in {row}")))
            .collect()
    };
    assert_eq!(counts(bmc), [4, 1, 2, 1, 0, 0, 1, 1, 0], "{bmc}");
    let uefi = &rows[1];
    assert_eq!((uefi["component"].as_str(), uefi["desired"].as_str()), (Some("uefi"), Some("2.3.5")));
    assert_eq!(
        uefi["versions"],
        serde_json::json!([{ "version": "2.3.5", "hosts": 3 }, { "version": null, "hosts": 1 }])
    );
    assert_eq!(counts(uefi), [4, 3, 0, 0, 0, 0, 0, 1, 0], "{uefi}");

    let table = site.ok(&["compliance"]).await;
    let cells = |line: &str| -> Vec<String> {
        line.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect()
    };
    let mut lines = table.lines();
    assert_eq!(
        cells(lines.next().unwrap()),
        [
            "MODEL",
            "COMPONENT",
            "DESIRED",
            "RUNNING (HOSTS)",
            "HOSTS",
            "COMPLIANT",
            "DRIFTED",
            "PENDING",
            "ACTIVE",
            "FAILED",
            "EXHAUSTED",
            "PAUSED",
            "NOT REPORTED",
            "UNMATCHED"
        ],
        "{table}"
    );
    assert_eq!(
        cells(lines.next().unwrap()),
        [
            "Dell PowerEdge R760",
            "bmc",
            "7.10.30.00",
            "7.00.00.00 (2), 7.10.30.00 (1), (not reported) (1)",
            "4",
            "1",
            "2",
            "1",
            "0",
            "0",
            "1",
            "0",
            "1",
            "0"
        ],
        "{table}"
    );
    assert!(table.contains("not explored (no inventory stored): 1 hosts"), "{table}");
    assert_eq!(site.audit_count().await, audits, "compliance writes nothing");
}

#[tokio::test]
async fn get_report_quotes_versions_and_says_which_are_not_reported() {
    let site = site_with_unreported_versions().await;

    let m1 = site.ok(&["site-explorer", "get-report", "managed-host", "10.0.0.1:443"]).await;
    assert!(m1.contains(r#"bmc: (none) (no Version) / "7.10.30.00"  [version not reported]"#), "{m1}");
    assert!(m1.contains(r#"uefi: "2.3.5 " / "2.3.5"  [ok]"#), "padding shows, and is no difference: {m1}");
    let row = m1.lines().find(|l| l.contains(IDRAC)).expect("inventory row");
    assert!(row.contains("(none)") && row.contains("version not reported: no Version"), "{row}");

    let m2 = site.ok(&["site-explorer", "get-report", "managed-host", "10.0.0.2:443"]).await;
    assert!(m2.contains(r#"bmc: "7.00.00.00" / "7.10.30.00"  [DRIFT]"#), "{m2}");
    assert!(m2.contains(r#"uefi: "Not Present" (placeholder Version) / "2.3.5"  [version not reported]"#), "{m2}");

    let m3 = site.ok(&["site-explorer", "get-report", "managed-host", "10.0.0.3:443"]).await;
    assert!(m3.contains(r#"uefi: "2.3.5\u{a0}" / "2.3.5"  [ok]"#), "the NBSP shows: {m3}");

    let j = json(&site.ok(&["--format", "json", "site-explorer", "get-report", "managed-host", "10.0.0.1:443"]).await);
    let components = j["components"].as_array().expect("components");
    let bmc = components.iter().find(|c| c["component"] == "bmc").unwrap();
    assert_eq!(bmc["status"], "version not reported");
    assert_eq!(bmc["desired"], "7.10.30.00");
    assert_eq!(bmc["members"][0]["reported"], "");
    assert_eq!(bmc["members"][0]["version_unknown"]["reason"], "missing");
    let uefi = components.iter().find(|c| c["component"] == "uefi").unwrap();
    assert_eq!(uefi["status"], "compliant");
    assert_eq!(uefi["members"][0]["reported"], "2.3.5 ", "the raw value");
    assert!(uefi["members"][0].get("version_unknown").is_none());
    assert_eq!(j["report"]["members"][0]["version_unknown"]["reason"], "missing");
    assert_eq!(j["report"]["members"][1]["version_raw"], "2.3.5 ");
}

#[tokio::test]
async fn re_explore_of_an_unknown_bmc_is_refused() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let err = site.fails(&["site-explorer", "re-explore", "10.9.9.9:443"]).await;
    assert!(err.contains("10.9.9.9:443"), "{err}");
    assert!(err.contains("machine list"), "{err}");
}
