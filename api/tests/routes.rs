//! The API on a real listener over a real site database (SQLite): every route of the table walked
//! with every role (no token, a wrong one, viewer, operator, admin, tenant) and checked allowed or
//! refused as its `Access` says; a tenant cannot read or approve another tenant's host; the
//! OpenAPI document lists exactly the table's routes with their roles; the audit trail names the
//! authenticated caller; revoked tokens authenticate nothing.

use std::sync::Arc;

use hostfw_api::access::{Access, Decision};
use hostfw_api::routes::ROUTES;
use hostfw_api::ApiServer;
use hostfw_model::{HostState, Role, SiteConfig};
use hostfw_store::{NewMachine, NewToken, Store};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

struct Site {
    _dir: tempfile::TempDir,
    api: ApiServer,
    store: Store,
    http: reqwest::Client,
}

async fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let text = "[site]\nname = \"api-test\"\ndatabase_url = \"sqlite://site.db\"\n[api]\nlisten = \"127.0.0.1:0\"\n\
                [temporal]\naddress = \"http://127.0.0.1:1\"\n";
    std::fs::write(dir.path().join("site.toml"), text).unwrap();
    let config = SiteConfig::load(&dir.path().join("site.toml")).unwrap();
    let store = Store::open_site(&config).await.unwrap();
    for (n, (id, instance)) in [("m-1", Some("i-1")), ("m-2", Some("i-2")), ("m-3", None)].into_iter().enumerate() {
        let machine = NewMachine {
            id: id.into(),
            bmc_address: format!("127.0.0.{}:443", 10 + n).parse().unwrap(),
            vendor: Some("Dell Inc.".into()),
            model: Some("PowerEdge R750".into()),
            state: if instance.is_some() { HostState::Assigned } else { HostState::Ready },
            instance_id: instance.map(str::to_string),
            labels: None,
        };
        store.machine_upsert(&machine).await.unwrap();
    }
    let api = ApiServer::start(Arc::new(config), store.clone()).await.unwrap();
    Site { _dir: dir, api, store, http: reqwest::Client::new() }
}

async fn token(store: &Store, name: &str, role: Role, instances: &[&str]) -> String {
    let new = NewToken {
        name: name.into(),
        role,
        instances: instances.iter().map(|s| s.to_string()).collect(),
        expires_at_ms: None,
    };
    store.token_create(&new, "test setup").await.unwrap().1
}

impl Site {
    async fn call(&self, method: Method, path: &str, token: Option<&str>, body: Option<Value>) -> (StatusCode, String) {
        let mut req = self.http.request(method, format!("{}{path}", self.api.url()));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        (status, resp.text().await.unwrap())
    }
}

/// A body each write route accepts in shape (its effect does not matter here).
fn body_for(method: &Method, path: &str) -> Option<Value> {
    if *method != Method::POST {
        return None;
    }
    Some(match path {
        "/v1/tokens" => json!({"name": format!("t{}", rand_suffix()), "role": "viewer"}),
        "/v1/budgets/resume" => json!({"model": "nope", "component": "bmc", "version": "1"}),
        "/v1/instances/{id}/reboot" => json!({"apply_updates_on_reboot": false}),
        _ => json!({}),
    })
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The path with `{id}` filled in: the tenant's own instance or machine, or a token id.
fn concrete(path: &str, own: bool) -> String {
    let id = if path.starts_with("/v1/instances/") {
        if own {
            "i-1"
        } else {
            "i-2"
        }
    } else if path.starts_with("/v1/tokens/") {
        "tnotoken"
    } else if own {
        "m-1"
    } else {
        "m-2"
    };
    path.replace("{id}", id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_with_every_role_is_allowed_or_refused_as_the_table_says() {
    let site = site().await;
    let mut tokens = [
        ("viewer", Some(token(&site.store, "v", Role::Viewer, &[]).await), Some(Role::Viewer)),
        ("operator", Some(token(&site.store, "o", Role::Operator, &[]).await), Some(Role::Operator)),
        ("admin", Some(token(&site.store, "a", Role::Admin, &[]).await), Some(Role::Admin)),
        ("tenant", Some(token(&site.store, "ten", Role::Tenant, &["i-1"]).await), Some(Role::Tenant)),
        ("no token", None, None),
        ("wrong token", Some("hfw_tdeadbeef00_0000".to_string()), None),
    ];
    let mut checked = 0;
    for route in ROUTES {
        for (who, token, role) in tokens.iter_mut() {
            for own in [true, false] {
                let path = concrete(route.path, own);
                let (status, body) =
                    site.call(route.method.clone(), &path, token.as_deref(), body_for(&route.method, route.path)).await;
                let expect = match (route.access, *role) {
                    (Access::Public, _) => "allowed",
                    (_, None) => "401",
                    (access, Some(role)) => {
                        let principal = hostfw_api::principal::Principal {
                            token_id: String::new(),
                            name: String::new(),
                            role,
                            instances: vec!["i-1".into()],
                            actor: String::new(),
                        };
                        match hostfw_api::access::decide(access, &principal) {
                            Decision::Allow => "allowed",
                            Decision::Deny => "403",
                            Decision::AllowIfInstanceInScope if own => "allowed",
                            Decision::AllowIfInstanceInScope => "403",
                        }
                    }
                };
                let what = format!("{who} {} {path}: {status} {body}", route.method);
                match expect {
                    "401" => assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}"),
                    "403" => assert_eq!(status, StatusCode::FORBIDDEN, "{what}"),
                    _ => {
                        assert!(status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN, "{what}");
                        assert!(!status.is_server_error() || status == StatusCode::SERVICE_UNAVAILABLE, "{what}");
                    }
                }
                if status.is_client_error() || status.is_server_error() {
                    let error: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{what}: not JSON"));
                    assert!(error["error"].as_str().is_some_and(|e| !e.is_empty()), "{what}");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, ROUTES.len() * 6 * 2);
    // The site roles in order, the tenant only where the table lets it in.
    let (status, _) = site.call(Method::GET, "/v1/plan", tokens[3].1.as_deref(), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a tenant reads no site-wide document");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_reads_and_approves_only_its_own_hosts() {
    let site = site().await;
    let tenant = token(&site.store, "tenant-1", Role::Tenant, &["i-1"]).await;
    let (own, body) = site.call(Method::GET, "/v1/managed-hosts/m-1", Some(&tenant), None).await;
    assert_eq!(own, StatusCode::OK, "{body}");
    let doc: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["machine"]["machine_id"], "m-1", "{body}");
    for path in ["/v1/managed-hosts/m-2", "/v1/managed-hosts/m-3", "/v1/managed-hosts/unknown"] {
        let (status, body) = site.call(Method::GET, path, Some(&tenant), None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
        assert!(!body.contains("i-2"), "a refusal does not tell another tenant's instance: {body}");
    }
    let approve = json!({"apply_updates_on_reboot": true});
    let (status, body) = site.call(Method::POST, "/v1/instances/i-2/reboot", Some(&tenant), Some(approve)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    // Nothing was recorded for the other tenant's host.
    assert!(site.store.audit_list(50).await.unwrap().iter().all(|e| e.target != "m-2" && e.target != "i-2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_created_named_in_the_audit_and_revoked_through_the_api() {
    let site = site().await;
    let admin = token(&site.store, "root-admin", Role::Admin, &[]).await;
    let (status, body) = site.call(Method::GET, "/v1/whoami", Some(&admin), None).await;
    assert_eq!(status, StatusCode::OK);
    let me: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(me["role"], "admin");
    let actor = me["actor"].as_str().unwrap().to_string();

    let create = json!({"name": "alice", "role": "operator", "expires": "90d"});
    let (status, body) = site.call(Method::POST, "/v1/tokens", Some(&admin), Some(create)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created: Value = serde_json::from_str(&body).unwrap();
    let alice = created["secret"].as_str().unwrap().to_string();
    let alice_id = created["token"]["id"].as_str().unwrap().to_string();
    assert!(created["token"]["expires_at"].as_str().is_some());
    let entry = &site.store.audit_list(1).await.unwrap()[0];
    assert_eq!((entry.action.as_str(), entry.actor.as_str()), ("token_create", actor.as_str()));

    // Alice is an operator: she reads, and may not make tokens.
    assert_eq!(site.call(Method::GET, "/v1/audit", Some(&alice), None).await.0, StatusCode::OK);
    let (status, body) =
        site.call(Method::POST, "/v1/tokens", Some(&alice), Some(json!({"name": "eve", "role": "admin"}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("needs admin"), "{body}");

    // Bad input is refused and stores nothing.
    let before = site.store.token_list().await.unwrap().len();
    for bad in [
        json!({"name": "x", "role": "root"}),
        json!({"name": "x", "role": "tenant"}),
        json!({"name": "x y", "role": "viewer"}),
        json!({"name": "x", "role": "viewer", "expires": "0d"}),
    ] {
        let (status, body) = site.call(Method::POST, "/v1/tokens", Some(&admin), Some(bad.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    assert_eq!(site.store.token_list().await.unwrap().len(), before);
    // A body that is no token request at all is refused with a JSON error too.
    for bad in [json!({"name": "x"}), json!({"name": "x", "role": "viewer", "owner": "me"}), json!([1])] {
        let (status, body) = site.call(Method::POST, "/v1/tokens", Some(&admin), Some(bad.clone())).await;
        assert!(status.is_client_error(), "{bad}: {status}");
        let error: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{bad}: not JSON: {body}"));
        assert!(error["error"].as_str().is_some(), "{body}");
    }

    let (status, body) = site.call(Method::DELETE, &format!("/v1/tokens/{alice_id}"), Some(&admin), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = site.call(Method::GET, "/v1/audit", Some(&alice), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("revoked"), "{body}");
    assert_eq!(
        site.call(Method::DELETE, &format!("/v1/tokens/{alice_id}"), Some(&admin), None).await.0,
        StatusCode::CONFLICT
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_lists_exactly_the_table_with_each_routes_role() {
    let site = site().await;
    let (status, body) = site.call(Method::GET, "/v1/openapi.json", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let doc: Value = serde_json::from_str(&body).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "{}", doc["openapi"]);
    let mut documented = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            documented.push((method.to_uppercase(), path.clone()));
            let route = ROUTES.iter().find(|r| r.path == path && r.method.as_str().eq_ignore_ascii_case(method));
            let route = route.unwrap_or_else(|| panic!("{method} {path} is documented but not in the route table"));
            assert_eq!(op["x-hostfw-role"], route.access.describe(), "{method} {path}");
            if route.access != Access::Public {
                assert!(op["security"].is_array(), "{method} {path} has no security");
                assert!(op["responses"]["401"].is_object() && op["responses"]["403"].is_object(), "{method} {path}");
            }
        }
    }
    for route in ROUTES.iter().filter(|r| r.access != Access::Public) {
        assert!(
            documented.contains(&(route.method.to_string(), route.path.to_string())),
            "{} {} is in the table but not documented",
            route.method,
            route.path
        );
    }
}
