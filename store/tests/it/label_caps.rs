//! Machine labels and the failure-domain guard of request creation, on both backends: labels set
//! and removed (bad ones change nothing), and concurrent requests for hosts of one rack never put
//! more of them in flight than the cap, whoever makes them.

use std::collections::BTreeMap;

use crate::common;

use common::Ctx;
use hostfw_model::{HostState, Labels};
use hostfw_store::{NewMachine, NewRequest, RequestCreate, Store, StoreError};

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

async fn machine(store: &Store, id: &str, l: &[(&str, &str)]) {
    store
        .machine_upsert(&NewMachine {
            id: id.to_owned(),
            bmc_address: format!("bmc-{id}").parse().unwrap(),
            vendor: None,
            model: None,
            state: HostState::Ready,
            instance_id: None,
            labels: Some(labels(l)),
        })
        .await
        .unwrap();
}

fn request(id: &str) -> NewRequest {
    NewRequest { machine_id: id.into(), initiator: "test".into(), update_message: None, workflow_id: None }
}

fn caps(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

async fn labels_are_stored_changed_and_checked(Ctx { store, .. }: Ctx) {
    machine(&store, "m1", &[("rack", "r1"), ("row", "a")]).await;
    assert_eq!(store.machine_get("m1").await.unwrap().unwrap().labels, labels(&[("rack", "r1"), ("row", "a")]));
    let after = store
        .machine_set_labels("m1", &labels(&[("rack", "r2"), ("power_domain", "p4")]), &["row".into()])
        .await
        .unwrap();
    assert_eq!(after, labels(&[("power_domain", "p4"), ("rack", "r2")]));
    assert_eq!(store.machine_get("m1").await.unwrap().unwrap().labels, after, "stored");
    let bad = store.machine_set_labels("m1", &labels(&[("Rack", "r9")]), &[]).await.unwrap_err();
    assert!(matches!(bad, StoreError::Invalid { .. }), "{bad}");
    let both = store.machine_set_labels("m1", &labels(&[("rack", "r9")]), &["rack".into()]).await.unwrap_err();
    assert!(both.to_string().contains("both set and removed"), "{both}");
    assert_eq!(store.machine_get("m1").await.unwrap().unwrap().labels, after, "refusals change nothing");
    assert!(store.machine_set_labels("nope", &Labels::new(), &[]).await.unwrap_err().is_not_found());
    // Registering again without labels keeps them; with labels replaces them.
    store
        .machine_upsert(&NewMachine {
            id: "m1".into(),
            bmc_address: "bmc-m1".parse().unwrap(),
            vendor: None,
            model: None,
            state: HostState::Ready,
            instance_id: None,
            labels: None,
        })
        .await
        .unwrap();
    assert_eq!(store.machine_get("m1").await.unwrap().unwrap().labels, after, "kept");
    machine(&store, "m1", &[]).await;
    assert!(store.machine_get("m1").await.unwrap().unwrap().labels.is_empty(), "replaced by none");
}

async fn a_full_rack_refuses_a_request_and_names_the_holders(Ctx { store, .. }: Ctx) {
    machine(&store, "a1", &[("rack", "r1")]).await;
    machine(&store, "a2", &[("rack", "r1")]).await;
    machine(&store, "a3", &[("rack", "r1")]).await;
    machine(&store, "b1", &[("rack", "r2")]).await;
    machine(&store, "free", &[]).await;
    let rack1 = caps(&[("rack", 1)]);
    assert!(matches!(store.request_create_capped(&request("a1"), &rack1).await.unwrap(), RequestCreate::Created(_)));
    let refused = store.request_create_capped(&request("a2"), &rack1).await.unwrap_err();
    match &refused {
        StoreError::LabelCapReached { machine, key, value, limit, holders } => {
            assert_eq!((machine.as_str(), key.as_str(), value.as_str(), *limit), ("a2", "rack", "r1", 1));
            assert_eq!(holders, &vec!["a1".to_string()]);
        }
        other => panic!("expected LabelCapReached, got {other}"),
    }
    assert!(refused.to_string().contains("max_concurrent_per_label.rack = 1"), "{refused}");
    assert!(store.request_get("a2").await.unwrap().is_none(), "nothing written");
    assert!(matches!(store.request_create_capped(&request("b1"), &rack1).await.unwrap(), RequestCreate::Created(_)));
    assert!(matches!(store.request_create_capped(&request("free"), &rack1).await.unwrap(), RequestCreate::Created(_)));
    // An existing request is returned as before, not refused by its own rack.
    assert!(matches!(store.request_create_capped(&request("a1"), &rack1).await.unwrap(), RequestCreate::Exists(_)));
    // Uncapped creation (and another key's cap) ignores the rack.
    assert!(matches!(
        store.request_create_capped(&request("a2"), &caps(&[("power_domain", 1)])).await.unwrap(),
        RequestCreate::Created(_)
    ));
    // A host in maintenance fills its rack too.
    store.request_delete("a1").await.unwrap();
    store.request_delete("a2").await.unwrap();
    assert!(matches!(
        store.machine_maintenance("a1", true, "DIMM swap").await.unwrap(),
        hostfw_store::MaintenanceChange::Changed(_)
    ));
    let refused = store.request_create_capped(&request("a3"), &rack1).await.unwrap_err();
    assert!(
        matches!(refused, StoreError::LabelCapReached { ref holders, .. } if holders == &vec!["a1".to_string()]),
        "{refused}"
    );
    assert!(matches!(
        store.request_create_capped(&request("a3"), &caps(&[("rack", 2)])).await.unwrap(),
        RequestCreate::Created(_)
    ));
}

/// Twelve hosts in two racks, every request made at once, three rounds with caps 1, 2 and 3:
/// each rack ends with exactly `cap` requests.
async fn concurrent_requests_never_overshoot_a_cap(Ctx { store, .. }: Ctx) {
    for i in 0..8 {
        machine(&store, &format!("r1-{i}"), &[("rack", "r1"), ("power_domain", "p1")]).await;
    }
    for i in 0..4 {
        machine(&store, &format!("r2-{i}"), &[("rack", "r2"), ("power_domain", "p1")]).await;
    }
    for cap in 1..=3u32 {
        for m in store.machine_list().await.unwrap() {
            store.request_delete(&m.id).await.unwrap();
        }
        let caps = caps(&[("rack", cap)]);
        let tasks: Vec<_> = store
            .machine_list()
            .await
            .unwrap()
            .into_iter()
            .map(|m| {
                let (store, caps) = (store.clone(), caps.clone());
                tokio::spawn(async move { store.request_create_capped(&request(&m.id), &caps).await })
            })
            .collect();
        for t in tasks {
            match t.await.unwrap() {
                Ok(RequestCreate::Created(_)) | Err(StoreError::LabelCapReached { .. }) => {}
                other => panic!("unexpected outcome {other:?}"),
            }
        }
        let requests = store.request_list().await.unwrap();
        let per_rack = |rack: &str| requests.iter().filter(|r| r.machine_id.starts_with(rack)).count() as u32;
        assert_eq!((per_rack("r1-"), per_rack("r2-")), (cap, cap), "cap {cap}: {requests:?}");
    }
    // Two caps at once: power domain p1 (every host) at 2 beats rack at 3.
    for m in store.machine_list().await.unwrap() {
        store.request_delete(&m.id).await.unwrap();
    }
    let both = caps(&[("rack", 3), ("power_domain", 2)]);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (store, both) = (store.clone(), both.clone());
            tokio::spawn(async move { store.request_create_capped(&request(&format!("r1-{i}")), &both).await.is_ok() })
        })
        .collect();
    let mut created = 0;
    for t in tasks {
        created += u32::from(t.await.unwrap());
    }
    assert_eq!(created, 2, "the power domain's cap");
}

both_backends!(
    labels_are_stored_changed_and_checked,
    a_full_rack_refuses_a_request_and_names_the_holders,
    concurrent_requests_never_overshoot_a_cap
);
