//! Component selection (seed "Update workflow" step 3) and verification.

use crate::common;

use common::{model, report, three_components};
use hostfw_model::gates::UnmatchedComponent;
use hostfw_model::{select_component, select_with, verify, ComponentType, Selection, UnmatchedRule, Verification};

const BMC: ComponentType = ComponentType::Bmc;
const UEFI: ComponentType = ComponentType::Uefi;

#[test]
fn compliant() {
    let m = three_components("[\"uefi\", \"bmc\", \"nic\"]");
    let r = report(&[("BMC_0", "1.0"), ("BIOS_0", "2.0"), ("NIC_0", "old")]);
    assert_eq!(select_component(&m, &r), Selection::Compliant);
}

#[test]
fn first_in_ordering_wins() {
    let r = report(&[("BMC_0", "0.1"), ("BIOS_0", "0.2")]);
    let m = three_components("[\"uefi\", \"bmc\", \"nic\"]");
    match select_component(&m, &r) {
        Selection::Install { component, target_version, entry, current } => {
            assert_eq!(component, UEFI);
            assert_eq!(target_version, "2.0");
            assert_eq!(entry.artifacts(), ["bios.bin"]);
            assert_eq!(current, ["0.2"]);
        }
        other => panic!("{other:?}"),
    }
    // Empty ordering: declaration order, bmc before uefi.
    let m = three_components("[]");
    assert!(matches!(select_component(&m, &r), Selection::Install { component: BMC, .. }));
}

#[test]
fn any_member_differing_selects() {
    let m = three_components("[]");
    let r = report(&[("BMC_0", "1.0"), ("BMC_1", "0.9"), ("BIOS_0", "2.0")]);
    match select_component(&m, &r) {
        Selection::Install { component, current, .. } => {
            assert_eq!(component, BMC);
            assert_eq!(current, ["1.0", "0.9"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn under_the_old_rule_no_inventory_match_stops_the_walk() {
    let m = three_components("[\"bmc\", \"uefi\", \"nic\"]");
    let r = report(&[("BIOS_0", "0.1")]);
    assert_eq!(
        select_with(&m, &r, UnmatchedRule::Stop),
        Selection::NoInventoryMatch { component: BMC, matcher: "^BMC".into() }
    );
}

/// Issue 11 finding 3: an unmatched component early in `ordering` must not keep the drifted
/// components after it from being installed.
#[test]
fn an_unmatched_component_is_skipped_and_the_drifted_ones_after_it_are_installed() {
    let m = three_components("[\"bmc\", \"uefi\", \"nic\"]");
    let r = report(&[("BIOS_0", "0.1")]);
    match select_component(&m, &r) {
        Selection::Install { component, target_version, .. } => {
            assert_eq!(component, UEFI);
            assert_eq!(target_version, "2.0");
        }
        other => panic!("{other:?}"),
    }
    // Once the rest is at its default, the host is reported as not fully installable, with the
    // unmatched component and its matcher.
    let r = report(&[("BIOS_0", "2.0")]);
    assert_eq!(
        select_component(&m, &r),
        Selection::NotFullyInstallable {
            unmatched: vec![UnmatchedComponent { component: BMC, matcher: "^BMC".into() }],
            not_reported: vec![],
        }
    );
}

#[test]
fn components_without_default_are_skipped_even_without_members() {
    let m = three_components("[\"nic\", \"bmc\", \"uefi\"]");
    let r = report(&[("BMC_0", "1.0"), ("BIOS_0", "2.1")]);
    assert!(matches!(select_component(&m, &r), Selection::Install { component: UEFI, .. }));
}

#[test]
fn preingestion_only_entries_are_excluded() {
    let m = model(
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
[[host_models.m.components.bmc.known_firmware]]
version = "2.0"
default = true
filename = "managed.bin"
"#,
    );
    match select_component(&m, &report(&[("BMC_0", "0.5")])) {
        Selection::Install { target_version, entry, .. } => {
            assert_eq!(target_version, "2.0");
            assert_eq!(entry.filename.as_deref(), Some("managed.bin"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(select_component(&m, &report(&[("BMC_0", "2.0")])), Selection::Compliant);
}

#[test]
fn verification() {
    let m = three_components("[]");
    assert_eq!(verify(&m, BMC, "1.0", &report(&[("BMC_0", "1.0"), ("BMC_1", "1.0")])), Verification::AllAtTarget);
    assert_eq!(
        verify(&m, BMC, "1.0", &report(&[("BMC_0", "1.0"), ("BMC_1", "0.9"), ("BIOS_0", "0")])),
        Verification::Pending { reported: vec![("BMC_0".into(), "1.0".into()), ("BMC_1".into(), "0.9".into())] }
    );
    assert_eq!(
        verify(&m, BMC, "1.0", &report(&[("BIOS_0", "1.0")])),
        Verification::NoInventoryMatch { matcher: "^BMC".into() }
    );
    assert_eq!(
        verify(&m, ComponentType::Gpu, "1.0", &report(&[("GPU_0", "1.0")])),
        Verification::NoInventoryMatch { matcher: String::new() },
        "component not configured"
    );
    // Verification is against the given target, not the catalog default.
    assert_eq!(verify(&m, BMC, "1.1", &report(&[("BMC_0", "1.1")])), Verification::AllAtTarget);
}
