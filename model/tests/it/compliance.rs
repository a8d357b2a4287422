//! The compliance view (`hostfw_model::compliance`): rows per catalog model and component with a
//! default, running versions with host counts (several members, versions not reported), and each
//! status rule (compliant, drifted, pending, active, failed, exhausted, not reported, unmatched),
//! over two models, with hosts left out for want of an inventory or a catalog entry.

use crate::common;

use common::report_of;
use hostfw_model::{
    compliance, Catalog, ComplianceStatus, ComplianceView, ComponentCompliance, ComponentType, HostCounts, HostFacts,
    HostSubstate, InventoryReport, RequestFacts, RunningVersion,
};

/// Dell R760: bmc 1.0, uefi 2.0, nic without a default; Nvidia DGX H100: bmc 5.0; Lenovo SR630:
/// uefi 9.0 (no host runs it).
fn catalog() -> Catalog {
    common::catalog(
        r#"
[host_models.r760]
vendor = "Dell"
model = "PowerEdge R760"
[host_models.r760.components.bmc]
current_version_reported_as = "^BMC"
[[host_models.r760.components.bmc.known_firmware]]
version = "1.0"
default = true
[[host_models.r760.components.bmc.known_firmware]]
version = "0.9"
[host_models.r760.components.uefi]
current_version_reported_as = "^BIOS"
[[host_models.r760.components.uefi.known_firmware]]
version = "2.0"
default = true
[host_models.r760.components.nic]
current_version_reported_as = "^NIC"
[[host_models.r760.components.nic.known_firmware]]
version = "7.0"

[host_models.dgx]
vendor = "Nvidia"
model = "DGX H100"
[host_models.dgx.components.bmc]
current_version_reported_as = "^HGX_BMC"
[[host_models.dgx.components.bmc.known_firmware]]
version = "5.0"
default = true

[host_models.sr630]
vendor = "Lenovo"
model = "SR630"
[host_models.sr630.components.uefi]
current_version_reported_as = "^BIOS"
[[host_models.sr630.components.uefi.known_firmware]]
version = "9.0"
default = true
"#,
    )
    .expect("catalog loads")
}

/// An R760 report of `(member id, Version)` pairs (Enabled members).
fn r760(members: &[(&str, &str)]) -> InventoryReport {
    let members: Vec<(&str, Option<&str>, Option<&str>)> =
        members.iter().map(|(id, v)| (*id, Some(*v), Some("Enabled"))).collect();
    report_of(&members)
}

/// A report of another vendor/model.
fn other(vendor: &str, model: &str, members: &[(&str, &str)]) -> InventoryReport {
    InventoryReport { vendor: vendor.into(), model: model.into(), ..r760(members) }
}

fn facts(inventory: Option<&InventoryReport>) -> HostFacts<'_> {
    HostFacts { inventory, substate: None, request: None, pending: false, paused: false }
}

const STARTED: RequestFacts = RequestFacts { started: true, exhausted: false };
const SPENT: RequestFacts = RequestFacts { started: true, exhausted: true };

fn row<'a>(view: &'a ComplianceView, model: &str, component: ComponentType) -> &'a ComponentCompliance {
    view.components
        .iter()
        .find(|c| c.model == model && c.component == component)
        .unwrap_or_else(|| panic!("no row {model} {component} in {view:#?}"))
}

fn versions(pairs: &[(Option<&str>, u32)]) -> Vec<RunningVersion> {
    pairs.iter().map(|(v, hosts)| RunningVersion { version: v.map(str::to_string), hosts: *hosts }).collect()
}

#[test]
fn every_status_over_two_models_with_versions_per_host() {
    let catalog = catalog();
    let reports = [
        // 0: compliant everywhere.
        r760(&[("BMC_0", "1.0"), ("BIOS_0", "2.0"), ("NIC_0", "6.0")]),
        // 1: bmc drifted, the gates would start it: pending (uefi compliant, so not pending there).
        r760(&[("BMC_0", "0.9"), ("BIOS_0", "2.0")]),
        // 2: both drifted, update running: active.
        r760(&[("BMC_0", "0.9"), ("BIOS_0", "1.9")]),
        // 3: uefi drifted, its attempt failed, budget left: failed and active.
        r760(&[("BMC_0", "1.0"), ("BIOS_0", "1.9")]),
        // 4: two BMC members, one old; uefi old; budget spent: exhausted (not active, not failed).
        r760(&[("BMC_0", "1.0"), ("BMC_1", "0.8"), ("BIOS_0", "1.9")]),
        // 5: bmc's version not reported, no BIOS member at all.
        report_of(&[("BMC_0", Some("N/A"), Some("Enabled"))]),
        // 6: bmc drifted, requested but not started: drifted, nothing else.
        r760(&[("BMC_0", "0.9"), ("BIOS_0", "2.0")]),
        // 7, 8: DGX (reported as NVIDIA: the catalog lookup ignores case), one compliant, one
        // drifted that the gates hold for a paused target.
        other("NVIDIA", "DGX H100", &[("HGX_BMC_0", "5.0")]),
        other("NVIDIA", "DGX H100", &[("HGX_BMC_0", "4.0")]),
        // 9: no catalog entry.
        other("Supermicro", "SYS-821GE-TNHR", &[("BMC", "1.0")]),
    ];
    let failed = HostSubstate::FailedFirmwareUpgrade;
    let hosts = vec![
        facts(Some(&reports[0])),
        HostFacts { pending: true, ..facts(Some(&reports[1])) },
        HostFacts {
            request: Some(STARTED),
            substate: Some(HostSubstate::WaitingForUpload),
            ..facts(Some(&reports[2]))
        },
        HostFacts { request: Some(STARTED), substate: Some(failed), ..facts(Some(&reports[3])) },
        HostFacts { request: Some(SPENT), substate: Some(failed), ..facts(Some(&reports[4])) },
        facts(Some(&reports[5])),
        HostFacts { request: Some(RequestFacts { started: false, exhausted: false }), ..facts(Some(&reports[6])) },
        facts(Some(&reports[7])),
        HostFacts { paused: true, ..facts(Some(&reports[8])) },
        facts(Some(&reports[9])),
        // Never explored.
        facts(None),
    ];
    let view = compliance(&catalog, hosts);

    let rows: Vec<(&str, ComponentType)> = view.components.iter().map(|c| (c.model.as_str(), c.component)).collect();
    assert_eq!(
        rows,
        [
            ("DGX H100", ComponentType::Bmc),
            ("PowerEdge R760", ComponentType::Bmc),
            ("PowerEdge R760", ComponentType::Uefi),
            ("SR630", ComponentType::Uefi),
        ],
        "catalog order (static tables by key), ComponentType order, no row for the nic without a default"
    );
    assert_eq!((view.not_explored, view.no_catalog_entry), (1, 1));

    let bmc = row(&view, "PowerEdge R760", ComponentType::Bmc);
    assert_eq!((bmc.vendor.as_str(), bmc.desired.as_str()), ("Dell", "1.0"));
    assert_eq!(
        bmc.versions,
        versions(&[(Some("0.8"), 1), (Some("0.9"), 3), (Some("1.0"), 3), (None, 1)]),
        "host 4 counts under both of its versions, once each; not reported last"
    );
    let want = HostCounts {
        hosts: 7,
        compliant: 2,
        drifted: 4,
        pending: 1,
        active: 1,
        failed: 0,
        exhausted: 1,
        paused: 0,
        not_reported: 1,
        unmatched: 0,
    };
    assert_eq!(bmc.counts, want);

    let uefi = row(&view, "PowerEdge R760", ComponentType::Uefi);
    assert_eq!(uefi.desired, "2.0");
    assert_eq!(uefi.versions, versions(&[(Some("1.9"), 3), (Some("2.0"), 3)]));
    let want = HostCounts {
        hosts: 7,
        compliant: 3,
        drifted: 3,
        pending: 0,
        active: 2,
        failed: 1,
        exhausted: 1,
        paused: 0,
        not_reported: 0,
        unmatched: 1,
    };
    assert_eq!(uefi.counts, want);

    let dgx = row(&view, "DGX H100", ComponentType::Bmc);
    assert_eq!((dgx.vendor.as_str(), dgx.desired.as_str()), ("Nvidia", "5.0"));
    assert_eq!(dgx.versions, versions(&[(Some("4.0"), 1), (Some("5.0"), 1)]));
    assert_eq!(dgx.counts, HostCounts { hosts: 2, compliant: 1, drifted: 1, paused: 1, ..HostCounts::default() });

    let sr630 = row(&view, "SR630", ComponentType::Uefi);
    assert_eq!(sr630.desired, "9.0");
    assert!(sr630.versions.is_empty());
    assert_eq!(sr630.counts, HostCounts::default(), "a model nobody runs has its rows, all zero");

    // Every host of a model is exactly one of compliant, drifted, not reported, unmatched.
    for c in &view.components {
        let n = &c.counts;
        assert_eq!(n.compliant + n.drifted + n.not_reported + n.unmatched, n.hosts, "{c:?}");
        assert!(n.pending + n.active + n.exhausted <= n.drifted && n.failed <= n.active, "{c:?}");
    }
}

#[test]
fn statuses_count_only_where_the_component_differs() {
    let catalog = catalog();
    // bmc is at its default, uefi differs: a request, a failure, a spent budget and a pending
    // verdict all count for uefi only.
    let report = r760(&[("BMC_0", "1.0"), ("BIOS_0", "1.0")]);
    let all = [
        HostFacts { pending: true, ..facts(Some(&report)) },
        HostFacts {
            request: Some(STARTED),
            substate: Some(HostSubstate::FailedFirmwareUpgrade),
            ..facts(Some(&report))
        },
        HostFacts { request: Some(SPENT), substate: Some(HostSubstate::FailedFirmwareUpgrade), ..facts(Some(&report)) },
    ];
    let view = compliance(&catalog, all);
    let bmc = row(&view, "PowerEdge R760", ComponentType::Bmc);
    assert_eq!(bmc.counts, HostCounts { hosts: 3, compliant: 3, ..HostCounts::default() });
    let uefi = row(&view, "PowerEdge R760", ComponentType::Uefi);
    let want =
        HostCounts { hosts: 3, drifted: 3, pending: 1, active: 1, failed: 1, exhausted: 1, ..HostCounts::default() };
    assert_eq!(uefi.counts, want);
    assert_eq!(uefi.versions, versions(&[(Some("1.0"), 3)]));
    // A pending verdict on a host with a request does not make it pending (the gates never say
    // so, but the request wins).
    let view = compliance(&catalog, [HostFacts { pending: true, request: Some(STARTED), ..facts(Some(&report)) }]);
    let uefi = row(&view, "PowerEdge R760", ComponentType::Uefi);
    assert_eq!((uefi.counts.pending, uefi.counts.active), (0, 1));
}

#[test]
fn versions_not_reported_are_neither_drifted_nor_compliant_but_a_known_difference_wins() {
    let catalog = catalog();
    // Absent GPU-style member with a version, a placeholder, a blank one; then one of two BMC
    // members unknown and the other old: drifted, and it runs both "0.9" and "not reported".
    let absent = report_of(&[("BMC_0", Some("1.0"), Some("Absent")), ("BIOS_0", Some("2.0"), Some("Enabled"))]);
    let placeholder = report_of(&[("BMC_0", Some("Not Present"), None), ("BIOS_0", Some(" "), None)]);
    let mixed =
        report_of(&[("BMC_0", None, None), ("BMC_1", Some("0.9"), Some("Enabled")), ("BIOS_0", Some("2.0 "), None)]);
    let view = compliance(&catalog, [facts(Some(&absent)), facts(Some(&placeholder)), facts(Some(&mixed))]);
    let bmc = row(&view, "PowerEdge R760", ComponentType::Bmc);
    assert_eq!(bmc.counts, HostCounts { hosts: 3, drifted: 1, not_reported: 2, ..HostCounts::default() });
    assert_eq!(bmc.versions, versions(&[(Some("0.9"), 1), (None, 3)]));
    let uefi = row(&view, "PowerEdge R760", ComponentType::Uefi);
    assert_eq!(uefi.counts, HostCounts { hosts: 3, compliant: 2, not_reported: 1, ..HostCounts::default() });
    assert_eq!(uefi.versions, versions(&[(Some("2.0"), 2), (None, 1)]), "surrounding whitespace is not a version");
}

#[test]
fn status_names_and_counts_line_up() {
    let counts = HostCounts {
        hosts: 99,
        compliant: 1,
        drifted: 2,
        pending: 3,
        active: 4,
        failed: 5,
        exhausted: 6,
        paused: 9,
        not_reported: 7,
        unmatched: 8,
    };
    let names: Vec<(&str, u32)> = ComplianceStatus::ALL.iter().map(|s| (s.as_str(), counts.get(*s))).collect();
    assert_eq!(
        names,
        [
            ("compliant", 1),
            ("drifted", 2),
            ("pending", 3),
            ("active", 4),
            ("failed", 5),
            ("exhausted", 6),
            ("paused", 9),
            ("not_reported", 7),
            ("unmatched", 8),
        ]
    );
    // The JSON row carries the counts beside the row's names.
    let json = serde_json::to_value(ComponentCompliance {
        vendor: "Dell".into(),
        model: "PowerEdge R760".into(),
        component: ComponentType::Bmc,
        desired: "1.0".into(),
        versions: versions(&[(Some("0.9"), 1), (None, 1)]),
        counts,
    })
    .unwrap();
    assert_eq!(json["component"], "bmc");
    assert_eq!(json["failed"], 5);
    assert_eq!(json["hosts"], 99);
    assert_eq!(json["versions"][1]["version"], serde_json::Value::Null);
}

#[test]
fn a_second_catalog_entry_for_the_same_model_gets_no_rows() {
    // `Catalog::find` returns the first entry for a vendor/model; a later one (built by hand,
    // the loader merges them) is never what a host counts under.
    let first = catalog().find("Dell", "PowerEdge R760").expect("r760").clone();
    let mut shadow = first.clone();
    shadow.vendor = " DELL".into();
    shadow.components.remove(&ComponentType::Uefi);
    let catalog = Catalog::from_models(vec![first, shadow]);
    let report = r760(&[("BMC_0", "1.0"), ("BIOS_0", "1.9")]);
    let view = compliance(&catalog, [facts(Some(&report))]);
    let rows: Vec<(&str, ComponentType, u32)> =
        view.components.iter().map(|c| (c.vendor.as_str(), c.component, c.counts.hosts)).collect();
    assert_eq!(rows, [("Dell", ComponentType::Bmc, 1), ("Dell", ComponentType::Uefi, 1)]);
    assert_eq!(view.no_catalog_entry, 0);
}
