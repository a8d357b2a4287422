//! Placeholder versions (finding 7): a member whose version is unknown (`Version` absent or null,
//! blank, a placeholder such as "Not Present", or `Status.State` Absent/Disabled/
//! UnavailableOffline) is neither drifted nor compliant. Drift, selection, the firmware gate and
//! verification leave it out with the reason "version not reported"; surrounding whitespace is
//! not a difference; the serialized member stays backward compatible.

use crate::common;

use common::{report, report_of, three_components};
use hostfw_model::gates::{firmware_status, plan, FirmwareStatus, PassInput, SkipReason};
use hostfw_model::reported_version::classify;
use hostfw_model::{
    drift, select_component, verify, verify_matching, Catalog, CeilingLimits, ComponentType, HostState, HostView,
    InventoryMember, Matcher, SchedulingPolicy, Selection, UnknownVersion, Verification, VERSION_NOT_REPORTED,
};

const BMC: ComponentType = ComponentType::Bmc;
const UEFI: ComponentType = ComponentType::Uefi;

type Member<'a> = (&'a str, Option<&'a str>, Option<&'a str>);

/// BMC_0 as each kind of unknown version real BMCs send, with the reason it must get.
fn unknown_bmc_members() -> Vec<(Member<'static>, UnknownVersion)> {
    let state = |s: &str| UnknownVersion::State { state: s.into() };
    vec![
        (("BMC_0", None, Some("Enabled")), UnknownVersion::Missing),
        (("BMC_0", None, None), UnknownVersion::Missing),
        (("BMC_0", Some(""), Some("Enabled")), UnknownVersion::Blank),
        (("BMC_0", Some(" \t"), Some("Enabled")), UnknownVersion::Blank),
        (("BMC_0", Some("Not Present"), Some("Enabled")), UnknownVersion::Placeholder),
        (("BMC_0", Some("N/A"), None), UnknownVersion::Placeholder),
        (("BMC_0", Some(" unknown "), None), UnknownVersion::Placeholder),
        (("BMC_0", Some("na"), None), UnknownVersion::Placeholder),
        // A real-looking version on a member that is not there (GB200 GPU slots).
        (("BMC_0", Some("0.9"), Some("Absent")), state("Absent")),
        (("BMC_0", Some("1.0"), Some("Disabled")), state("Disabled")),
        (("BMC_0", None, Some("UnavailableOffline")), state("UnavailableOffline")),
    ]
}

#[test]
fn classify_recognises_what_real_bmcs_send() {
    for ((_, version, state), want) in unknown_bmc_members() {
        assert_eq!(classify(version, state), Some(want), "{version:?} {state:?}");
    }
    for (version, state) in [
        ("1.0", Some("Enabled")),
        ("97.00.6C.00.03", None),
        ("NA1", None),
        ("Unknown-2", None),
        // bmc-sim's staged images: StandbyOffline is not in the list.
        ("2.0", Some("StandbyOffline")),
    ] {
        assert_eq!(classify(Some(version), state), None, "{version:?} {state:?} is known");
    }
}

#[test]
fn unknown_versions_are_not_drifted_but_reported_as_version_not_reported() {
    let m = three_components("[]");
    for ((id, version, state), reason) in unknown_bmc_members() {
        let r = report_of(&[(id, version, state), ("BIOS_0", Some("2.0"), Some("Enabled"))]);
        let case = format!("{version:?} {state:?}");
        let d = drift(&m, &r);
        assert!(!d.is_drifted(), "{case}: {d:?}");
        assert!(!d.is_compliant(), "{case}: neither drifted nor compliant");
        assert_eq!(d.not_reported.len(), 1, "{case}");
        assert_eq!(d.not_reported[0].component, BMC);
        assert_eq!(d.not_reported[0].desired, "1.0");
        assert_eq!(d.not_reported[0].members.len(), 1);
        assert_eq!(d.not_reported[0].members[0].id, "BMC_0");
        assert_eq!(d.not_reported[0].members[0].reason, reason, "{case}");
        assert_eq!(d.not_reported[0].members[0].raw_version, version.unwrap_or(""), "{case}");

        assert_eq!(
            select_component(&m, &r),
            Selection::VersionNotReported { components: vec![BMC] },
            "{case}: never installed"
        );
    }
}

#[test]
fn a_host_with_only_unknown_versions_is_never_started_and_plan_says_why() {
    let m = three_components("[]");
    let catalog = Catalog::from_models(vec![m]);
    let r = report_of(&[("BMC_0", Some("Not Present"), Some("Enabled")), ("BIOS_0", Some("2.0"), Some("Enabled"))]);
    let status = firmware_status(&catalog, Some("Dell"), Some("PowerEdge R760"), Some(&r), None);
    let FirmwareStatus::VersionNotReported { not_reported } = &status else {
        panic!("expected VersionNotReported, got {status:?}");
    };
    assert_eq!(not_reported[0].component, BMC);
    assert!(!status.is_compliant());

    let host = HostView {
        repair: false,
        machine_id: "m1".into(),
        state: HostState::Ready,
        assigned: false,
        auto_update: None,
        window: None,
        has_request: false,
        exhausted: false,
        unhealthy: false,
        firmware: status,
        labels: Default::default(),
        targets: Vec::new(),
    };
    let policy = SchedulingPolicy {
        max_hosts_in_repair: None,
        autoupdate: true,
        instance_updates_manual_tagging: true,
        host_disable_autoupdate: vec![],
        limits: CeilingLimits { absolute: Some(10), percent: None },
        label_caps: Default::default(),
        error_budget: Default::default(),
        waves: Default::default(),
        window_fit_min_samples: 0,
        approval_deadline: Default::default(),
    };
    let p = plan(&PassInput {
        now_ms: 0,
        policy,
        hosts: vec![host],
        targets: Vec::new(),
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    });
    assert!(p.start.is_empty(), "free slots, but nothing installable: {p:?}");
    assert_eq!(p.compliant, 0);
    assert_eq!(p.skipped.len(), 1);
    let reason = &p.skipped[0].reason;
    assert_eq!(reason.kind(), "VersionNotReported");
    assert!(matches!(reason, SkipReason::VersionNotReported { .. }));
    let text = reason.to_string();
    assert!(text.starts_with(VERSION_NOT_REPORTED), "{text}");
    assert!(text.contains(r#"bmc (BMC_0 "Not Present": placeholder Version)"#), "{text}");
}

#[test]
fn whitespace_padded_version_equal_to_desired_is_compliant() {
    let m = three_components("[]");
    let r = report(&[("BMC_0", " 1.0\t"), ("BIOS_0", "2.0\u{a0}")]);
    let d = drift(&m, &r);
    assert!(d.is_compliant(), "{d:?}");
    assert_eq!(select_component(&m, &r), Selection::Compliant);
    assert_eq!(verify(&m, BMC, "1.0", &r), Verification::AllAtTarget);
    let catalog = Catalog::from_models(vec![m]);
    assert_eq!(
        firmware_status(&catalog, Some("Dell"), Some("PowerEdge R760"), Some(&r), None),
        FirmwareStatus::Compliant
    );
    // The text as sent is kept for the operator.
    assert_eq!(r.members[0].version, "1.0");
    assert_eq!(r.members[0].version_raw.as_deref(), Some(" 1.0\t"));
    assert_eq!(r.members[0].raw_version(), " 1.0\t");
}

#[test]
fn selection_passes_over_an_unknown_component_and_installs_the_next() {
    let m = three_components(r#"["bmc", "uefi"]"#);
    let r = report_of(&[("BMC_0", None, Some("Enabled")), ("BIOS_0", Some("1.9"), Some("Enabled"))]);
    match select_component(&m, &r) {
        Selection::Install { component, target_version, .. } => {
            assert_eq!((component, target_version.as_str()), (UEFI, "2.0"));
        }
        other => panic!("expected uefi install, got {other:?}"),
    }
    let d = drift(&m, &r);
    assert_eq!(d.differences.len(), 1);
    assert_eq!(d.differences[0].component, UEFI);
    assert_eq!(d.not_reported.len(), 1);
    assert_eq!(d.not_reported[0].component, BMC);
}

#[test]
fn a_known_difference_still_drifts_beside_an_unknown_member() {
    let m = three_components("[]");
    let r = report_of(&[
        ("BMC_0", Some("0.9"), Some("Enabled")),
        ("BMC_1", Some("0.9"), Some("Absent")),
        ("BIOS_0", Some("2.0"), Some("Enabled")),
    ]);
    let d = drift(&m, &r);
    assert_eq!(d.differences.len(), 1, "{d:?}");
    assert_eq!(d.differences[0].component, BMC);
    assert!(matches!(select_component(&m, &r), Selection::Install { component: BMC, .. }));
}

#[test]
fn verification_never_counts_an_unknown_version_as_the_target() {
    let m = three_components("[]");
    for (version, state) in
        [(None, Some("Enabled")), (Some(""), None), (Some("Not Present"), None), (Some("1.0"), Some("Disabled"))]
    {
        let r = report_of(&[("BMC_0", version, state)]);
        let v = verify(&m, BMC, "1.0", &r);
        let Verification::VersionNotReported { members } = &v else {
            panic!("{version:?} {state:?}: expected VersionNotReported, got {v:?}");
        };
        assert_eq!(members[0].id, "BMC_0");
        // The Redfish precheck ("already at target?") asks the same question.
        let matcher = Matcher::new("^BMC").unwrap();
        assert_ne!(verify_matching(&r, &matcher, "1.0"), Verification::AllAtTarget);
        assert!(!r.staged_at(&matcher, "1.0"));
    }
    // Present members at the target verify; an absent slot beside them is not counted.
    let r = report_of(&[("BMC_0", Some("1.0"), Some("Enabled")), ("BMC_1", None, Some("Absent"))]);
    assert_eq!(verify(&m, BMC, "1.0", &r), Verification::AllAtTarget);
    let r = report_of(&[("BMC_0", Some("0.9"), Some("Enabled")), ("BMC_1", None, Some("Absent"))]);
    assert!(matches!(verify(&m, BMC, "1.0", &r), Verification::Pending { .. }));
}

#[test]
fn serialized_members_stay_backward_compatible() {
    // A known, unpadded member serialises exactly as before the new fields.
    let plain = InventoryMember::reported("BMC_0", "/x/BMC_0", Some("1.0"), Some("Enabled"));
    let json = serde_json::to_value(&plain).unwrap();
    assert_eq!(json, serde_json::json!({"id": "BMC_0", "version": "1.0", "odata_id": "/x/BMC_0"}));
    // A member stored (or recorded in a workflow history) before them decodes as a known version.
    let old: InventoryMember =
        serde_json::from_str(r#"{"id":"BMC_0","name":"BMC","version":"1.0","odata_id":"/x/BMC_0"}"#).unwrap();
    assert_eq!(old.known_version(), Some("1.0"));
    assert_eq!(old.version_unknown, None);
    // An unknown one carries its reason and the text as sent, and round-trips.
    let absent = InventoryMember::reported("GPU_2", "/x/GPU_2", Some(" 97.00.6C.00.03"), Some("Absent"));
    let json = serde_json::to_value(&absent).unwrap();
    assert_eq!(json["version"], "97.00.6C.00.03");
    assert_eq!(json["version_raw"], " 97.00.6C.00.03");
    assert_eq!(json["version_unknown"], serde_json::json!({"reason": "state", "state": "Absent"}));
    let back: InventoryMember = serde_json::from_value(json).unwrap();
    assert_eq!(back, absent);
    assert_eq!(back.known_version(), None);
}
