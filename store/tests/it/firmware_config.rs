//! Runtime catalog versions on both backends: numbering from 1, latest, history newest first with
//! a limit, JSON round trip, and unique version numbers under concurrent puts.

use crate::common;

use common::Ctx;
use hostfw_store::FirmwareConfigVersion;

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

both_backends!(put_latest_history, survives_reconnect, concurrent_puts_get_unique_versions);
