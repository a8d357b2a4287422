//! Decommissioning and repair (issue 27, migration 0022), on both backends: a machine with a
//! request is not removed (nothing changes); without one it goes with its credentials and
//! explored report, while its history and the audit entry stay; a host put in repair is in
//! maintenance with its mark until it leaves maintenance.

use crate::common;

use common::Ctx;
use hostfw_model::HostState;
use hostfw_store::{NewMachine, NewRequest, Removal, AUDIT_MACHINE_REMOVE};

fn new_machine(id: &str, bmc: &str) -> NewMachine {
    NewMachine {
        id: id.to_owned(),
        bmc_address: bmc.parse().unwrap(),
        vendor: Some("Dell Inc.".to_owned()),
        model: Some("PowerEdge R750".to_owned()),
        state: HostState::Ready,
        instance_id: None,
        labels: None,
    }
}

fn request(id: &str) -> NewRequest {
    NewRequest { machine_id: id.into(), initiator: "AdminCli".into(), update_message: None, workflow_id: None }
}

async fn a_machine_with_a_request_is_not_removed(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("m1", "10.0.0.1")).await.unwrap();
    store.credentials_put("m1", "root", &"calvin-s3cret".into()).await.unwrap();
    store.request_create(&request("m1")).await.unwrap();
    let refused = store.machine_remove("m1", "alice (tok-1)", "decommissioned").await.unwrap();
    let Removal::Refused(why) = refused else { panic!("removed with a request: {refused:?}") };
    assert!(why.contains("host reprovision abort --id m1"), "{why}");
    assert!(store.machine_get("m1").await.unwrap().is_some(), "nothing changed");
    assert!(store.credentials_get("m1").await.unwrap().is_some(), "credentials kept");
    assert!(store.audit_list(10).await.unwrap().iter().all(|a| a.action != AUDIT_MACHINE_REMOVE));

    let unknown = store.machine_remove("nope", "alice (tok-1)", "x").await.unwrap_err();
    assert!(unknown.is_not_found(), "{unknown}");
}

async fn a_removed_machine_leaves_its_history_and_audit_behind(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("m1", "10.0.0.1")).await.unwrap();
    store.machine_upsert(&new_machine("m2", "10.0.0.2")).await.unwrap();
    store.credentials_put("m1", "root", &"calvin-s3cret".into()).await.unwrap();
    store.machine_set_state("m1", HostState::Ready, None, "explored").await.unwrap();
    store.request_create(&request("m1")).await.unwrap();
    assert!(store.request_delete("m1").await.unwrap(), "the update is over (restored or aborted)");

    let removed = store.machine_remove("m1", "alice (tok-1)", "rack decommissioned").await.unwrap();
    let Removal::Removed(machine) = removed else { panic!("refused: {removed:?}") };
    assert_eq!(machine.id, "m1");
    assert!(store.machine_get("m1").await.unwrap().is_none());
    assert!(store.credentials_get("m1").await.unwrap().is_none(), "credentials destroyed");
    assert!(store.machine_get("m2").await.unwrap().is_some(), "the others stay");
    let history = store.history_list("m1", 10).await.unwrap();
    assert!(history.len() >= 2, "history kept: {history:?}");
    assert!(history[0].message.contains("removed from the site by alice (tok-1)"), "{:?}", history[0]);
    let audit = store.audit_list(1).await.unwrap();
    assert_eq!((audit[0].actor.as_str(), audit[0].action.as_str()), ("alice (tok-1)", AUDIT_MACHINE_REMOVE));
    assert_eq!(audit[0].target, "m1");
    assert!(audit[0].detail.contains("rack decommissioned") && audit[0].detail.contains("10.0.0.1"));
    assert!(!audit[0].detail.contains("calvin"), "no secret in the audit trail");

    // The same id (and BMC) can be registered again later: nothing of the old one is in the way.
    store.machine_upsert(&new_machine("m1", "10.0.0.1")).await.unwrap();
    assert!(store.credentials_get("m1").await.unwrap().is_none());
}

async fn a_host_in_repair_stays_marked_until_it_leaves_maintenance(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("m1", "10.0.0.1")).await.unwrap();
    store.machine_set_state("m1", HostState::HostReprovision, None, "updating").await.unwrap();
    store.machine_enter_repair("m1", "aborted: BMC dead", "alice (tok-1)", "aborted to maintenance").await.unwrap();
    let m = store.machine_get("m1").await.unwrap().unwrap();
    assert_eq!(m.state, HostState::Maintenance);
    let mark = m.repair.expect("marked");
    assert_eq!((mark.reason.as_str(), mark.by.as_str()), ("aborted: BMC dead", "alice (tok-1)"));
    // A retried activity keeps the first mark.
    store.machine_enter_repair("m1", "again", "bob", "again").await.unwrap();
    assert_eq!(store.machine_get("m1").await.unwrap().unwrap().repair.unwrap().reason, "aborted: BMC dead");

    store.machine_maintenance("m1", false, "repaired").await.unwrap();
    let m = store.machine_get("m1").await.unwrap().unwrap();
    assert_eq!((m.state, m.repair), (HostState::Ready, None));

    let unknown = store.machine_enter_repair("nope", "x", "y", "z").await.unwrap_err();
    assert!(unknown.is_not_found(), "{unknown}");
}

crate::both_backends!(
    a_machine_with_a_request_is_not_removed,
    a_removed_machine_leaves_its_history_and_audit_behind,
    a_host_in_repair_stays_marked_until_it_leaves_maintenance
);
