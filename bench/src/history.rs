//! Benchmark 3: events in one host workflow's history, for 1, 3 and 5 components (Redfish
//! route, no failures).

use std::time::Duration;

use anyhow::anyhow;
use hostfw_bmc_sim::FleetSpec;
use hostfw_store::Store;
use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow};
use temporalio_client::{WorkflowFetchHistoryOptions, WorkflowGetResultOptions};

use hostfw_tests::temporal::{DevServerOptions, Persistence};
use hostfw_tests::{DevServer, Firmware, HostModel, SiteToml, WorkerThread};

use crate::site;
use crate::{Args, Row};

/// (component type, inventory member id), in install order.
const COMPONENTS: &[(&str, &str)] =
    &[("bmc", "BMC"), ("uefi", "BIOS"), ("nic", "NIC_0"), ("cpldmb", "CPLD_MB"), ("cpldpdb", "CPLD_PDB")];

pub async fn run(args: &Args, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let counts = &args.history_components;
    let mut models = Vec::new();
    let mut images = Vec::new();
    for (c, member) in COMPONENTS {
        images.push((format!("bench/{c}.bin"), format!("^{member}$"), "2.0"));
    }
    let mut fleet = String::from(
        "[defaults]\ntask_seconds = 0.5\nreset_seconds = 0.3\nmanager_reset_seconds = 0.5\nupload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"OnReset\"\n",
    );
    for &k in counts {
        let k = k.min(COMPONENTS.len());
        let comps = &COMPONENTS[..k];
        let ordering: Vec<&str> = comps.iter().map(|(c, _)| *c).collect();
        let mut model = HostModel::new(&format!("c{k}"), "Bench", &format!("C{k}")).ordering(&ordering);
        for (c, member) in comps {
            model = model.component(c, &format!("^{member}$"), [Firmware::file("2.0", &format!("bench/{c}.bin"))]);
        }
        models.push(model);
        let members: Vec<String> =
            comps.iter().map(|(_, m)| format!("{{ id = \"{m}\", version = \"1.0\" }}")).collect();
        fleet.push_str(&format!(
            "[[host]]\nid = \"c{k}\"\nvendor = \"Bench\"\nmodel = \"C{k}\"\nbmc_address = \"127.0.0.1:0\"\nfirmware = [ {} ]\n",
            members.join(", ")
        ));
    }
    let image_refs: Vec<(&str, &str, &str)> = images.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), *c)).collect();

    let dir = tempfile::tempdir()?;
    let server = DevServer::start(DevServerOptions {
        persistence: Persistence::File(dir.path().join("temporal.db")),
        ..Default::default()
    })
    .await?;
    // bmc-sim binds its ports first, so the free port picked for the artifact server stays free.
    let fleet = hostfw_bmc_sim::start(FleetSpec::from_toml_str(&fleet).map_err(|e| anyhow!("{e}"))?)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    let config: SiteToml = site::short_reprovision(site::config(server.port(), "bench-history"))
        .catalog(&hostfw_tests::Catalog::of(models));
    let (_path, site) = site::write(dir.path(), &config, &image_refs)?;
    let store = Store::open_site(&site).await?;
    hostfw_tests::register_fleet(&store, &fleet, |_| None).await?;
    let worker = WorkerThread::spawn(site.clone(), Vec::new());
    let client = hostfw_worker::connect(&site, "hostfw-bench").await?;

    let result = async {
        let hosts: Vec<(usize, String)> = counts
            .iter()
            .map(|&k| {
                let k = k.min(COMPONENTS.len());
                (k, format!("c{k}"))
            })
            .collect();
        for (_, id) in &hosts {
            hostfw_activities::site_link::request_and_start(&site, &store, &client, id, "AdminCli", Some("bench".into()), hostfw_activities::site_link::Guard::CapsOnly)
                .await
                .map_err(|e| anyhow!("starting {id}: {e}"))?;
        }
        for (k, id) in &hosts {
            let (k, id) = (*k, id.clone());
            let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(&id));
            let outcome = tokio::time::timeout(Duration::from_secs(600), handle.get_result(WorkflowGetResultOptions::default()))
                .await
                .map_err(|_| anyhow!("{id}: not finished within 600 s"))?
                .map_err(|e| anyhow!("{id}: {e}"))?;
            let compliant = fleet.versions(&id).iter().all(|(_, v)| v == "2.0");
            let json = handle.fetch_history(WorkflowFetchHistoryOptions::default()).to_json().await.map_err(|e| anyhow!("{e}"))?;
            let history: serde_json::Value = serde_json::from_slice(&json)?;
            let events = history["events"].as_array().map(|a| a.len()).unwrap_or(0);
            let mut activities = 0;
            for e in history["events"].as_array().into_iter().flatten() {
                if e["attributes"].as_object().is_some_and(|o| o.contains_key("ActivityTaskScheduledEventAttributes")) {
                    activities += 1;
                }
            }
            rows.push(Row::new(
                "3 history size",
                &format!("{k} component(s), Redfish multipart, OnReset, no failures"),
                events.to_string(),
                "events",
                &format!(
                    "host-reprovision/{id}: {activities} activities scheduled, history JSON {:.1} KiB; outcome {}; firmware at target: {compliant}",
                    json.len() as f64 / 1024.0,
                    format!("{outcome:?}").split([' ', '{', '(']).next().unwrap_or_default()
                ),
            ));
        }
        anyhow::Ok(())
    }
    .await;
    let _ = worker.stop().await;
    store.close().await;
    fleet.shutdown().await;
    server.shutdown().await;
    result
}
