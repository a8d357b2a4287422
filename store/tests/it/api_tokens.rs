//! API tokens on both backends: the secret is shown once and only its hash kept, a wrong secret,
//! a revoked and an expired token authenticate nothing, names are unique among live tokens, bad
//! input is refused with nothing written, and every change is audited.

use hostfw_model::Role;
use hostfw_store::{NewToken, StoreError, TokenRefused};
use sqlx::Connection;

use crate::common;

use common::Ctx;

fn new(name: &str, role: Role, instances: &[&str]) -> NewToken {
    NewToken {
        name: name.to_string(),
        role,
        instances: instances.iter().map(|s| s.to_string()).collect(),
        expires_at_ms: None,
    }
}

async fn create_authenticate_revoke(Ctx { store, url }: Ctx) {
    let (token, text) = store.token_create(&new("alice", Role::Operator, &[]), "bootstrap").await.unwrap();
    assert!(text.starts_with(&format!("hfw_{}_", token.id)), "{text}");
    assert_eq!(store.token_authenticate(&text).await.unwrap(), Ok(token.clone()));
    assert_eq!(token.principal(), format!("alice (token {})", token.id));

    // Only the hash is stored: the secret appears in no column.
    let secret = text.rsplit('_').next().unwrap();
    let mut conn = sqlx::AnyConnection::connect(&url).await.unwrap();
    let stored: String = sqlx::query_scalar("SELECT secret_sha256 FROM api_tokens").fetch_one(&mut conn).await.unwrap();
    assert!(!stored.contains(secret));

    // A wrong secret for a real id, and garbage, are refused alike.
    let wrong = format!("hfw_{}_{}", token.id, "0".repeat(48));
    assert_eq!(store.token_authenticate(&wrong).await.unwrap(), Err(TokenRefused::Unknown));
    assert_eq!(store.token_authenticate("Bearer nonsense").await.unwrap(), Err(TokenRefused::Unknown));

    // The name is taken while the token lives.
    let dup = store.token_create(&new("alice", Role::Viewer, &[]), "bootstrap").await.unwrap_err();
    assert!(matches!(dup, StoreError::Conflict { .. }), "{dup}");

    let revoked = store.token_revoke(&token.id, "admin-bob").await.unwrap();
    assert_eq!(revoked.revoked_by.as_deref(), Some("admin-bob"));
    assert_eq!(store.token_authenticate(&text).await.unwrap(), Err(TokenRefused::Revoked { id: token.id.clone() }));
    assert!(matches!(store.token_revoke(&token.id, "admin-bob").await, Err(StoreError::Conflict { .. })));
    assert!(store.token_revoke("tnope", "admin-bob").await.unwrap_err().is_not_found());
    // A revoked token's name may be given again.
    store.token_create(&new("alice", Role::Viewer, &[]), "bootstrap").await.unwrap();

    let audit: Vec<_> = store.audit_list(10).await.unwrap().into_iter().map(|e| (e.actor, e.action)).collect();
    assert_eq!(
        audit,
        [
            ("bootstrap".to_string(), "token_create".to_string()),
            ("admin-bob".to_string(), "token_revoke".to_string()),
            ("bootstrap".to_string(), "token_create".to_string()),
        ]
    );
    assert_eq!(store.token_list().await.unwrap().len(), 2);
}

async fn expired_tokens_and_bad_input(Ctx { store, .. }: Ctx) {
    let soon = hostfw_store::now_ms() + 300;
    let (token, text) = store
        .token_create(&NewToken { expires_at_ms: Some(soon), ..new("short", Role::Viewer, &[]) }, "a")
        .await
        .unwrap();
    assert!(store.token_authenticate(&text).await.unwrap().is_ok());
    while hostfw_store::now_ms() <= soon {
        tokio::task::yield_now().await;
    }
    assert_eq!(store.token_authenticate(&text).await.unwrap(), Err(TokenRefused::Expired { id: token.id }));

    let refused = [
        new("", Role::Viewer, &[]),
        new("has space", Role::Viewer, &[]),
        new("tenant-without-instances", Role::Tenant, &[]),
        new("viewer-with-instances", Role::Viewer, &["i-1"]),
        new("blank-instance", Role::Tenant, &[" "]),
        NewToken { expires_at_ms: Some(1), ..new("past", Role::Viewer, &[]) },
    ];
    for bad in refused {
        let err = store.token_create(&bad, "a").await.unwrap_err();
        assert!(matches!(err, StoreError::Invalid { .. }), "{}: {err}", bad.name);
    }
    // Nothing was written by the refusals.
    assert_eq!(store.token_list().await.unwrap().len(), 1);
    assert_eq!(store.audit_list(10).await.unwrap().len(), 1);
    let (tenant, _) = store.token_create(&new("t1", Role::Tenant, &["i-1", "i-2"]), "a").await.unwrap();
    assert_eq!(store.token_get(&tenant.id).await.unwrap().unwrap().instances, ["i-1", "i-2"]);
    assert_eq!(store.token_active_admins().await.unwrap(), 0);
}

both_backends!(create_authenticate_revoke, expired_tokens_and_bad_input);
