//! Activation marks on both backends: put, read, replace, clear, keyed by (run, activity), and
//! marks older than a day pruned when a new one is recorded.

use crate::common;

use common::Ctx;
use hostfw_store::now_ms;

async fn marks_are_keyed_by_run_and_activity(Ctx { store, .. }: Ctx) {
    assert_eq!(store.activation_mark_get("run-a", "5").await.unwrap(), None);
    store.activation_mark_put("run-a", "5", "m1", 1_000).await.unwrap();
    store.activation_mark_put("run-b", "5", "m2", 2_000).await.unwrap();
    assert_eq!(
        store.activation_mark_get("run-a", "5").await.unwrap(),
        None,
        "older than a day: pruned by the next put"
    );
    let now = now_ms();
    store.activation_mark_put("run-a", "5", "m1", now).await.unwrap();
    store.activation_mark_put("run-a", "6", "m1", now - 1).await.unwrap();
    assert_eq!(store.activation_mark_get("run-a", "5").await.unwrap(), Some(now));
    assert_eq!(store.activation_mark_get("run-a", "6").await.unwrap(), Some(now - 1));
    store.activation_mark_put("run-a", "5", "m1", now + 7).await.unwrap();
    assert_eq!(store.activation_mark_get("run-a", "5").await.unwrap(), Some(now + 7), "replaced");
    store.activation_mark_clear("run-a", "5").await.unwrap();
    assert_eq!(store.activation_mark_get("run-a", "5").await.unwrap(), None);
    assert_eq!(store.activation_mark_get("run-a", "6").await.unwrap(), Some(now - 1), "the other step kept");
    store.activation_mark_clear("run-a", "5").await.unwrap();
}

both_backends!(marks_are_keyed_by_run_and_activity);
