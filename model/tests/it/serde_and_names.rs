//! JSON round trips (these types travel through Temporal payloads) and the string-named enums.

use crate::common;

use std::str::FromStr;

use common::{report, three_components};
use hostfw_model::{
    drift, select_component, verify, Catalog, ComponentType, HostModel, HostState, HostSubstate, Matcher, Selection,
    Verification,
};

fn round_trip<T>(value: &T) -> T
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let json = serde_json::to_string(value).expect("serializes");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

#[test]
fn host_model_round_trips() {
    let m = three_components("[\"uefi\", \"bmc\", \"nic\"]");
    let back: HostModel = round_trip(&m);
    assert_eq!(back, m);
    assert!(back.components[&ComponentType::Bmc].current_version_reported_as.is_match("BMC_0"));
    let json = serde_json::to_value(&m).expect("json");
    assert_eq!(json["components"]["bmc"]["current_version_reported_as"], "^BMC");
    assert_eq!(json["ordering"][0], "uefi");
    let catalog = Catalog::from_models(vec![m.clone()]);
    assert_eq!(round_trip(&catalog), catalog);
}

#[test]
fn example_catalog_round_trips() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/site.toml");
    let config = hostfw_model::SiteConfig::load(&path).expect("config");
    let catalog = Catalog::load(&config).expect("catalog");
    assert_eq!(round_trip(&catalog), catalog);
}

#[test]
fn selection_drift_verification_round_trip() {
    let m = three_components("[]");
    let r = report(&[("BMC_0", "0.9"), ("BMC_1", "1.0")]);
    let s = select_component(&m, &r);
    assert!(matches!(s, Selection::Install { .. }));
    assert_eq!(round_trip(&s), s);
    for s in [
        Selection::Compliant,
        Selection::NoInventoryMatch { component: ComponentType::Gpu, matcher: "^GPU".into() },
        Selection::VersionNotReported { components: vec![ComponentType::Bmc] },
        Selection::NotFullyInstallable {
            unmatched: vec![hostfw_model::gates::UnmatchedComponent {
                component: ComponentType::Gpu,
                matcher: "^GPU".into(),
            }],
            not_reported: vec![ComponentType::Bmc],
        },
    ] {
        assert_eq!(round_trip(&s), s);
    }
    let d = drift(&m, &r);
    assert_eq!(round_trip(&d), d);
    let v = verify(&m, ComponentType::Bmc, "1.0", &r);
    assert!(matches!(v, Verification::Pending { .. }));
    assert_eq!(round_trip(&v), v);
    assert_eq!(round_trip(&r), r);
}

#[test]
fn invalid_regex_in_json_is_rejected() {
    let e = serde_json::from_str::<Matcher>("\"^a(\"").expect_err("invalid");
    assert!(e.to_string().contains("invalid regex `^a(`"), "{e}");
    let m: Matcher = serde_json::from_str("\"^a\"").expect("valid");
    assert_eq!(m, Matcher::new("^a").expect("valid"));
    assert_ne!(m, Matcher::new("^b").expect("valid"));
}

#[test]
fn component_type_names() {
    let names: Vec<String> = ComponentType::ALL.iter().map(|c| c.to_string()).collect();
    assert_eq!(names, ["bmc", "cec", "uefi", "nic", "cpldmb", "cpldpdb", "hgxbmc", "combinedbmcuefi", "gpu"]);
    for c in ComponentType::ALL {
        assert_eq!(ComponentType::from_str(c.as_str()), Ok(*c));
        assert_eq!(round_trip(c), *c);
    }
    let e = ComponentType::from_str("BMC").expect_err("case-sensitive, no fallback");
    assert!(e.to_string().contains("unknown component type `BMC`"), "{e}");
    assert!(serde_json::from_str::<ComponentType>("\"other\"").is_err());
    assert!(ComponentType::Combinedbmcuefi.is_bmc() && ComponentType::Combinedbmcuefi.is_uefi());
    assert!(ComponentType::Bmc.is_bmc() && !ComponentType::Bmc.is_uefi());
    assert!(ComponentType::Uefi.is_uefi() && !ComponentType::Uefi.is_bmc());
    assert!(!ComponentType::Gpu.is_bmc() && !ComponentType::Gpu.is_uefi());
}

#[test]
fn substate_and_state_names() {
    let seed = [
        "CheckingFirmwareV2",
        "CheckingFirmwareRepeatV2",
        "WaitingForManualUpgrade",
        "WaitingForScoutUpgrade",
        "WaitingForScript",
        "WaitingForUpload",
        "WaitingForFirmwareUpgrade",
        "ResetForNewFirmware",
        "NewFirmwareReportedWait",
        "FailedFirmwareUpgrade",
    ];
    let ours = [
        "Protecting",
        "WaitingForApproval",
        "PlatformConfiguration",
        "DiscoveryBoot",
        "Restoring",
        "Completed",
        "HeldByFreeze",
    ];
    let all: Vec<&str> = HostSubstate::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(all, seed.iter().chain(ours.iter()).copied().collect::<Vec<_>>());
    for s in HostSubstate::ALL {
        assert_eq!(s.to_string().parse::<HostSubstate>(), Ok(*s));
        assert_eq!(serde_json::to_string(s).expect("json"), format!("\"{s}\""));
        assert_eq!(round_trip(s), *s);
    }
    for (s, name) in [
        (HostState::Ready, "Ready"),
        (HostState::Assigned, "Assigned"),
        (HostState::HostReprovision, "HostReprovision"),
        (HostState::Maintenance, "Maintenance"),
    ] {
        assert_eq!(s.to_string(), name);
        assert_eq!(name.parse::<HostState>(), Ok(s));
        assert_eq!(round_trip(&s), s);
    }
    let e = "ready".parse::<HostState>().expect_err("exact names");
    assert_eq!(
        e.to_string(),
        "unknown host state `ready`; expected one of: Ready, Assigned, HostReprovision, Maintenance"
    );
}

#[test]
fn lookup_rule() {
    let m = three_components("[]");
    let catalog = Catalog::from_models(vec![m]);
    assert!(catalog.find("dell", " POWEREDGE r760 ").is_some());
    assert!(catalog.find("Dell Inc.", "PowerEdge R760").is_none());
    assert!(catalog.find("Dell", "PowerEdge R7600").is_none());
}

#[test]
fn artifacts_preference() {
    let mut e = hostfw_model::FirmwareEntry::new("1");
    assert!(e.artifacts().is_empty());
    e.filename = Some("one.bin".into());
    assert_eq!(e.artifacts(), ["one.bin"]);
    e.filenames = vec!["a.bin".into(), "b.bin".into()];
    assert_eq!(e.artifacts(), ["a.bin", "b.bin"]);
}
