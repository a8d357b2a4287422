//! The API on a real listener over a real site database (SQLite): every route of the table walked
//! with every role (no token, a wrong one, viewer, operator, admin, tenant) and checked allowed or
//! refused as its `Access` says; a tenant cannot read or approve another tenant's host; the
//! OpenAPI document lists exactly the table's routes with their roles; the audit trail names the
//! authenticated caller; revoked tokens authenticate nothing.

use std::sync::Arc;

use hostfw_api::access::{Access, Decision};
use hostfw_api::routes::ROUTES;
use hostfw_api::ApiServer;
use hostfw_fixtures::SiteToml;
use hostfw_model::{HostState, Role};
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
    site_on("sqlite://site.db").await
}

/// A fresh database on the test PostgreSQL server (`HOSTFW_TEST_PG_URL`, default
/// `postgres://postgres@127.0.0.1:5432/test`), or `None` when it does not answer (a failure
/// instead when `HOSTFW_REQUIRE_PG=1`).
async fn pg_database() -> Option<String> {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let admin = std::env::var("HOSTFW_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let connect = tokio::time::timeout(std::time::Duration::from_secs(5), sqlx::AnyConnection::connect(&admin)).await;
    let mut conn = match connect {
        Ok(Ok(conn)) => conn,
        other => {
            assert!(std::env::var("HOSTFW_REQUIRE_PG").map_or(true, |v| v != "1"), "PostgreSQL {admin}: {other:?}");
            eprintln!("skipped on PostgreSQL: {admin} does not answer");
            return None;
        }
    };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let db = format!("hostfw_api_{}_{nanos:x}_{}", std::process::id(), rand_suffix());
    conn.execute(format!("CREATE DATABASE {db}").as_str()).await.unwrap();
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b).to_string();
    Some(format!("{base}/{db}"))
}

/// Drop a database [`pg_database`] made (its connections too).
async fn drop_database(url: &str) {
    use sqlx::{Connection, Executor};
    let (base, db) = url.rsplit_once('/').unwrap();
    let mut conn = sqlx::AnyConnection::connect(&format!("{base}/test")).await.unwrap();
    conn.execute(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)").as_str()).await.unwrap();
}

async fn site_on(database_url: &str) -> Site {
    let dir = tempfile::tempdir().unwrap();
    let (_, config) = SiteToml::named("api-test")
        .database_url(database_url)
        .set("api", "listen", "127.0.0.1:0")
        .temporal_port(1)
        .write(dir.path())
        .unwrap();
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
        "/v1/budgets/pause" => json!({"model": "nope", "component": "bmc", "version": "1", "reason": "matrix"}),
        "/v1/freezes" => json!({"reason": "matrix", "selector": "label=rack=nowhere"}),
        "/v1/freezes/lift" => json!({"selector": "label=rack=nowhere"}),
        "/v1/machines/{id}/labels" => json!({"set": ["rack=r1"]}),
        "/v1/machines/{id}/auto-update" => json!({"policy": "clear"}),
        "/v1/machines/auto-update" => json!({"selector": "label=rack=nowhere", "policy": "clear", "dry_run": true}),
        "/v1/machines/{id}/maintenance" => json!({"direction": "exit"}),
        "/v1/reprovision-requests" => json!({"machine_id": "m-3"}),
        "/v1/reprovision-requests/all-drifted" => json!({"bypass_ceiling": true, "dry_run": true, "explore": false}),
        "/v1/managed-hosts/start-updates" => json!({"machines": ["m-3"], "cancel": true}),
        "/v1/site-explorer/explore" => json!({"machine_id": "m-3", "concurrency": 1}),
        "/v1/site-explorer/re-explore" => json!({"bmc_ip": "127.0.0.12"}),
        "/v1/machines" => {
            json!({"machine_id": format!("new-{}", rand_suffix()), "bmc": format!("10.9.0.{}", rand_suffix() % 250)})
        }
        "/v1/machines/import" => {
            json!({"file": "fleet.toml", "fleet": "[[host]]\nid = \"imp-1\"\nvendor = \"Dell Inc.\"\nmodel = \"PowerEdge R750\"\nbmc_address = \"127.0.0.99:443\"\n"})
        }
        "/v1/machines/rotate-key" => json!({"file": "new.key", "key": "not a key"}),
        "/v1/firmware-config" => json!({"file": "doc.toml", "document": "", "dry_run": true}),
        "/v1/firmware-config/diff" => json!({"file": "doc.toml", "document": ""}),
        "/v1/firmware-config/unset" => json!({"dry_run": true}),
        "/v1/firmware-config/rollback" => json!({"to": 9}),
        "/v1/firmware-config/approve" => json!({"revision": 9}),
        "/v1/firmware-config/reject" => json!({"revision": 9}),
        "/v1/config/reload" => json!({"wait": 0}),
        "/v1/aborts" => json!({"machine_id": "m-3", "reason": "matrix"}),
        // A blank reason is refused (422) after the role check: no machine leaves the matrix's site.
        "/v1/machines/{id}/remove" => json!({"reason": " "}),
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

/// A 2xx JSON answer matches the schema the OpenAPI document declares for its route and status
/// (true when it was JSON and checked).
fn matches_declared_schema(method: &str, path: &str, status: StatusCode, body: &str) -> bool {
    let Ok(answer) = serde_json::from_str::<Value>(body) else { return false };
    if path == "/v1/openapi.json" {
        return false; // the document itself
    }
    let shown: String = body.chars().take(2000).collect();
    let doc = hostfw_api::openapi::document();
    let declared = &doc["paths"][path][method.to_lowercase()]["responses"][status.as_str()]["content"]
        ["application/json"]["schema"];
    assert!(declared.is_object(), "{method} {path} answered {status} JSON its document does not declare: {shown}");
    // The declared schema with the document's components beside it, so its `$ref`s resolve.
    let schema = json!({"components": doc["components"], "allOf": [declared]});
    let validator = jsonschema::draft202012::new(&schema).expect("the declared schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(&answer).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{method} {path} {status}: the answer does not match its schema: {errors:?}\n{shown}");
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_with_every_role_is_allowed_or_refused_as_the_table_says() {
    walk_every_route(site().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_with_every_role_on_postgres() {
    if let Some(url) = pg_database().await {
        walk_every_route(site_on(&url).await).await;
        drop_database(&url).await;
    }
}

async fn walk_every_route(site: Site) {
    let mut tokens = [
        ("viewer", Some(token(&site.store, "v", Role::Viewer, &[]).await), Some(Role::Viewer)),
        ("operator", Some(token(&site.store, "o", Role::Operator, &[]).await), Some(Role::Operator)),
        ("admin", Some(token(&site.store, "a", Role::Admin, &[]).await), Some(Role::Admin)),
        ("tenant", Some(token(&site.store, "ten", Role::Tenant, &["i-1"]).await), Some(Role::Tenant)),
        ("no token", None, None),
        ("wrong token", Some("hfw_tdeadbeef00_0000".to_string()), None),
    ];
    let mut checked = 0;
    let mut answered = 0;
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
                if status.is_success() {
                    answered += usize::from(matches_declared_schema(route.method.as_str(), route.path, status, &body));
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, ROUTES.len() * 6 * 2);
    // Without Temporal many changes answer 503; the rest (reads, brakes, machines, tokens, the
    // catalog's dry runs) were checked against the schemas the document declares.
    assert!(answered >= 100, "only {answered} JSON answers were checked against their schemas");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_machine_is_a_404_naming_it_and_nothing_is_changed() {
    let site = site().await;
    let operator = token(&site.store, "o", Role::Operator, &[]).await;
    let audit_before = site.store.audit_list(100).await.unwrap().len();
    let calls: &[(Method, &str, Option<Value>)] = &[
        (Method::POST, "/v1/machines/ghost/labels", Some(json!({"set": ["rack=r1"]}))),
        (Method::POST, "/v1/machines/ghost/auto-update", Some(json!({"policy": "enable"}))),
        (Method::POST, "/v1/machines/ghost/maintenance", Some(json!({"direction": "enter"}))),
        (Method::POST, "/v1/reprovision-requests", Some(json!({"machine_id": "ghost"}))),
        (Method::DELETE, "/v1/reprovision-requests/ghost", None),
        (Method::POST, "/v1/reprovision-requests/ghost/manual-upgrade-complete", Some(json!({}))),
        (Method::POST, "/v1/managed-hosts/ghost/reset", Some(json!({}))),
        (Method::POST, "/v1/managed-hosts/start-updates", Some(json!({"machines": ["m-1", "ghost"]}))),
        (Method::POST, "/v1/site-explorer/explore", Some(json!({"machine_id": "ghost"}))),
    ];
    for (method, path, body) in calls {
        let (status, text) = site.call(method.clone(), path, Some(&operator), body.clone()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {text}");
        let error: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: not JSON: {text}"));
        assert!(error["error"].as_str().unwrap().contains("ghost"), "{path}: {text}");
    }
    assert_eq!(site.store.audit_list(100).await.unwrap().len(), audit_before, "nothing was audited");
    assert!(site.store.machine_get("m-1").await.unwrap().unwrap().window.is_none(), "no window was set");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_are_refused_with_json_naming_the_field() {
    let site = site().await;
    let admin = token(&site.store, "a", Role::Admin, &[]).await;
    let cases: &[(&str, Value, &str)] = &[
        ("/v1/machines/m-1/auto-update", json!({"policy": "sometimes"}), "policy"),
        ("/v1/machines/m-1/maintenance", json!({"direction": "sideways"}), "direction"),
        ("/v1/machines/m-1/labels", json!({"set": "rack=r1"}), "set"),
        ("/v1/freezes", json!({"selector": "label=a=b"}), "reason"),
        ("/v1/freezes", json!({"reason": "x", "drain": "yes"}), "drain"),
        ("/v1/site-explorer/explore", json!({"concurrency": 0}), "concurrency"),
        ("/v1/machines/rotate-key", json!({"file": "k", "key": "c2hvcnQ="}), "key"),
        ("/v1/machines", json!({"machine_id": "n", "bmc": "10.0.0.9", "bmc_username": "root"}), "bmc_password"),
        ("/v1/firmware-config/rollback", json!({"to": 0}), "to"),
        ("/v1/firmware-config/approve", json!({"revision": -1}), "revision"),
        ("/v1/firmware-config", json!({"file": "f", "document": "x", "yes": true, "force": true}), "force"),
        ("/v1/reprovision-requests/all-drifted", json!({"bypass_ceiling": false}), "bypass_ceiling"),
        ("/v1/managed-hosts/start-updates", json!({"machines": []}), "machines"),
        ("/v1/config/reload", json!({"wait": 100000}), "wait"),
    ];
    for (path, body, field) in cases {
        let (status, text) = site.call(Method::POST, path, Some(&admin), Some(body.clone())).await;
        assert!(
            matches!(status, StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY),
            "{path} {body}: {status} {text}"
        );
        let error: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: not JSON: {text}"));
        assert!(error["error"].as_str().unwrap().contains(field), "{path} {body}: the error names {field}: {text}");
    }
    // A query parameter that is missing is named too.
    let (status, text) = site.call(Method::GET, "/v1/site-explorer/report", Some(&admin), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("bmc"), "{text}");
    // A body over the limit is a JSON 413, and nothing is stored.
    let huge = json!({"file": "big.toml", "document": "#".repeat(hostfw_api::routes::MAX_BODY_BYTES + 1)});
    let (status, text) = site.call(Method::POST, "/v1/firmware-config", Some(&admin), Some(huge)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{text}");
    assert!(serde_json::from_str::<Value>(&text).is_ok_and(|e| e["error"].is_string()), "{text}");
    assert!(site.store.firmware_config_latest().await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_through_the_api_act_and_are_audited_under_the_token() {
    changes_act(site().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_through_the_api_on_postgres() {
    if let Some(url) = pg_database().await {
        changes_act(site_on(&url).await).await;
        drop_database(&url).await;
    }
}

async fn changes_act(site: Site) {
    let operator = token(&site.store, "olga", Role::Operator, &[]).await;
    let admin = token(&site.store, "root", Role::Admin, &[]).await;
    let ok = |(status, text): (StatusCode, String)| {
        assert_eq!(status, StatusCode::OK, "{text}");
        serde_json::from_str::<Value>(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    };
    let doc = ok(site
        .call(
            Method::POST,
            "/v1/freezes",
            Some(&operator),
            Some(json!({"reason": "change window", "selector": "label=rack=r9"})),
        )
        .await);
    assert_eq!(doc["freeze"]["scope"], "label=rack=r9", "{doc}");
    let listed = ok(site.call(Method::GET, "/v1/freezes", Some(&operator), None).await);
    assert_eq!(listed["freezes"].as_array().map(Vec::len), Some(1), "{listed}");
    let (status, table) = {
        let resp = site
            .http
            .get(format!("{}/v1/freezes", site.api.url()))
            .bearer_auth(&operator)
            .header("Accept", "text/plain")
            .send()
            .await
            .unwrap();
        (resp.status(), resp.text().await.unwrap())
    };
    assert_eq!(status, StatusCode::OK);
    assert!(table.starts_with("ID") && table.contains("change window"), "the table on text/plain: {table}");
    ok(site.call(Method::POST, "/v1/freezes/lift", Some(&operator), Some(json!({"selector": "label=rack=r9"}))).await);
    assert!(site.store.freeze_list().await.unwrap().is_empty());

    ok(site.call(Method::POST, "/v1/machines/m-3/labels", Some(&operator), Some(json!({"set": ["rack=r7"]}))).await);
    let m3 = site.store.machine_get("m-3").await.unwrap().unwrap();
    assert_eq!(m3.labels.get("rack").map(String::as_str), Some("r7"));
    ok(site
        .call(
            Method::POST,
            "/v1/machines/m-3/maintenance",
            Some(&operator),
            Some(json!({"direction": "enter", "reason": "fan"})),
        )
        .await);
    assert_eq!(site.store.machine_get("m-3").await.unwrap().unwrap().state, HostState::Maintenance);

    // A fleet text naming a profile folder is refused: the API reads no path.
    let profiled = "[[host]]\nid = \"imp-2\"\nprofile = \"/etc\"\nbmc_address = \"127.0.0.98:443\"\n";
    let (status, text) = site
        .call(Method::POST, "/v1/machines/import", Some(&admin), Some(json!({"file": "p.toml", "fleet": profiled})))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{text}");
    assert!(text.contains("profile") && site.store.machine_get("imp-2").await.unwrap().is_none(), "{text}");

    let audit = site.store.audit_list(100).await.unwrap();
    for action in ["freeze", "machine label", "machine maintenance --enter"] {
        let entry =
            audit.iter().find(|a| a.action.starts_with(action)).unwrap_or_else(|| panic!("{action}: {audit:?}"));
        assert!(entry.actor.starts_with("olga (token t") || entry.actor.starts_with("root (token t"), "{entry:?}");
    }
}

/// Every answer says which version of the JSON vocabulary it speaks, refusals and 404s included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_names_its_schema_version() {
    let site = site().await;
    let viewer = token(&site.store, "v", Role::Viewer, &[]).await;
    for (path, token) in [("/v1/machines", Some(viewer.as_str())), ("/v1/machines", None), ("/v1/nowhere", None)] {
        let mut req = site.http.get(format!("{}{path}", site.api.url()));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        let version =
            resp.headers().get(hostfw_api::routes::SCHEMA_VERSION_HEADER).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(
            version,
            Some(hostfw_starter::json_contract::SCHEMA_VERSION.to_string()),
            "{path} ({})",
            resp.status()
        );
    }
}
