//! End-to-end: every CLI verb the hostfw API serves prints through `hostfw -a URL` what it prints
//! on the site, on a real Temporal dev server, a real worker (child process, serving the API) and
//! bmc-sim. Each command line runs on the site (`--config`) and through the API with an admin
//! token, on the same site state, and the two outputs (errors included) are compared.
//!
//! Documented differences (docs/cli-json.md "Through the API") are normalised before comparing:
//! the audit actor (`cli:<OS account>` on the site, `admin (token t…)` through the API), times, and for
//! changes that cannot run twice on one state, the numbers (freeze ids, versions) and the host
//! the twin command acted on (a2 on the site, a3 through the API: the same state).
//!
//! Besides: an unconfirmed change made by hand is a 422 with the preview and the question and
//! stores nothing; `all-drifted --yes`, a catalog change and `rotate-key` (the key read by the
//! CLI) act through the API; the audit trail names the token.

use hostfw_tests::fixtures::{bios_fleet, r760_bios};
use hostfw_tests::{free_port, Catalog, ChildWorker, Site, SiteSpec, SiteToml};

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];

/// What a command printed, then its error (without the API's `[HTTP n]` tag).
fn outcome((result, printed): (anyhow::Result<()>, String)) -> String {
    match result {
        Ok(()) => printed,
        Err(e) => {
            let e = format!("{e:#}");
            let e = match e.rfind(" [HTTP ") {
                Some(i) if e.ends_with(']') => e[..i].to_string(),
                _ => e,
            };
            format!("{printed}ERROR: {e}")
        }
    }
}

/// `text` with RFC 3339 UTC times as `TIME`, and (with `digits`) every run of digits as `N`.
fn normalise(text: &str, digits: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let is_time = |at: usize| {
        let pattern = "dddd-dd-ddTdd:dd:dd";
        at + pattern.len() <= chars.len()
            && pattern.chars().zip(&chars[at..]).all(|(p, c)| if p == 'd' { c.is_ascii_digit() } else { p == *c })
    };
    while i < chars.len() {
        if is_time(i) {
            out.push_str("TIME");
            i += 19;
            while i < chars.len() && (chars[i].is_ascii_digit() || matches!(chars[i], '.' | 'Z')) {
                i += 1;
            }
        } else if digits && chars[i].is_ascii_digit() {
            out.push('N');
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

struct Parity<'a> {
    site: &'a Site,
    url: String,
    token_file: String,
    /// The actors, as the audit trail names them.
    local_actor: String,
    remote_actor: String,
}

impl Parity<'_> {
    async fn local(&self, args: &[&str]) -> String {
        outcome(Box::pin(self.site.cli_full(args)).await).replace(&self.local_actor, "ACTOR")
    }

    async fn remote(&self, args: &[&str]) -> String {
        let mut argv = vec!["-a", self.url.as_str(), "--token-file", self.token_file.as_str()];
        argv.extend(args);
        outcome(Box::pin(self.site.cli_full(&argv)).await).replace(&self.remote_actor, "ACTOR")
    }

    /// The same command on the site and through the API prints the same.
    async fn same(&self, args: &[&str]) -> String {
        let local = self.local(args).await;
        let remote = self.remote(args).await;
        assert_eq!(normalise(&remote, false), normalise(&local, false), "hostfw {args:?}");
        local
    }

    /// The same, up to numbers (ids, versions, durations).
    async fn same_shape(&self, args: &[&str]) -> String {
        let local = self.local(args).await;
        let remote = self.remote(args).await;
        assert_eq!(normalise(&remote, true), normalise(&local, true), "hostfw {args:?}");
        local
    }

    /// `local_args` on the site and `remote_args` through the API (the twin command on a twin
    /// host) print the same once `twin` is read as `host`.
    async fn twins(&self, local_args: &[&str], remote_args: &[&str], host: &str, twin: &str) -> String {
        let local = self.local(local_args).await;
        let remote = self.remote(remote_args).await.replace(twin, host);
        assert_eq!(normalise(&remote, true), normalise(&local, true), "hostfw {local_args:?} / {remote_args:?}");
        local
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_served_verb_prints_through_the_api_what_it_prints_on_the_site() {
    let api = format!("127.0.0.1:{}", free_port());
    let fleet = bios_fleet(&[
        ("a1", "Dell", "PowerEdge R760"),
        ("a2", "Dell", "PowerEdge R760"),
        ("a3", "Dell", "PowerEdge R760"),
    ]);
    let config = SiteToml::default()
        .catalog(&Catalog::of([r760_bios()]))
        .manager(10, "1h")
        .site_workflows(true)
        .explorer_interval("1h")
        .firmware_global("autoupdate", false)
        .set("api", "listen", api.as_str());
    let site =
        Site::start(SiteSpec { fleet: &fleet, config, images: IMAGES, external_worker: true, ..SiteSpec::default() })
            .await
            .unwrap();
    let _worker = ChildWorker::start(&site).await;
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).display().to_string();
    site.cli(&["admin", "bootstrap", "--out", &file("admin.token")]).await.unwrap();
    let url = format!("http://{api}");
    let who =
        site.cli(&["-a", &url, "--token-file", &file("admin.token"), "--format", "json", "whoami"]).await.unwrap();
    let who: serde_json::Value = serde_json::from_str(&who).unwrap();
    let p = Parity {
        site: &site,
        url,
        token_file: file("admin.token"),
        local_actor: format!("cli:{}", hostfw_starter::context::os_account()),
        remote_actor: who["actor"].as_str().unwrap().to_string(),
    };

    // Exploration first (the reads below show its reports).
    let explored = p.same_shape(&["--format", "json", "site-explorer", "explore"]).await;
    assert!(explored.contains("\"read\": 3"), "{explored}");
    let bmc = site.store.machine_get("a1").await.unwrap().unwrap().bmc_address.to_string();

    // Reads, in both formats.
    for format in ["table", "json"] {
        for args in [
            &["freeze", "list"][..],
            &["site-explorer", "get-report", "managed-host", &bmc],
            &["firmware-config", "show"],
            &["firmware-config", "pending"],
            &["firmware-config", "history"],
            &["doctor"],
            &["plan"],
        ] {
            let argv: Vec<&str> = ["--format", format].iter().copied().chain(args.iter().copied()).collect();
            p.same(&argv).await;
        }
    }
    let watched = p.same_shape(&["watch", "--timeout-secs", "0"]).await;
    assert!(
        watched.contains("ERROR: gave up after N s: N of N hosts are not compliant") || watched.contains("gave up"),
        "{watched}"
    );

    // The catalog: a document read by the CLI and sent; a change without --yes shows its preview
    // and changes nothing, on the site and through the API alike.
    let site_toml: toml::Table = toml::from_str(&std::fs::read_to_string(&site.config_path).unwrap()).unwrap();
    let mut doc = toml::Table::new();
    doc.insert("host_models".into(), site_toml["host_models"].clone());
    std::fs::write(file("runtime.toml"), toml::to_string(&doc).unwrap()).unwrap();
    let runtime = file("runtime.toml");
    p.same(&["firmware-config", "diff", "--file", &runtime]).await;
    p.same(&["firmware-config", "set", "--dry-run", "--file", &runtime]).await;
    let unconfirmed = p.same(&["firmware-config", "set", "--file", &runtime, "-m", "CHG-1"]).await;
    assert!(unconfirmed.contains("Not confirmed: pass --yes"), "{unconfirmed}");
    assert!(site.store.firmware_config_latest().await.unwrap().is_none(), "nothing was stored");
    // The same request made by hand: a 422 carrying the preview and the question, nothing stored.
    let token = std::fs::read_to_string(file("admin.token")).unwrap();
    let answer = reqwest::Client::new()
        .post(format!("{}/v1/firmware-config", p.url))
        .bearer_auth(token.trim())
        .header("Accept", "text/plain")
        .json(&serde_json::json!({"file": runtime, "document": std::fs::read_to_string(&runtime).unwrap()}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 422);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["confirm"], "store this catalog as firmware config version 1?", "{body}");
    assert!(body["output"].as_str().unwrap().contains("the next pass would start 0 host(s)"), "{body}");
    assert!(site.store.firmware_config_latest().await.unwrap().is_none(), "nothing was stored");
    p.same(&["firmware-config", "unset", "--dry-run"]).await;
    for args in [
        &["firmware-config", "rollback", "--to", "7", "--yes"][..],
        &["firmware-config", "approve", "--revision", "7", "--yes"],
        &["firmware-config", "reject", "--revision", "7"],
    ] {
        let refused = p.same(args).await;
        assert!(refused.contains("ERROR:"), "{args:?}: {refused}");
    }

    // all-drifted: the dry run, and the unconfirmed request that starts nothing.
    let dry =
        p.same(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--dry-run", "--explore", "false"]).await;
    assert!(dry.contains("dry run: would request 3 hosts"), "{dry}");
    let refused = p.same(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--explore", "false"]).await;
    assert!(refused.contains("bypassing the scheduler's site ceiling") && refused.contains("pass --yes"), "{refused}");
    assert!(site.store.request_list().await.unwrap().is_empty(), "not confirmed: nothing requested");
    p.same(&["rollout"]).await;

    // Changes that give the same answer twice.
    p.same(&["machine", "auto-update", "--machine", "a1", "--disable"]).await;
    p.same(&["machine", "auto-update", "--machine", "a1", "--clear"]).await;
    p.same(&["machine", "label", "--machine", "a1", "--set", "rack=r1"]).await;
    let window = [
        "managed-host",
        "start-updates",
        "--machines",
        "a1",
        "--start",
        "2030-01-01T00:00:00Z",
        "--end",
        "2030-01-02T00:00:00Z",
    ];
    p.same(&window).await;
    p.same(&["managed-host", "start-updates", "--machines", "a1", "--cancel"]).await;
    p.same(&["site-explorer", "re-explore", &bmc]).await;
    std::fs::write(
        file("more.toml"),
        "[[host]]\nid = \"imp-1\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    p.same(&["machine", "import", "--fleet", &file("more.toml")]).await;
    for args in [
        &["host", "reprovision", "clear", "a3"][..],
        &["host", "reprovision", "mark-manual-upgrade-complete", "a3"],
        &["managed-host", "reset-host-reprovisioning", "a3"],
    ] {
        p.same(args).await;
    }
    p.same_shape(&["doctor", "--fix"]).await;
    p.same_shape(&["config", "reload", "--wait", "20"]).await;

    // Changes made once on the site and once through the API, from the same state.
    let freeze = ["freeze", "--reason", "change window", "--selector", "label=rack=r9"];
    let unfreeze = ["unfreeze", "--selector", "label=rack=r9"];
    let local = [p.local(&freeze).await, p.local(&unfreeze).await];
    let remote = [p.remote(&freeze).await, p.remote(&unfreeze).await];
    for (l, r) in local.iter().zip(&remote) {
        assert_eq!(normalise(r, true), normalise(l, true));
    }
    assert!(local[0].contains("set on label=rack=r9 by ACTOR"), "{}", local[0]);
    let target = ["--vendor", "Dell", "--model", "PowerEdge R760", "--component", "uefi", "--version", "3.0"];
    let pause: Vec<&str> =
        ["budget", "pause"].iter().chain(&target).chain(&["--reason", "bad batch"]).copied().collect();
    let resume: Vec<&str> = ["budget", "resume"].iter().chain(&target).copied().collect();
    let local = [p.local(&pause).await, p.local(&resume).await];
    let remote = [p.remote(&pause).await, p.remote(&resume).await];
    for (l, r) in local.iter().zip(&remote) {
        assert_eq!(normalise(r, false), normalise(l, false));
    }
    assert!(!local[0].contains("ERROR") && !local[1].contains("ERROR"), "{local:?}");
    p.twins(
        &["machine", "maintenance", "a2", "--enter", "--reason", "fan"],
        &["machine", "maintenance", "a3", "--enter", "--reason", "fan"],
        "a2",
        "a3",
    )
    .await;
    p.twins(&["machine", "maintenance", "a2", "--exit"], &["machine", "maintenance", "a3", "--exit"], "a2", "a3").await;
    p.twins(
        &["machine", "add", "--id", "n1", "--bmc", "10.9.9.1"],
        &["machine", "add", "--id", "n2", "--bmc", "10.9.9.2"],
        "n1",
        "n2",
    )
    .await;
    let set = p.twins(&["host", "reprovision", "set", "a2"], &["host", "reprovision", "set", "a3"], "a2", "a3").await;
    assert!(!set.contains("ERROR"), "{set}");

    // all-drifted confirmed through the API answers once the hosts are requested.
    let requested =
        p.remote(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--yes", "--explore", "false"]).await;
    assert!(
        requested.contains("requested") && requested.contains("a1") && requested.contains("hostfw watch"),
        "{requested}"
    );

    // A confirmed catalog change through the API is stored under the token's name.
    let stored = p.remote(&["firmware-config", "set", "--yes", "--file", &runtime, "-m", "CHG-2"]).await;
    assert!(!stored.contains("ERROR"), "{stored}");
    let version = site.store.firmware_config_latest().await.unwrap().expect("stored");
    assert_eq!(version.actor, p.remote_actor);
    assert_eq!(version.message.as_deref(), Some("CHG-2"));
    // Last (the worker keeps the old key): a new site key, read by the CLI and sent.
    site.cli(&["site-key", "generate", "--out", &file("new.key")]).await.unwrap();
    let rotated = p.remote(&["machine", "rotate-key", "--new-key-file", &file("new.key")]).await;
    assert!(rotated.contains("re-encrypted") && rotated.contains(&file("new.key")), "{rotated}");
    let bad_key = file("bad.key");
    std::fs::write(&bad_key, "not a key").unwrap();
    let refused = p.remote(&["machine", "rotate-key", "--new-key-file", &bad_key]).await;
    assert!(refused.contains("ERROR: key:") && refused.contains("nothing was changed"), "{refused}");

    // The audit trail names the token for every change made through the API.
    let audit = site.store.audit_list(200).await.unwrap();
    for action in [
        "machine maintenance --enter",
        "machine add",
        "host reprovision set",
        "machine import",
        "host reprovision all-drifted",
    ] {
        assert!(audit.iter().any(|a| a.action == action && a.actor == p.remote_actor), "{action}: {audit:?}");
    }
}
