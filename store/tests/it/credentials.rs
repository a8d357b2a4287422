//! BMC credentials on both backends: put/replace/get, the password never shows in Debug, and it
//! is encrypted at rest with the site key: wrong key, copied rows, legacy plaintext rows, no key,
//! and re-encryption under a new key (`credentials_rekey`).

use crate::common;

use common::{other_key, test_key, Ctx};
use hostfw_store::{Store, StoreError};
use sqlx::{Connection, Row};

/// The raw `password` column of `machine`.
async fn raw_password(url: &str, machine: &str) -> String {
    let mut conn = sqlx::AnyConnection::connect(url).await.expect("raw connection");
    let row = sqlx::query("SELECT password FROM credentials WHERE machine_id = $1")
        .bind(machine)
        .fetch_one(&mut conn)
        .await
        .expect("row");
    row.try_get("password").expect("password column")
}

/// Writes `password` verbatim into the `password` column of `machine` (a new row if needed).
async fn raw_put(url: &str, machine: &str, password: &str) {
    let mut conn = sqlx::AnyConnection::connect(url).await.expect("raw connection");
    sqlx::query(
        "INSERT INTO credentials (machine_id, username, password, updated_at_ms) VALUES ($1, 'root', $2, 0) \
         ON CONFLICT (machine_id) DO UPDATE SET password = excluded.password",
    )
    .bind(machine)
    .bind(password)
    .execute(&mut conn)
    .await
    .expect("raw insert");
}

async fn reopen(url: &str, key: Option<hostfw_store::SiteKey>) -> Store {
    Store::connect(url).await.expect("reconnect").with_site_key(key)
}

async fn put_get_and_redaction(Ctx { store, .. }: Ctx) {
    assert_eq!(store.credentials_get("m").await.unwrap(), None);
    store.credentials_put("m", "root", &"calvin-s3cret".into()).await.unwrap();
    let c = store.credentials_get("m").await.unwrap().unwrap();
    assert_eq!((c.username.as_str(), c.password.expose()), ("root", "calvin-s3cret"));

    let shown = format!("{c:?} {c:#?} {:?} {store:?}", Some(c.clone()));
    assert!(!shown.contains("calvin-s3cret"), "password leaked in Debug: {shown}");
    assert!(shown.contains("root") && shown.contains("redacted"));

    store.credentials_put("m", "admin", &"n3w-pass".into()).await.unwrap();
    let c = store.credentials_get("m").await.unwrap().unwrap();
    assert_eq!((c.username.as_str(), c.password.expose()), ("admin", "n3w-pass"));
    assert_eq!(store.credentials_get("other").await.unwrap(), None);
}

async fn stored_encrypted_with_a_fresh_nonce(Ctx { store, url }: Ctx) {
    store.credentials_put("m1", "root", &"calvin-s3cret".into()).await.unwrap();
    store.credentials_put("m2", "root", &"calvin-s3cret".into()).await.unwrap();
    let (a, b) = (raw_password(&url, "m1").await, raw_password(&url, "m2").await);
    let prefix = format!("hostfw-enc:v1:{}:", test_key().id());
    assert!(a.starts_with(&prefix) && b.starts_with(&prefix), "{a} / {b}");
    assert!(!a.contains("calvin") && !a.contains("s3cret"), "plaintext in the column: {a}");
    assert_ne!(a, b, "same password, same ciphertext: the nonce is not random");
    assert_eq!(store.credentials_plaintext_count().await.unwrap(), 0);
}

async fn wrong_key_names_machine_and_both_key_ids(Ctx { store, url }: Ctx) {
    store.credentials_put("m1", "root", &"pw".into()).await.unwrap();
    let other = reopen(&url, Some(other_key())).await;
    let err = other.credentials_get("m1").await.expect_err("another key must not open it");
    let text = err.to_string();
    assert!(matches!(err, StoreError::Credential { .. }), "{err:?}");
    assert!(text.contains("\"m1\""), "{text}");
    assert!(text.contains(test_key().id()) && text.contains(other_key().id()), "{text}");
    assert!(!text.contains("pw\""), "{text}");

    let keyless = reopen(&url, None).await;
    let err = keyless.credentials_get("m1").await.expect_err("no key").to_string();
    assert!(err.contains("no site key is configured") && err.contains(test_key().id()), "{err}");
    other.close().await;
    keyless.close().await;
}

async fn ciphertext_copied_to_another_machine_does_not_open(Ctx { store, url }: Ctx) {
    store.credentials_put("m1", "root", &"pw-of-m1".into()).await.unwrap();
    store.credentials_put("m2", "root", &"pw-of-m2".into()).await.unwrap();
    raw_put(&url, "m2", &raw_password(&url, "m1").await).await;
    let err = store.credentials_get("m2").await.expect_err("m1's ciphertext on m2's row").to_string();
    assert!(err.contains("\"m2\"") && err.contains("altered or copied"), "{err}");
    assert_eq!(store.credentials_get("m1").await.unwrap().unwrap().password.expose(), "pw-of-m1");
}

async fn no_key_refuses_writes_and_reads_legacy_plaintext(Ctx { url, .. }: Ctx) {
    let keyless = reopen(&url, None).await;
    let err = keyless.credentials_put("m1", "root", &"pw".into()).await.expect_err("no key, no write");
    let text = err.to_string();
    assert!(matches!(err, StoreError::NoSiteKey { .. }), "{err:?}");
    assert!(text.contains("\"m1\"") && text.contains("hostfw site-key generate --out FILE"), "{text}");
    assert!(text.contains("secret_key_file"), "{text}");

    raw_put(&url, "legacy", "plain-old-pw").await;
    assert_eq!(keyless.credentials_get("legacy").await.unwrap().unwrap().password.expose(), "plain-old-pw");
    assert_eq!(keyless.warn_plaintext_credentials().await.unwrap(), 1);
    keyless.close().await;
}

async fn rekey_encrypts_everything_under_the_new_key(Ctx { store, url }: Ctx) {
    store.credentials_put("m1", "root", &"pw1".into()).await.unwrap();
    store.credentials_put("m2", "admin", &"pw2".into()).await.unwrap();
    raw_put(&url, "legacy", "plain-old-pw").await;
    assert_eq!(store.credentials_plaintext_count().await.unwrap(), 1);

    let done = store.credentials_rekey(&other_key(), "cli:test").await.unwrap();
    assert_eq!((done.rows, done.were_plaintext), (3, 1));
    assert_eq!(store.credentials_plaintext_count().await.unwrap(), 0);
    for m in ["m1", "m2", "legacy"] {
        let raw = raw_password(&url, m).await;
        assert!(raw.starts_with(&format!("hostfw-enc:v1:{}:", other_key().id())), "{m}: {raw}");
    }

    let old = store.credentials_get("m1").await.expect_err("old key no longer opens").to_string();
    assert!(old.contains(other_key().id()) && old.contains(test_key().id()), "{old}");
    let new = reopen(&url, Some(other_key())).await;
    assert_eq!(new.credentials_get("m2").await.unwrap().unwrap().password.expose(), "pw2");
    assert_eq!(new.credentials_get("legacy").await.unwrap().unwrap().password.expose(), "plain-old-pw");

    let audit = store.audit_list(1).await.unwrap();
    assert_eq!(audit[0].action, "credentials rekey");
    assert!(audit[0].detail.contains("3 passwords") && audit[0].detail.contains(other_key().id()), "{:?}", audit[0]);
    new.close().await;
}

async fn rekey_changes_nothing_when_a_row_does_not_open(Ctx { store, url }: Ctx) {
    store.credentials_put("a", "root", &"pw-a".into()).await.unwrap();
    let before_b = {
        let other = reopen(&url, Some(other_key())).await;
        other.credentials_put("b", "root", &"pw-b".into()).await.unwrap();
        other.close().await;
        raw_password(&url, "b").await
    };
    let before_a = raw_password(&url, "a").await;
    let err = store.credentials_rekey(&SiteKey::from_bytes([3; 32]), "cli:test").await.expect_err("b is foreign");
    assert!(err.to_string().contains("\"b\""), "{err}");
    assert_eq!(raw_password(&url, "a").await, before_a, "a was re-encrypted although the rekey failed");
    assert_eq!(raw_password(&url, "b").await, before_b);
    assert!(store.audit_list(5).await.unwrap().iter().all(|e| e.action != "credentials rekey"));
}

/// Backends waiting for a lock in the database of `conn`.
async fn lock_waiters(conn: &mut sqlx::AnyConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE NOT l.granted AND a.datname = current_database()",
    )
    .fetch_one(conn)
    .await
    .expect("pg_locks")
}

/// PostgreSQL: a password update by a worker still on the old key races `rotate-key`. The
/// rotation is held on its first row; the update of another row then lands either wholly before
/// it (re-encrypted) or after it (refused: its writer has the old key), never lost under the old
/// password and never sealed with the old key. A writer with the new key then writes normally.
async fn a_password_update_racing_the_rotation_is_neither_lost_nor_sealed_with_the_old_key(Ctx { store, url }: Ctx) {
    if store.backend() != hostfw_store::Backend::Postgres {
        return; // SQLite serializes its writers: there is no interleaving to test.
    }
    for (m, pw) in [("m1", "pw1"), ("m2", "pw2")] {
        store.credentials_put(m, "root", &pw.into()).await.unwrap();
    }
    let mut blocker = sqlx::AnyConnection::connect(&url).await.unwrap();
    let mut observer = sqlx::AnyConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut blocker).await.unwrap();
    sqlx::query("SELECT password FROM credentials WHERE machine_id = 'm1' FOR UPDATE")
        .fetch_all(&mut blocker)
        .await
        .unwrap();
    let rekey = tokio::spawn({
        let store = store.clone();
        async move { store.credentials_rekey(&other_key(), "cli:test").await }
    });
    let rotation_waits = async {
        while lock_waiters(&mut observer).await < 1 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), rotation_waits).await.expect("the rotation waits for m1");
    let update = tokio::spawn({
        let store = store.clone();
        async move { store.credentials_put("m2", "root", &"pw2-new".into()).await }
    });
    // The update either finished (it ran before the rotation took its locks) or waits for it.
    let waiting = async {
        loop {
            if update.is_finished() || lock_waiters(&mut observer).await >= 2 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), waiting).await.expect("the update finished or waits");
    sqlx::query("COMMIT").execute(&mut blocker).await.unwrap();
    let rekeyed = rekey.await.unwrap().expect("the rotation completes");
    assert_eq!(rekeyed.rows, 2);
    let updated = update.await.unwrap();

    let raw = raw_password(&url, "m2").await;
    assert!(raw.starts_with(&format!("hostfw-enc:v1:{}:", other_key().id())), "m2 sealed with the old key: {raw}");
    let new = reopen(&url, Some(other_key())).await;
    let read = new.credentials_get("m2").await.expect("m2 opens with the new key").unwrap();
    match &updated {
        Ok(()) => assert_eq!(read.password.expose(), "pw2-new", "the update was lost under the rotation"),
        Err(StoreError::StaleSiteKey { machine, stored_key, site_key }) => {
            assert_eq!(
                (machine.as_str(), stored_key.as_str(), site_key.as_str()),
                ("m2", other_key().id(), test_key().id())
            );
            assert_eq!(read.password.expose(), "pw2", "a refused update changed nothing");
            let text = updated.as_ref().unwrap_err().to_string();
            assert!(text.contains("restart") && text.contains(other_key().id()), "{text}");
        }
        Err(e) => panic!("unexpected: {e}"),
    }
    // The old key is refused from now on, the new one writes.
    assert!(matches!(store.credentials_put("m3", "root", &"x".into()).await, Err(StoreError::StaleSiteKey { .. })));
    new.credentials_put("m2", "root", &"pw2-newer".into()).await.unwrap();
    assert_eq!(new.credentials_get("m2").await.unwrap().unwrap().password.expose(), "pw2-newer");
    new.close().await;
}

use hostfw_store::SiteKey;

both_backends!(
    a_password_update_racing_the_rotation_is_neither_lost_nor_sealed_with_the_old_key,
    put_get_and_redaction,
    stored_encrypted_with_a_fresh_nonce,
    wrong_key_names_machine_and_both_key_ids,
    ciphertext_copied_to_another_machine_does_not_open,
    no_key_refuses_writes_and_reads_legacy_plaintext,
    rekey_encrypts_everything_under_the_new_key,
    rekey_changes_nothing_when_a_row_does_not_open,
);
