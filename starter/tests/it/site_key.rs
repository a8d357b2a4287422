//! `site-key generate` and `rotate-key` (every stored password re-encrypted), and a site without
//! a key refusing to store a password.

use crate::common::Site;

#[tokio::test]
async fn site_key_generate_and_rotate_key_re_encrypt_every_password() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "m1", "--bmc", "10.0.0.1", "--bmc-username", "root", "--bmc-password", "pw1"])
        .await;
    // A row written before encryption existed.
    use sqlx::Connection as _;
    let mut conn = sqlx::AnyConnection::connect(&format!("sqlite://{}", site.dir.join("site.db").display()))
        .await
        .expect("raw connection");
    sqlx::query(
        "INSERT INTO credentials (machine_id, username, password, updated_at_ms) VALUES ('old', 'u', 'legacy-pw', 0)",
    )
    .execute(&mut conn)
    .await
    .expect("legacy row");

    let new_key = site.dir.join("new.key");
    let out = site.ok(&["site-key", "generate", "--out", new_key.to_str().unwrap()]).await;
    assert!(out.contains("new.key") && out.contains("mode 0600"), "{out}");
    let err = site.fails(&["site-key", "generate", "--out", new_key.to_str().unwrap()]).await;
    assert!(err.contains("refusing to overwrite") && err.contains("new.key"), "{err}");

    let out = site.ok(&["machine", "rotate-key", "--new-key-file", new_key.to_str().unwrap()]).await;
    assert!(out.contains("re-encrypted 2 BMC passwords (1 were plaintext)"), "{out}");
    let rows: Vec<(String,)> = sqlx::query_as("SELECT password FROM credentials").fetch_all(&mut conn).await.unwrap();
    let id = hostfw_store::SiteKey::from_file(&new_key).unwrap().id().to_string();
    assert!(rows.iter().all(|(p,)| p.starts_with(&format!("hostfw-enc:v1:{id}:"))), "{rows:?}");

    // The configured (old) key no longer opens them; the new one does.
    let err = site.store().await.credentials_get("m1").await.expect_err("old key").to_string();
    assert!(err.contains(&id), "{err}");
    std::fs::rename(&new_key, site.dir.join("site.key")).unwrap();
    let store = site.store().await;
    assert_eq!(store.credentials_get("old").await.unwrap().unwrap().password.expose(), "legacy-pw");
    assert_eq!(store.audit_list(1).await.unwrap()[0].action, "credentials rekey");
}

#[tokio::test]
async fn a_site_without_a_key_refuses_to_store_a_password() {
    let site = Site::new();
    std::fs::remove_file(site.dir.join("site.key")).unwrap();
    site.reconfigure(|toml| toml.unset("site", "secret_key_file"));
    let err = site
        .fails(&["machine", "add", "--id", "m1", "--bmc", "10.0.0.1", "--bmc-username", "root", "--bmc-password", "pw"])
        .await;
    assert!(err.contains("hostfw site-key generate --out FILE") && err.contains("\"m1\""), "{err}");
}
