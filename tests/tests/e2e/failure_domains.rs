//! End-to-end: failure-domain caps (`[machine_updater] max_concurrent_per_label`) on a real
//! Temporal dev server against bmc-sim. Machines are labelled through the CLI; `plan` names the
//! cap that holds a host; and several scheduler passes run at once, interleaved with direct
//! requests from the CLI, never put two hosts of one rack in flight, while unlabelled hosts are
//! bounded by the site ceiling only.

use std::time::Duration;

use hostfw_activities::site::manager_pass;
use hostfw_activities::Deps;
use hostfw_model::update_intervals::max_overlap;
use hostfw_tests::fixtures::r760_bios;
use hostfw_tests::{Catalog, Site, SiteSpec, SiteToml};
use hostfw_workflows::PassRequest;

/// One update: entered HostReprovision, left it.
type Interval = (i64, Option<i64>);

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];

/// `(id, rack)`: three hosts in each of two racks, two without a rack.
const HOSTS: &[(&str, Option<&str>)] = &[
    ("a1", Some("r1")),
    ("a2", Some("r1")),
    ("a3", Some("r1")),
    ("b1", Some("r2")),
    ("b2", Some("r2")),
    ("b3", Some("r2")),
    ("u1", None),
    ("u2", None),
];

fn fleet() -> String {
    let mut fleet = String::from(
        "[defaults]\ntask_seconds = 0.5\nreset_seconds = 0.2\nupload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"Immediate\"\n",
    );
    for (id, _) in HOSTS {
        fleet.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    fleet
}

fn rack_of(id: &str) -> Option<&'static str> {
    HOSTS.iter().find(|(h, _)| *h == id).and_then(|(_, r)| *r)
}

fn compliant(site: &Site, id: &str) -> bool {
    site.fleet.versions(id).iter().any(|(member, v)| member == "BIOS" && v == "3.0")
}

/// In flight per rack now: hosts with a request.
async fn requested_per_rack(site: &Site) -> (usize, usize) {
    let requests = site.store.request_list().await.unwrap();
    let count = |rack: &str| requests.iter().filter(|r| rack_of(&r.machine_id) == Some(rack)).count();
    (count("r1"), count("r2"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_passes_and_direct_requests_never_put_two_hosts_of_a_rack_in_flight() {
    let caps: toml::Table = [("rack".to_string(), toml::Value::Integer(1))].into_iter().collect();
    let fleet = fleet();
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default()
            .catalog(&Catalog::of([r760_bios()]))
            .manager(10, "1h")
            .machine_updater("max_concurrent_per_label", toml::Value::Table(caps))
            .explorer_interval("1h")
            // No Machine Update Manager: this test runs the passes itself, several at once.
            .site_workflows(false),
        images: IMAGES,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    for (id, rack) in HOSTS {
        if let Some(rack) = rack {
            let out = site.cli(&["machine", "label", "--machine", id, "--set", &format!("rack={rack}")]).await.unwrap();
            assert!(out.contains(&format!("rack={rack}")) && out.contains("at most 1 at once"), "{out}");
        }
    }
    let listed = site.cli(&["machine", "list"]).await.unwrap();
    assert!(listed.contains("LABELS") && listed.contains("rack=r2"), "{listed}");
    site.cli(&["site-explorer", "explore"]).await.unwrap();

    // The dry run starts one host per rack and both unlabelled hosts, and says why the others wait.
    let plan = site.cli(&["plan"]).await.unwrap();
    eprintln!("plan with a rack cap of 1:\n{plan}");
    assert!(plan.contains("would start (4): a1, b1, u1, u2"), "{plan}");
    assert!(plan.contains("failure-domain cap reached: 1 of 1 hosts labelled rack=r1"), "{plan}");
    assert!(plan.contains("max_concurrent_per_label.rack = 1"), "{plan}");

    let deps = Deps::open(&site.site, site.store.clone(), Some(site.client.clone())).await.unwrap();
    let mut rounds = 0;
    let mut cap_refusals = 0;
    while !HOSTS.iter().all(|(id, _)| compliant(&site, id)) {
        rounds += 1;
        assert!(rounds <= 40, "the fleet did not converge in 40 rounds");
        // Four passes at once, and a direct request for every rack host that has none: every
        // interleaving of them goes through the same guard.
        let passes: Vec<_> = (0..4)
            .map(|i| {
                let deps = deps.clone();
                tokio::spawn(async move {
                    manager_pass::pass(&deps, PassRequest { reasons: vec![format!("test pass {i}")] }).await
                })
            })
            .collect();
        let mut refusals: Vec<String> = Vec::new();
        for (id, rack) in HOSTS {
            if rack.is_some() && !compliant(&site, id) && site.store.request_get(id).await.unwrap().is_none() {
                if let Err(e) = site.cli(&["host", "reprovision", "set", "--id", id]).await {
                    refusals.push(format!("{e:#}"));
                }
            }
        }
        for p in passes {
            p.await.unwrap().expect("a pass");
        }
        if rounds == 1 {
            // Bounded by the site ceiling only: both unlabelled hosts start in the first round
            // (requested now, or already done), beside one host per rack.
            for id in ["u1", "u2"] {
                let started = site.store.request_get(id).await.unwrap().is_some() || compliant(&site, id);
                assert!(started, "{id} started in the first round with a1 and b1");
            }
        }
        let (r1, r2) = requested_per_rack(&site).await;
        assert!(r1 <= 1 && r2 <= 1, "round {rounds}: rack r1 has {r1} requests, r2 has {r2}");
        cap_refusals += refusals.iter().filter(|r| r.contains("max_concurrent_per_label.rack = 1")).count();
        for out in &refusals {
            assert!(
                out.contains("max_concurrent_per_label.rack = 1")
                    || out.contains("already has a reprovisioning request"),
                "a direct request is refused for its rack (or raced a pass for the same host): {out}"
            );
        }
        // The next round once something finished (or everything is done).
        let before = site.store.request_list().await.unwrap().len();
        site.wait_for("a host to finish", Duration::from_secs(120), || async {
            let now = site.store.request_list().await.ok()?.len();
            (now < before || before == 0).then_some(())
        })
        .await;
    }

    assert!(cap_refusals > 0, "the direct requests met the cap at least once");

    let mut per_rack: Vec<(Option<&str>, Vec<Interval>)> = Vec::new();
    for rack in [Some("r1"), Some("r2"), None] {
        let mut intervals = Vec::new();
        for (id, _) in HOSTS.iter().filter(|(_, r)| *r == rack) {
            let history = site.store.history_list(id, 1000).await.unwrap();
            intervals.extend(hostfw_model::update_intervals::update_intervals(
                history.iter().rev().map(|h| (h.state, h.at_ms)),
            ));
        }
        per_rack.push((rack, intervals));
    }
    // Each host was flashed once. (A pass that read the site view before another request landed
    // no longer requests anything: the gate fence refuses it. A direct request from the CLI
    // that checked a host just before a pass started it may still request it again after its
    // whole update ended: its workflow re-reads the inventory, finds it at the catalog and ends
    // within milliseconds, a short extra interval that installs nothing and, guarded like any
    // request, never overlaps another host of its rack.)
    for (id, _) in HOSTS {
        assert_eq!(site.fleet.stats().per_host[*id].uploads, 1, "{id} flashed once");
    }
    for (rack, intervals) in &per_rack {
        if let Some(rack) = rack {
            assert!(intervals.len() >= 3, "each host of {rack} updated: {intervals:?}");
            assert_eq!(max_overlap(intervals), 1, "one host of {rack} at a time: {intervals:?}");
        }
        // How much the unlabelled hosts actually overlapped depends on timing (a fast host may
        // finish before the other's workflow protects it); that both started at once is checked
        // in the first round above.
    }
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_come_from_machine_add_a_fleet_file_and_machine_label_and_bad_ones_write_nothing() {
    let fleet = fleet();
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().catalog(&Catalog::of([r760_bios()])).site_workflows(false),
        images: IMAGES,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let labels_of = |id: &'static str| {
        let store = site.store.clone();
        async move { hostfw_model::labels_text(&store.machine_get(id).await.unwrap().unwrap().labels) }
    };

    let add =
        ["machine", "add", "--id", "n1", "--bmc", "10.0.0.9:443", "--label", "rack=r7", "--label", "power_domain=p2"];
    site.cli(&add).await.unwrap();
    assert_eq!(labels_of("n1").await, "power_domain=p2,rack=r7");
    let audit = site.store.audit_list(5).await.unwrap();
    assert!(audit.iter().any(|a| a.action == "machine add" && a.detail.contains("labels power_domain=p2,rack=r7")));
    // Registering again without --label keeps them.
    site.cli(&["machine", "add", "--id", "n1", "--bmc", "10.0.0.9:443"]).await.unwrap();
    assert_eq!(labels_of("n1").await, "power_domain=p2,rack=r7");

    let err =
        site.cli(&["machine", "add", "--id", "n2", "--bmc", "10.0.0.10:443", "--label", "rack"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("--label: label \"rack\" is not key=value"), "{err:#}");
    assert!(site.store.machine_get("n2").await.unwrap().is_none(), "nothing written");
    let err = site.cli(&["machine", "label", "--machine", "n1", "--set", "rack=r 8"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("letters, digits"), "{err:#}");
    let err = site.cli(&["machine", "label", "--machine", "n1"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("--set key=value and/or --remove key"), "{err:#}");
    let err = site.cli(&["machine", "label", "--machine", "ghost", "--set", "rack=r1"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("not found") && format!("{err:#}").contains("nothing was changed"), "{err:#}");
    assert_eq!(labels_of("n1").await, "power_domain=p2,rack=r7", "refusals change nothing");

    let json = site
        .cli(&[
            "--format",
            "json",
            "machine",
            "label",
            "--machine",
            "n1",
            "--set",
            "rack=r8",
            "--remove",
            "power_domain",
        ])
        .await
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["labels"], serde_json::json!({ "rack": "r8" }), "{json}");

    // A fleet file's host labels replace the stored ones on import.
    let path = site.dir.path().join("labelled-fleet.toml");
    std::fs::write(
        &path,
        "[[host]]\nid = \"n1\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"10.0.0.9:443\"\n\
         labels = { rack = \"r9\", row = \"c\" }\n",
    )
    .unwrap();
    site.cli(&["machine", "import", "--fleet", &path.display().to_string()]).await.unwrap();
    assert_eq!(labels_of("n1").await, "rack=r9,row=c");
    site.shutdown().await;
}
