//! Drift: equality-based, all matching members, components without a default ignored.

use crate::common;

use common::{report, three_components};
use hostfw_model::{drift, reported_versions, ComponentType, DriftKind};

const BMC: ComponentType = ComponentType::Bmc;
const UEFI: ComponentType = ComponentType::Uefi;

#[test]
fn compliant_host_does_not_drift() {
    let m = three_components("[]");
    let d = drift(&m, &report(&[("BMC_0", "1.0"), ("BIOS_0", "2.0"), ("NIC_0", "anything")]));
    assert!(!d.is_drifted(), "{d:?}");
    assert_eq!(d.desired.len(), 2, "nic has no default: not desired");
    assert_eq!(d.reported.get(&BMC), Some(&vec!["1.0".to_string()]));
    assert!(!d.reported.contains_key(&ComponentType::Nic), "component without default ignored");
}

#[test]
fn older_newer_and_reformatted_versions_all_drift() {
    let m = three_components("[]");
    // (Surrounding whitespace is not a format difference: see `version_not_reported.rs`.)
    for reported in ["0.9", "1.1", "1.0.0", "v1.0", "1 .0"] {
        let d = drift(&m, &report(&[("BMC_0", reported), ("BIOS_0", "2.0")]));
        assert!(d.is_drifted(), "{reported:?} should drift");
        assert_eq!(d.differences.len(), 1);
        assert_eq!(d.differences[0].component, BMC);
        assert_eq!(d.differences[0].desired, "1.0");
        assert_eq!(d.differences[0].reported, [reported]);
        assert_eq!(d.differences[0].kind, DriftKind::Differs);
    }
}

#[test]
fn missing_member_is_reported_as_no_inventory_match() {
    let m = three_components("[]");
    let d = drift(&m, &report(&[("BMC_0", "1.0")]));
    assert!(d.is_drifted());
    assert_eq!(d.differences.len(), 1);
    assert_eq!(d.differences[0].component, UEFI);
    assert_eq!(d.differences[0].kind, DriftKind::NoInventoryMatch { matcher: "^BIOS".into() });
    assert!(d.differences[0].reported.is_empty());
    assert!(!d.reported.contains_key(&UEFI));
}

#[test]
fn one_of_several_members_differing_drifts() {
    let m = three_components("[]");
    let r = report(&[("BMC_0", "1.0"), ("BIOS_0", "2.0"), ("BMC_1", "0.9"), ("BMC_2", "1.0")]);
    let d = drift(&m, &r);
    assert_eq!(d.differences.len(), 1);
    assert_eq!(d.differences[0].reported, ["1.0", "0.9", "1.0"], "all members, report order");
    let versions = reported_versions(&m, &r);
    assert_eq!(versions[&BMC], ["1.0", "0.9", "1.0"]);
    assert_eq!(versions[&UEFI], ["2.0"]);
}

#[test]
fn component_without_default_never_drifts() {
    let m = three_components("[]");
    let d = drift(&m, &report(&[("BMC_0", "1.0"), ("BIOS_0", "2.0")]));
    assert!(!d.is_drifted(), "nic has no member and no default: ignored");
}

#[test]
fn preingestion_only_default_is_not_desired() {
    let m = common::model(
        r#"
[host_models.m]
vendor = "Nvidia"
model = "X"
[host_models.m.components.bmc]
current_version_reported_as = "^BMC"
[[host_models.m.components.bmc.known_firmware]]
version = "0.5"
default = true
preingestion_exclusive_config = true
filename = "pre.bin"
"#,
    );
    assert!(m.desired_versions().is_empty());
    assert!(m.default_entry(BMC).is_none());
    assert!(!drift(&m, &report(&[("BMC_0", "0.1")])).is_drifted());
}

#[test]
fn staged_at_needs_every_matching_member_running_or_staged_at_the_target() {
    use hostfw_model::Matcher;
    let matcher = Matcher::new("^NIC_").unwrap();
    let mut r = report(&[("NIC_0", "1.0"), ("NIC_1", "2.0"), ("BIOS", "1.0")]);
    assert!(!r.staged_at(&matcher, "2.0"), "NIC_0 neither runs nor holds 2.0");
    r.members[0].staged_version = Some("2.0".into());
    assert!(r.staged_at(&matcher, "2.0"), "NIC_0 staged, NIC_1 running");
    assert!(!r.staged_at(&matcher, "3.0"));
    r.members[0].staged_version = None;
    r.members[0].version = "2.0".into();
    assert!(!r.staged_at(&matcher, "2.0"), "all running: at target, not staged");
    assert!(!r.staged_at(&Matcher::new("^GPU").unwrap(), "2.0"), "no matching member");
}
