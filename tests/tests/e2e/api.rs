//! End-to-end: the hostfw API served by a real worker (child process) on a real Temporal dev
//! server and bmc-sim, driven by the `hostfw` CLI with `-a URL --token-file F`.
//!
//! The site's first admin token comes from `hostfw admin bootstrap` on the site (refused the
//! second time); the admin makes an operator token and a tenant token for inst-1 through the API;
//! the operator reads `plan` through the API (the same text as on the site); the tenant of inst-1
//! approves its host's update (the approval names the tenant's token) and may neither approve
//! nor read inst-2's host; a revoked token authenticates nothing.

use std::time::Duration;

use hostfw_tests::fixtures::{bios_fleet, r760_bios};
use hostfw_tests::{free_port, Catalog, ChildWorker, Site, SiteSpec, SiteToml};
use hostfw_workflows::HostOutcome;

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_and_tenants_work_through_the_api_with_their_own_tokens() {
    let api = format!("127.0.0.1:{}", free_port());
    let url = format!("http://{api}");
    let fleet = bios_fleet(&[("a1", "Dell", "PowerEdge R760"), ("a2", "Dell", "PowerEdge R760")]);
    let config = SiteToml::default()
        .catalog(&Catalog::of([r760_bios()]))
        .manager(10, "1h")
        .site_workflows(true)
        .explorer_interval("1h")
        .firmware_global("autoupdate", false)
        .firmware_global("instance_updates_manual_tagging", false)
        .set("api", "listen", api.as_str());
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config,
        images: IMAGES,
        assigned: &[("a1", "inst-1"), ("a2", "inst-2")],
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let _worker = ChildWorker::start(&site).await;
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).display().to_string();

    // The first admin token, on the site; a second bootstrap is refused.
    let out = site.cli(&["admin", "bootstrap", "--out", &file("admin.token")]).await.unwrap();
    assert!(out.contains("admin token"), "{out}");
    let again = site.cli(&["admin", "bootstrap", "--out", &file("again.token")]).await.unwrap_err().to_string();
    assert!(again.contains("already has 1 live admin token"), "{again}");
    assert!(!dir.path().join("again.token").exists());

    let as_token = |token_file: String| {
        let url = url.clone();
        move |args: &[&str]| {
            let mut argv = vec!["-a".to_string(), url.clone(), "--token-file".to_string(), token_file.clone()];
            argv.extend(args.iter().map(|s| s.to_string()));
            argv
        }
    };
    let admin = as_token(file("admin.token"));
    let cli = |argv: Vec<String>| {
        let site = &site;
        async move { site.cli(&argv.iter().map(String::as_str).collect::<Vec<_>>()).await }
    };

    let who = cli(admin(&["whoami"])).await.unwrap();
    assert!(who.contains("role admin"), "{who}");
    let operator =
        cli(admin(&["token", "create", "--name", "olga", "--role", "operator", "--expires", "1d"])).await.unwrap();
    std::fs::write(dir.path().join("olga.token"), hostfw_tests::fixtures::token_secret(&operator)).unwrap();
    let tenant = cli(admin(&["token", "create", "--name", "tenant-1", "--role", "tenant", "--instance", "inst-1"]))
        .await
        .unwrap();
    std::fs::write(dir.path().join("tenant.token"), hostfw_tests::fixtures::token_secret(&tenant)).unwrap();
    let olga = as_token(file("olga.token"));
    let tenant1 = as_token(file("tenant.token"));

    // The operator drives the rollout through the API; an operator makes no tokens.
    site.cli(&["site-explorer", "explore"]).await.unwrap();
    for id in ["a1", "a2"] {
        site.cli(&["machine", "auto-update", "--machine", id, "--enable"]).await.unwrap();
        site.wait_substate(id, "WaitingForApproval", Duration::from_secs(60)).await;
    }
    let remote_plan = cli(olga(&["plan"])).await.unwrap();
    assert!(remote_plan.contains("ceiling:") && remote_plan.contains("in flight: 2"), "{remote_plan}");
    let refused = cli(olga(&["token", "list"])).await.unwrap_err().to_string();
    assert!(refused.contains("HTTP 403") && refused.contains("needs admin"), "{refused}");

    // The tenant of inst-1 reads its host and approves its update; inst-2's host is not its own.
    let shown = cli(tenant1(&["managed-host", "show", "a1"])).await.unwrap();
    assert!(shown.contains("a1"), "{shown}");
    let other = cli(tenant1(&["managed-host", "show", "a2"])).await.unwrap_err().to_string();
    assert!(other.contains("HTTP 403"), "{other}");
    let other = cli(tenant1(&["instance", "reboot", "--instance", "inst-2", "--apply-updates-on-reboot"])).await;
    assert!(other.unwrap_err().to_string().contains("HTTP 403"));
    let plan = cli(tenant1(&["plan"])).await.unwrap_err().to_string();
    assert!(plan.contains("HTTP 403"), "a tenant reads nothing site-wide: {plan}");
    cli(tenant1(&["instance", "reboot", "--instance", "inst-1", "--apply-updates-on-reboot"])).await.unwrap();
    let outcome = site.host_result("a1").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let approvals = site.store.approvals_of("a1").await.unwrap();
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert!(approvals[0].approved_by.starts_with("tenant-1 (token t"), "{}", approvals[0].approved_by);
    assert!(site.store.approvals_of("a2").await.unwrap().is_empty(), "inst-2 was never approved");
    assert_eq!(site.store.request_get("a2").await.unwrap().map(|r| r.user_approval), Some(false));

    // Revoked: nothing authenticates.
    let tokens = site.store.token_list().await.unwrap();
    let olga_id = tokens.iter().find(|t| t.name == "olga").unwrap().id.clone();
    cli(admin(&["token", "revoke", &olga_id])).await.unwrap();
    let revoked = cli(olga(&["plan"])).await.unwrap_err().to_string();
    assert!(revoked.contains("HTTP 401") && revoked.contains("revoked"), "{revoked}");
    let audit = site.store.audit_list(100).await.unwrap();
    let revoke = audit.iter().find(|a| a.action == "token_revoke").unwrap();
    assert!(revoke.actor.starts_with("admin (token t"), "{}", revoke.actor);
}
