//! BMC credentials on both backends: put/replace/get, and the password never shows in Debug.

use crate::common;

use common::Ctx;

async fn put_get_and_redaction(Ctx { store, .. }: Ctx) {
    assert_eq!(store.credentials_get("m").await.unwrap(), None);
    store.credentials_put("m", "root", &"calvin-s3cret".into()).await.unwrap();
    let c = store.credentials_get("m").await.unwrap().unwrap();
    assert_eq!((c.username.as_str(), c.password.expose()), ("root", "calvin-s3cret"));

    let shown = format!("{c:?} {c:#?} {:?}", Some(c.clone()));
    assert!(!shown.contains("calvin-s3cret"), "password leaked in Debug: {shown}");
    assert!(shown.contains("root") && shown.contains("redacted"));

    store.credentials_put("m", "admin", &"n3w-pass".into()).await.unwrap();
    let c = store.credentials_get("m").await.unwrap().unwrap();
    assert_eq!((c.username.as_str(), c.password.expose()), ("admin", "n3w-pass"));
    assert_eq!(store.credentials_get("other").await.unwrap(), None);
}

both_backends!(put_get_and_redaction);
