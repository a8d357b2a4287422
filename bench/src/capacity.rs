//! Benchmark 4: many host workflows in flight on one `hostfw-worker` process, parked waiting for
//! the tenant's approval, then released: the worker's RSS and CPU while parked (at growing
//! counts, with the memory per parked workflow fitted from them), and the drain rate and server
//! CPU per workflow.
//!
//! The dev server runs in memory here: with its SQLite file, the server's own writes set the drain
//! time (about 0.4 s of server CPU per workflow on 2 cores), which would hide the worker being
//! measured. Both processes' CPU is reported, so the split stays visible.

use std::time::{Duration, Instant};

use anyhow::anyhow;
use futures::stream::{self, StreamExt, TryStreamExt};
use hostfw_bmc_sim::FleetSpec;
use hostfw_store::Store;
use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow};
use temporalio_client::{WorkflowFetchHistoryOptions, WorkflowSignalOptions};

use hostfw_tests::temporal::{DevServerOptions, Persistence};
use hostfw_tests::{wait_for, ChildWorker, DevServer};

use crate::measure::{cpu_seconds, rss_mib};
use crate::site;
use crate::{Args, Row};

fn fleet_toml(n: usize) -> String {
    // Already compliant: once approved, a workflow protects the host, checks its firmware and ends.
    let mut s = String::from(
        "[defaults]\ntask_seconds = 0.5\nreset_seconds = 0.2\nmanager_reset_seconds = 0.5\nupload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"OnReset\"\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "[[host]]\nid = \"a{i:05}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BMC\", version = \"2.0\" }}, {{ id = \"BIOS\", version = \"2.0\" }} ]\n"
        ));
    }
    s
}

async fn count_substate(store: &Store, substate: &str) -> Option<usize> {
    Some(store.machine_list().await.ok()?.iter().filter(|m| m.substate.map(|s| s.as_str()) == Some(substate)).count())
}

/// Park workflows up to each of `checkpoints` (cumulative), reporting the worker's RSS at each;
/// then, with `drain`, release them all and report the drain.
pub async fn run_one(
    args: &Args,
    checkpoints: &[usize],
    drain: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<Vec<(usize, f64)>> {
    let n = checkpoints.iter().copied().max().unwrap_or(0);
    let server =
        DevServer::start(DevServerOptions { persistence: Persistence::InMemory, ..Default::default() }).await?;
    let server_pid = server.pid().ok_or_else(|| anyhow!("no process listens on the dev server's port"))?;
    let dir = tempfile::tempdir()?;
    // bmc-sim binds its ports first, so the free port picked for the artifact server stays free.
    let fleet = hostfw_bmc_sim::start(FleetSpec::from_toml_str(&fleet_toml(n)).map_err(|e| anyhow!("{e}"))?)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    let config = site::short_reprovision(site::config(server.port(), "bench-capacity"))
        .max_uploads(args.max_uploads.into())
        .model(&site::r760_bench());
    let (config, site) = site::write(dir.path(), &config, site::IMAGES)?;
    let store = Store::open_site(&site).await?;
    hostfw_tests::register_fleet(&store, &fleet, |id| Some(format!("inst-{id}"))).await?;
    let ids: Vec<String> = fleet.hosts().into_iter().map(|h| h.id).collect();

    let worker =
        ChildWorker::start_config(hostfw_tests::tools::find_worker_bin("release")?, &config, dir.path()).await?;
    let pid = worker.pid().ok_or_else(|| anyhow!("the worker is not running"))?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_idle = rss_mib(pid).unwrap_or(f64::NAN);
    let client = hostfw_worker::connect(&site, "hostfw-bench").await?;

    let result = async {
        let mut started = 0usize;
        let mut series = Vec::new();
        let mut rss_parked_after = rss_idle;
        let idle_window = Duration::from_secs(args.capacity_idle_secs);
        for &checkpoint in checkpoints {
            let t_batch = Instant::now();
            let cpu_batch = cpu_seconds(pid).unwrap_or(f64::NAN);
            stream::iter(ids[started..checkpoint].iter())
                .map(|id| {
                    let (site, store, client) = (&site, &store, &client);
                    async move {
                        hostfw_activities::site_link::request_and_start(site, store, client, id, "AdminCli", Some("bench".into()), hostfw_activities::site_link::Guard::CapsOnly)
                            .await
                            .map_err(|e| anyhow!("starting {id}: {e}"))
                    }
                })
                .buffer_unordered(16)
                .try_collect::<Vec<_>>()
                .await?;
            let batch = checkpoint - started;
            started = checkpoint;
            let started_s = t_batch.elapsed().as_secs_f64();
            wait_for(&format!("{checkpoint} workflows waiting for approval"), Duration::from_secs(1800), Duration::from_secs(1), || async {
                (count_substate(&store, "WaitingForApproval").await? == checkpoint).then_some(())
            })
            .await?;
            let parked_s = t_batch.elapsed().as_secs_f64();
            let cpu_parking = cpu_seconds(pid).unwrap_or(f64::NAN) - cpu_batch;
            let rss_parked = rss_mib(pid).unwrap_or(f64::NAN);
            // Parked: how much does the worker spend doing nothing for a while?
            let cpu_a = cpu_seconds(pid).unwrap_or(f64::NAN);
            tokio::time::sleep(idle_window).await;
            let cpu_idle = cpu_seconds(pid).unwrap_or(f64::NAN) - cpu_a;
            rss_parked_after = rss_mib(pid).unwrap_or(f64::NAN);
            series.push((checkpoint, rss_parked_after));
            let params = format!("{checkpoint} host workflows parked, one hostfw-worker process (release), site_workflows = false, dev server in memory");
            rows.push(Row::new(
                "4 worker capacity",
                &params,
                format!("{rss_parked_after:.0} (idle {rss_idle:.0})"),
                "MiB RSS parked",
                &format!("VmRSS after {} s parked with all {checkpoint} waiting for approval ({rss_parked:.0} MiB when the last parked; worker alone before any workflow: {rss_idle:.0} MiB)", idle_window.as_secs()),
            ));
            rows.push(Row::new(
                "4 worker capacity",
                &params,
                format!("{cpu_parking:.1} / {cpu_idle:.2}"),
                "CPU s",
                &format!("worker utime+stime: starting and parking this batch of {batch} ({started_s:.0} s to start, {parked_s:.0} s until all WaitingForApproval) / over {} s parked with nothing to do", idle_window.as_secs()),
            ));
        }
        if !drain {
            return anyhow::Ok(series);
        }

        let t_release = Instant::now();
        let cpu_b = cpu_seconds(pid).unwrap_or(f64::NAN);
        let server_cpu_b = cpu_seconds(server_pid).unwrap_or(f64::NAN);
        stream::iter(ids.iter())
            .map(|id| {
                let (store, client) = (&store, &client);
                async move {
                    store.request_set_approval(id, true).await?;
                    client
                        .get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(id))
                        .signal(HostReprovisionWorkflow::approve_updates, "bench".to_string(), WorkflowSignalOptions::default())
                        .await
                        .map_err(|e| anyhow!("signalling {id}: {e}"))
                }
            })
            .buffer_unordered(16)
            .try_collect::<Vec<_>>()
            .await?;
        let signalled_s = t_release.elapsed().as_secs_f64();
        let rss_peak = std::cell::Cell::new(rss_parked_after);
        wait_for("every released workflow completed", Duration::from_secs(args.drain_timeout_secs), Duration::from_secs(1), || async {
            rss_peak.set(rss_peak.get().max(rss_mib(pid).unwrap_or(0.0)));
            (store.request_list().await.ok()?.is_empty() && server.running_workflows().ok()? == 0).then_some(())
        })
        .await?;
        let drain_s = t_release.elapsed().as_secs_f64();
        let events = {
            let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(&ids[0]));
            let json = handle.fetch_history(WorkflowFetchHistoryOptions::default()).to_json().await.map_err(|e| anyhow!("{e}"))?;
            let history: serde_json::Value = serde_json::from_slice(&json)?;
            history["events"].as_array().map(|a| a.len()).unwrap_or(0)
        };
        let cpu_drain = cpu_seconds(pid).unwrap_or(f64::NAN) - cpu_b;
        let server_cpu_drain = cpu_seconds(server_pid).unwrap_or(f64::NAN) - server_cpu_b;
        let back = count_substate(&store, "WaitingForApproval").await.unwrap_or(0);
        let params = format!("drain of {n} released host workflows, one hostfw-worker process (release), dev server in memory");
        rows.push(Row::new(
            "4 worker capacity",
            &params,
            format!("{:.1}", n as f64 / drain_s),
            "workflows/s drained",
            &format!(
                "approve_updates signalled to all ({signalled_s:.0} s to signal, 16 at a time) until no request left and 0 running workflows: {drain_s:.0} s, {events} history events each; peak worker RSS {:.0} MiB; {back} left waiting",
                rss_peak.get()
            ),
        ));
        rows.push(Row::new(
            "4 worker capacity",
            &params,
            format!("{:.3} / {:.3}", server_cpu_drain / n as f64, cpu_drain / n as f64),
            "CPU s per workflow, server / worker",
            &format!("CPU while draining: Temporal dev server (in memory) {server_cpu_drain:.0} s, worker {cpu_drain:.0} s"),
        ));
        anyhow::Ok(series)
    }
    .await;
    drop(worker);
    store.close().await;
    fleet.shutdown().await;
    server.shutdown().await;
    result
}

pub async fn run(args: &Args, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    // Growth: parked workflows at each size, one worker.
    let mut sizes = args.capacity_sizes.clone();
    sizes.sort_unstable();
    if !sizes.is_empty() {
        eprintln!("capacity: parking up to {sizes:?} workflows");
        let series = run_one(args, &sizes, false, rows).await?;
        if let Some((slope, intercept)) = fit(&series) {
            rows.push(Row::new(
                "4 worker capacity",
                &format!("parked at {sizes:?}"),
                format!("{:.1}", slope * 1024.0),
                "KiB RSS per parked workflow",
                &format!("least-squares line through the parked RSS points: {intercept:.0} MiB + {:.1} KiB x workflows (the SDK's workflow cache holds at most max_cached_workflows runs; parked runs beyond it cost the worker nothing)", slope * 1024.0),
            ));
        }
    }
    if args.drain_size > 0 {
        eprintln!("capacity: draining {} workflows", args.drain_size);
        run_one(args, &[args.drain_size], true, rows).await?;
    }
    Ok(())
}

/// Least-squares line through (workflows, MiB): (MiB per workflow, MiB at zero).
fn fit(points: &[(usize, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|(x, _)| *x as f64).sum::<f64>() / n;
    let my = points.iter().map(|(_, y)| *y).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|(x, _)| (*x as f64 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (*x as f64 - mx) * (y - my)).sum();
    (sxx > 0.0).then(|| {
        let slope = sxy / sxx;
        (slope, my - slope * mx)
    })
}
