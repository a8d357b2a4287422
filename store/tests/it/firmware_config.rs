//! Runtime catalog versions on both backends: numbering from 1, latest, history newest first with
//! a limit, JSON round trip, unique version numbers under concurrent puts, and a version stored
//! with its change ticket (`message`, migration 0020), as a removal of the layer, and with its
//! audit entry in the same transaction; the two-person rule's pending changes (decided once, by
//! someone other than the proposer, only on top of the version they were proposed against).

use crate::common;

use common::Ctx;
use hostfw_store::{
    FirmwareConfigAudit, FirmwareConfigVersion, NewFirmwareConfig, NewPendingFirmwareConfig, PendingRefused,
};

async fn put_latest_history(Ctx { store, .. }: Ctx) {
    assert_eq!(store.firmware_config_latest().await.unwrap(), None);
    assert!(store.firmware_config_history(10).await.unwrap().is_empty());

    let v1 = store.firmware_config_put("alice", "# one\n", "aa11").await.unwrap();
    assert_eq!(
        (v1.version, v1.actor.as_str(), v1.document.as_str(), v1.sha256.as_str()),
        (1, "alice", "# one\n", "aa11")
    );
    assert!(v1.at_ms > 0);
    let v2 = store.firmware_config_put("bob", "# two\n", "bb22").await.unwrap();
    assert_eq!(v2.version, 2);

    assert_eq!(store.firmware_config_latest().await.unwrap(), Some(v2.clone()));
    let history = store.firmware_config_history(10).await.unwrap();
    assert_eq!(history, vec![v2.clone(), v1.clone()]);
    assert_eq!(store.firmware_config_history(1).await.unwrap(), vec![v2.clone()]);

    // The same document again is still a new version: "unchanged" is the caller's decision.
    let v3 = store.firmware_config_put("bob", "# two\n", "bb22").await.unwrap();
    assert_eq!(v3.version, 3);

    let json = serde_json::to_string(&v3).unwrap();
    assert_eq!(serde_json::from_str::<FirmwareConfigVersion>(&json).unwrap(), v3);
}

async fn survives_reconnect(Ctx { store, url }: Ctx) {
    // Literal TOML: the store keeps a document as text, and the test compares that text.
    let doc = "[host_models.x]\nvendor = \"V\"\nmodel = \"M\"\n";
    store.firmware_config_put("alice", doc, "cc33").await.unwrap();
    let again = hostfw_store::Store::connect(&url).await.unwrap();
    let latest = again.firmware_config_latest().await.unwrap().expect("stored");
    assert_eq!((latest.version, latest.document.as_str()), (1, doc));
    again.close().await;
}

async fn concurrent_puts_get_unique_versions(Ctx { store, .. }: Ctx) {
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(
                async move { store.firmware_config_put("racer", &format!("# {i}\n"), &format!("{i:02}")).await },
            )
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let versions: Vec<i64> = store.firmware_config_history(100).await.unwrap().iter().map(|v| v.version).collect();
    assert_eq!(versions, (1..=12).rev().collect::<Vec<_>>());
}

async fn message_and_removal_are_stored_with_their_audit_entry(Ctx { store, .. }: Ctx) {
    let plain = store.firmware_config_put("alice", "# one\n", "aa11").await.unwrap();
    assert_eq!((plain.message.as_deref(), plain.removes_layer), (None, false));

    let detail = |v: &FirmwareConfigVersion| format!("version {} removes the runtime layer", v.version);
    let audit = FirmwareConfigAudit { action: "firmware-config unset", target: "firmware-config", detail: &detail };
    let new = NewFirmwareConfig {
        document: "",
        sha256: "e3b0",
        message: Some("CHG-1234 back to static"),
        removes_layer: true,
    };
    let v2 = store.firmware_config_append("bob", &new, &audit).await.unwrap();
    assert_eq!(
        (v2.version, v2.message.as_deref(), v2.removes_layer, v2.document.as_str()),
        (2, Some("CHG-1234 back to static"), true, "")
    );
    assert_eq!(store.firmware_config_latest().await.unwrap(), Some(v2.clone()));
    assert_eq!(store.firmware_config_get(2).await.unwrap(), Some(v2.clone()));
    let history = store.firmware_config_history(10).await.unwrap();
    assert_eq!(history, vec![v2.clone(), plain]);

    let entries = store.audit_list(10).await.unwrap();
    assert_eq!(entries.len(), 1, "only the appended version is audited: {entries:?}");
    assert_eq!(
        (entries[0].actor.as_str(), entries[0].action.as_str(), entries[0].detail.as_str()),
        ("bob", "firmware-config unset", "version 2 removes the runtime layer")
    );
    let json = serde_json::to_value(&v2).unwrap();
    assert_eq!(
        (json["message"].as_str(), json["removes_layer"].as_bool()),
        (Some("CHG-1234 back to static"), Some(true))
    );
    assert_eq!(serde_json::from_value::<FirmwareConfigVersion>(json).unwrap(), v2);
}

async fn a_pending_change_is_decided_once_by_a_second_actor_on_top_of_its_version(Ctx { store, .. }: Ctx) {
    let config =
        NewFirmwareConfig { document: "# two\n", sha256: "bb22", message: Some("CHG-2"), removes_layer: false };
    let new = NewPendingFirmwareConfig {
        action: "firmware-config set",
        source: "from two.toml",
        config,
        allow_downgrade: false,
        based_on: 0,
    };
    let proposed = |p: &hostfw_store::PendingFirmwareConfig| format!("pending {}", p.id);
    let p1 = store.firmware_config_propose("alice", &new, &proposed).await.unwrap();
    assert_eq!((p1.id, p1.actor.as_str(), p1.decision.as_deref(), p1.based_on), (1, "alice", None, 0));
    assert_eq!(store.firmware_config_latest().await.unwrap(), None, "a pending change is not in effect");
    assert_eq!(store.firmware_config_pending_list().await.unwrap(), vec![p1.clone()]);

    let detail = |v: &FirmwareConfigVersion| format!("version {}", v.version);
    let audit = FirmwareConfigAudit { action: "firmware-config approve", target: "firmware-config", detail: &detail };
    assert_eq!(store.firmware_config_approve(1, "alice", &audit).await.unwrap(), Err(PendingRefused::SameActor));
    assert_eq!(store.firmware_config_approve(9, "bob", &audit).await.unwrap(), Err(PendingRefused::Unknown));
    let v1 = store.firmware_config_approve(1, "bob", &audit).await.unwrap().expect("approved by a second actor");
    assert_eq!((v1.version, v1.actor.as_str(), v1.message.as_deref()), (1, "alice", Some("CHG-2")));
    assert_eq!(store.firmware_config_latest().await.unwrap(), Some(v1.clone()));
    let decided = store.firmware_config_pending_get(1).await.unwrap().unwrap();
    assert_eq!(
        (decided.decision.as_deref(), decided.decided_by.as_deref(), decided.version),
        (Some("approved"), Some("bob"), Some(1))
    );
    assert_eq!(
        store.firmware_config_approve(1, "carol", &audit).await.unwrap(),
        Err(PendingRefused::Decided { decision: "approved".into(), by: "bob".into() })
    );
    assert!(store.firmware_config_pending_list().await.unwrap().is_empty());

    // Proposed on top of nothing, but version 1 is now in effect: refused, nothing written.
    let p2 = store.firmware_config_propose("alice", &new, &proposed).await.unwrap();
    assert_eq!(
        store.firmware_config_approve(p2.id, "bob", &audit).await.unwrap(),
        Err(PendingRefused::Stale { based_on: 0, now: 1 })
    );
    assert_eq!(store.firmware_config_history(10).await.unwrap().len(), 1);
    assert_eq!(store.firmware_config_pending_get(p2.id).await.unwrap().unwrap().decision, None);
    let rejected = store.firmware_config_reject(p2.id, "alice", "withdrawn").await.unwrap().expect("rejected");
    assert_eq!((rejected.decision.as_deref(), rejected.decided_by.as_deref()), (Some("rejected"), Some("alice")));
    assert!(matches!(
        store.firmware_config_reject(p2.id, "bob", "again").await.unwrap(),
        Err(PendingRefused::Decided { .. })
    ));

    let actions: Vec<(String, String)> =
        store.audit_list(10).await.unwrap().into_iter().rev().map(|e| (e.actor, e.action)).collect();
    let expected = [
        ("alice", "firmware-config propose"),
        ("bob", "firmware-config approve"),
        ("alice", "firmware-config propose"),
        ("alice", "firmware-config reject"),
    ];
    assert_eq!(actions, expected.map(|(a, b)| (a.to_string(), b.to_string())), "refusals write nothing");
}

both_backends!(
    a_pending_change_is_decided_once_by_a_second_actor_on_top_of_its_version,
    put_latest_history,
    survives_reconnect,
    concurrent_puts_get_unique_versions,
    message_and_removal_are_stored_with_their_audit_entry
);
