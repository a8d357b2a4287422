//! End-to-end: schemathesis (PyPI; `scripts/tools.sh` installs it into `.tools/schemathesis`)
//! fuzzes the hostfw API of a real worker (child process, real Temporal dev server, bmc-sim) from
//! its own OpenAPI document, with an admin token: no answer is a 5xx, every status is one the
//! document declares, every JSON body matches its declared schema, every content type is
//! declared, and every protected route refuses a request without the token (`ignored_auth`).
//! Seeded, so a failure replays; schemathesis prints the `curl` line of each failing case.

use std::path::Path;

use hostfw_tests::fixtures::{bios_fleet, r760_bios};
use hostfw_tests::{free_port, Catalog, ChildWorker, Site, SiteSpec, SiteToml};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_server_error_and_no_undeclared_answer_on_a_real_worker() {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/schemathesis/bin/schemathesis");
    if !bin.exists() {
        assert!(
            std::env::var_os("HOSTFW_CONFORMANCE_REQUIRED").is_none(),
            "HOSTFW_CONFORMANCE_REQUIRED is set but {} is missing (scripts/tools.sh installs it)",
            bin.display()
        );
        eprintln!("skipped: {} is missing (run scripts/tools.sh)", bin.display());
        return;
    }
    let api = format!("127.0.0.1:{}", free_port());
    let fleet = bios_fleet(&[("f1", "Dell", "PowerEdge R760"), ("f2", "Dell", "PowerEdge R760")]);
    let config = SiteToml::default()
        .catalog(&Catalog::of([r760_bios()]))
        .manager(10, "1h")
        .site_workflows(true)
        .explorer_interval("1h")
        .firmware_global("autoupdate", false)
        .set("api", "listen", api.as_str());
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config,
        images: &[("dell/bios.bin", "^BIOS$", "3.0")],
        assigned: &[("f2", "inst-2")],
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let _worker = ChildWorker::start(&site).await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("admin.token");
    site.cli(&["admin", "bootstrap", "--out", &token_file.display().to_string()]).await.unwrap();
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_string();
    // Something in every typed read: f1 is updated (its target is on record for `budgets`), f2's
    // request waits for its tenant (its approval-needed event is a notification), next to the
    // machines and the audit trail.
    site.cli(&["host", "reprovision", "set", "--id", "f1"]).await.unwrap();
    site.wait_for("f1 to be updated", std::time::Duration::from_secs(120), || async {
        site.store.request_get("f1").await.ok()?.is_none().then_some(())
    })
    .await;
    site.cli(&["host", "reprovision", "set", "--id", "f2"]).await.unwrap();
    // The one-host reads ask for real hosts, so their documents are checked against their
    // schemas (a made-up id only ever gets the 404): f1 with its finished workflow, f2 with its
    // waiting request.
    std::fs::write(
        dir.path().join("schemathesis.toml"),
        r#"
[[operations]]
include-path = "/v1/managed-hosts/{id}"
include-method = "GET"
parameters = { "path.id" = "f1" }

[[operations]]
include-path = "/v1/machines/{id}"
include-method = "GET"
parameters = { "path.id" = "f2" }
"#,
    )
    .unwrap();

    let output = tokio::process::Command::new(&bin)
        .current_dir(dir.path())
        .args([
            "run",
            &format!("http://{api}/v1/openapi.json"),
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,ignored_auth",
            "--header",
            &format!("Authorization: Bearer {token}"),
            "--phases",
            "examples,coverage,fuzzing",
            "--max-examples",
            "10",
            "--seed",
            "20261204",
            "--workers",
            "1",
            "--no-color",
            // Revoking a token by id: the fuzzer finds the admin's own id (whoami, token list)
            // and revokes the token it runs with, after which every answer is a 401.
            "--exclude-path",
            "/v1/tokens/{id}",
        ])
        .output()
        .await
        .unwrap();
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    eprintln!("{printed}");
    if !output.status.success() {
        // What the fuzzer changed on the site, oldest first: a failure often follows from it.
        for a in site.store.audit_list(500).await.unwrap().iter().rev() {
            eprintln!("audit: {} | {} | {} | {}", a.actor, a.action, a.target, a.detail);
        }
    }
    assert!(output.status.success(), "schemathesis found answers the document does not allow (above)");
    assert!(printed.contains("passed"), "schemathesis tested no operation (above)");
    site.shutdown().await;
}
