//! `managed-host show` on an offline site (issue 26 item 12): a host whose catalog component
//! matches no inventory member says "nothing installable", as `plan` does, with its own id in
//! the remedy.

use crate::common::{json, Site};

#[tokio::test]
async fn managed_host_show_says_nothing_installable_when_no_member_matches() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let store = site.store().await;
    // The BIOS matches and is at the default; no member matches the iDRAC's matcher.
    let bios = hostfw_model::InventoryMember::reported(
        "Installed-159-2.3.5__BIOS.Setup.1-1",
        "/redfish/v1/UpdateService/FirmwareInventory/Installed-159-2.3.5__BIOS.Setup.1-1".to_string(),
        Some("2.3.5"),
        Some("Enabled"),
    );
    let report = hostfw_model::InventoryReport {
        vendor: "Dell".into(),
        model: "PowerEdge R760".into(),
        serial: None,
        power_state: Some("On".into()),
        members: vec![bios],
    };
    store.report_put(&"10.0.0.1:443".parse().unwrap(), Some("m1"), &Ok(report)).await.unwrap();
    store.close().await;

    let plan = site.ok(&["plan"]).await;
    assert!(plan.lines().any(|l| l.starts_with("m1") && l.contains("nothing installable")), "{plan}");
    let out = site.ok(&["managed-host", "show", "m1"]).await;
    let line = out.lines().find(|l| l.starts_with("Firmware:")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("nothing installable: no inventory member matches bmc"), "{line}");
    let doc = json(&site.ok(&["--format", "json", "managed-host", "show", "m1"]).await);
    assert!(doc["not_installable"].as_str().unwrap().starts_with("nothing installable"), "{doc}");
    assert!(doc["firmware"]["Drifted"]["unmatched"][0]["component"] == "bmc", "{doc}");
}
