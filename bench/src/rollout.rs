//! Benchmark 1: a whole-fleet rollout under the site ceiling, event-driven (hostfw) against
//! NICo's fixed-interval policy, on the same fleet shape; at the main size (short BMC tasks, the
//! Temporal server near its limit) and at a second size whose tasks take tens of seconds (the
//! server idle enough that the scheduling policy's own cost shows). Each run also reports how
//! quickly freed slots were refilled and where that time went (`slots`).

use std::time::{Duration, Instant};

use anyhow::anyhow;
use hostfw_bmc_sim::FleetSpec;
use hostfw_store::Store;

use hostfw_tests::temporal::{DevServerOptions, Persistence};
use hostfw_tests::{wait_for, DevServer, WorkerThread};

use hostfw_workflows::names::MACHINE_UPDATE_MANAGER_ID;
use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow, MachineUpdateManagerWorkflow};
use temporalio_client::{WorkflowFetchHistoryOptions, WorkflowQueryOptions};

use crate::measure::{cpu_seconds, max_overlap, update_intervals};
use crate::site;
use crate::slots::{slot_stats, successor_split, workflow_times, SlotStats};
use crate::{Args, Row};

/// One rollout size: hosts, ceiling and the simulated BMC's timings.
#[derive(Debug, Clone, Copy)]
struct Shape {
    hosts: usize,
    ceiling: usize,
    task_seconds: f64,
    reset_seconds: f64,
    manager_reset_seconds: f64,
    /// `firmware_global.max_uploads` of the run.
    max_uploads: u32,
}

fn fleet_toml(shape: &Shape) -> String {
    let n = shape.hosts;
    let mut s = format!(
        "[defaults]\ntask_seconds = {}\nreset_seconds = {}\nmanager_reset_seconds = {}\nupload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"OnReset\"\n",
        shape.task_seconds, shape.reset_seconds, shape.manager_reset_seconds
    );
    for i in 0..n {
        s.push_str(&format!(
            "[[host]]\nid = \"h{i:05}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BMC\", version = \"1.0\" }}, {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    s
}

struct RunResult {
    makespan: Duration,
    fastest_ms: i64,
    highest_in_flight: usize,
    max_concurrent_uploads: u64,
    updates: usize,
    slots: SlotStats,
    /// Slot free → successor workflow started, and workflow started → its first activity started:
    /// (mean, p99) ms each.
    scheduler_ms: (f64, f64),
    server_ms: (f64, f64),
    /// Mean events per host workflow history.
    events_per_host: f64,
    /// Mean HostReprovision enter-to-leave time of the hosts, ms.
    mean_update_ms: f64,
    /// Worker start to the first host entering HostReprovision (the first crawl and pass), ms.
    first_start_ms: f64,
    /// Scheduler passes from the worker's start to the end (the manager's `status` query).
    passes: u64,
    /// CPU seconds over the rollout: the Temporal dev server, and this process (the worker thread,
    /// bmc-sim and the bench's own polling).
    server_cpu_s: f64,
    own_cpu_s: f64,
}

async fn run_once(args: &Args, shape: &Shape, event_driven: bool, interval: &str) -> anyhow::Result<RunResult> {
    let n = shape.hosts;
    let dir = tempfile::tempdir()?;
    let server = DevServer::start(DevServerOptions {
        persistence: Persistence::File(dir.path().join("temporal.db")),
        ..Default::default()
    })
    .await?;
    let task_queue = format!("bench-rollout-{}", if event_driven { "event" } else { "interval" });
    // bmc-sim binds its ports first, so the free port picked for the artifact server stays free.
    let fleet = hostfw_bmc_sim::start(FleetSpec::from_toml_str(&fleet_toml(shape)).map_err(|e| anyhow!("{e}"))?)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    let config = site::short_reprovision(site::config(server.port(), &task_queue))
        .site_workflows(true)
        .manager(shape.ceiling as i64, interval)
        .machine_updater("event_driven", event_driven)
        .max_uploads(shape.max_uploads.into())
        .explorer_interval("1h")
        .site_explorer("concurrency", 16)
        .model(&site::r760_bench());
    let (_path, site) = site::write(dir.path(), &config, site::IMAGES)?;
    let store = Store::open_site(&site).await?;
    hostfw_tests::register_fleet(&store, &fleet, |_| None).await?;
    let ids: Vec<String> = fleet.hosts().into_iter().map(|h| h.id).collect();

    let server_pid = server.pid().ok_or_else(|| anyhow!("no process listens on the dev server's port"))?;
    let server_cpu_before = cpu_seconds(server_pid).unwrap_or(f64::NAN);
    let own_cpu_before = cpu_seconds(std::process::id()).unwrap_or(f64::NAN);
    let started = Instant::now();
    let started_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as i64;
    let worker = WorkerThread::spawn(site.clone(), Vec::new());
    let last_report = std::cell::Cell::new(Instant::now());
    let result = wait_for(
        "every host compliant",
        Duration::from_secs(args.rollout_timeout_secs),
        Duration::from_millis(500),
        || async {
            let compliant = ids
                .iter()
                .filter(|id| {
                    let v = fleet.versions(id);
                    v.iter().all(|(_, version)| version == "2.0")
                })
                .count();
            let requests = store.request_list().await.ok()?.len();
            if last_report.get().elapsed() > Duration::from_secs(30) {
                eprintln!(
                    "  rollout: {compliant}/{n} compliant, {requests} requests, {:.0} s",
                    started.elapsed().as_secs_f64()
                );
                last_report.set(Instant::now());
            }
            (compliant == n && requests == 0).then(|| started.elapsed())
        },
    )
    .await;
    let stats = fleet.stats();
    let server_cpu_s = cpu_seconds(server_pid).unwrap_or(f64::NAN) - server_cpu_before;
    let own_cpu_s = cpu_seconds(std::process::id()).unwrap_or(f64::NAN) - own_cpu_before;
    let passes = server
        .client()
        .get_workflow_handle::<MachineUpdateManagerWorkflow>(MACHINE_UPDATE_MANAGER_ID)
        .query(MachineUpdateManagerWorkflow::status, (), WorkflowQueryOptions::default())
        .await
        .map_or(0, |s| s.passes_total);
    let _ = worker.stop().await;
    let makespan = result?;

    let mut intervals = Vec::new();
    let mut fastest = i64::MAX;
    for id in &ids {
        for (s, e) in update_intervals(&store, id).await? {
            if let Some(e) = e {
                fastest = fastest.min(e - s);
            }
            intervals.push((s, e));
        }
    }
    let finished: Vec<(i64, i64)> = intervals.iter().filter_map(|(s, e)| e.map(|e| (*s, e))).collect();
    let mean_update_ms = finished.iter().map(|(s, e)| (e - s) as f64).sum::<f64>() / finished.len().max(1) as f64;
    let first_start_ms = intervals.iter().map(|(s, _)| *s).min().map_or(f64::NAN, |s| (s - started_ms) as f64);
    let slots = slot_stats(&finished, shape.ceiling, makespan.as_millis() as f64);
    // Where the refill time went, from every host workflow's history.
    let client = server.client().clone();
    let mut times = Vec::new();
    let mut events = 0usize;
    for id in &ids {
        let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(id));
        let json =
            handle.fetch_history(WorkflowFetchHistoryOptions::default()).to_json().await.map_err(|e| anyhow!("{e}"))?;
        let history: serde_json::Value = serde_json::from_slice(&json)?;
        events += history["events"].as_array().map_or(0, Vec::len);
        if let Some(t) = workflow_times(&history) {
            times.push(t);
        }
    }
    let ends: Vec<i64> = finished.iter().map(|(_, e)| *e).collect();
    let (scheduler_ms, server_ms) = successor_split(&ends, &times, shape.ceiling);
    store.close().await;
    fleet.shutdown().await;
    server.shutdown().await;
    Ok(RunResult {
        makespan,
        fastest_ms: fastest,
        highest_in_flight: max_overlap(&intervals),
        max_concurrent_uploads: stats.max_concurrent_uploads,
        updates: intervals.len(),
        slots,
        scheduler_ms,
        server_ms,
        events_per_host: events as f64 / ids.len().max(1) as f64,
        mean_update_ms,
        first_start_ms,
        passes,
        server_cpu_s,
        own_cpu_s,
    })
}

pub async fn run(args: &Args, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let main = Shape {
        hosts: args.hosts,
        ceiling: args.ceiling,
        task_seconds: args.task_seconds,
        reset_seconds: args.reset_seconds,
        manager_reset_seconds: args.manager_reset_seconds,
        max_uploads: args.max_uploads,
    };
    let main_fastest_ms = run_shape(args, &main, rows).await?;
    if args.open_uploads && args.max_uploads < args.ceiling as u32 {
        run_open_uploads(args, &main, main_fastest_ms, rows).await?;
    }
    if args.long_hosts > 0 {
        let long = Shape {
            hosts: args.long_hosts,
            ceiling: args.long_ceiling,
            task_seconds: args.long_task_seconds,
            reset_seconds: args.reset_seconds,
            manager_reset_seconds: args.manager_reset_seconds,
            max_uploads: args.max_uploads,
        };
        run_shape(args, &long, rows).await?;
    }
    Ok(())
}

/// Runs one size under both policies and returns the fastest single-host update seen (ms).
async fn run_shape(args: &Args, shape: &Shape, rows: &mut Vec<Row>) -> anyhow::Result<i64> {
    let (n, c) = (shape.hosts, shape.ceiling);
    let params = |policy: &str| {
        format!(
            "N={n} hosts x 2 components (bmc+uefi), C={c}, max_uploads={}, task {}s / reset {}s / BMC reset {}s, {policy}",
            shape.max_uploads, shape.task_seconds, shape.reset_seconds, shape.manager_reset_seconds
        )
    };
    eprintln!("rollout: event-driven run ({n} hosts, C={c}, task {} s)", shape.task_seconds);
    let ev = run_once(args, shape, true, "300s").await?;
    let fastest_s = ev.fastest_ms as f64 / 1000.0;
    // NICo's interval scaled as 300 s is to a 40-minute host update.
    let interval_ms = ((ev.fastest_ms as f64 * 300.0 / 2400.0).round() as u64).max(1000);
    let interval = format!("{interval_ms}ms");
    eprintln!("rollout: interval run ({n} hosts, run interval {interval})");
    let ni = run_once(args, shape, false, &interval).await?;
    let fastest_ms = ev.fastest_ms.min(ni.fastest_ms);
    let bound_s = (n as f64 / c as f64).ceil() * fastest_ms as f64 / 1000.0;

    for (name, r, policy) in [
        ("event-driven", &ev, "hostfw: event_driven = true, run interval 300 s".to_string()),
        (
            "NICo interval",
            &ni,
            format!("NICo: event_driven = false, run interval {:.2} s", interval_ms as f64 / 1000.0),
        ),
    ] {
        rows.push(Row::new(
            "1 rollout",
            &params(&policy),
            format!("{:.1}", r.makespan.as_secs_f64()),
            "s makespan",
            &format!(
                "{name}: worker start to every host compliant with no request left (includes the first crawl); {} updates; {:.2}x the lower bound; {:.0} history events per host; {}",
                r.updates,
                r.makespan.as_secs_f64() / bound_s,
                r.events_per_host,
                where_time_went(r, n, c)
            ),
        ));
        rows.push(Row::new(
            "1 rollout",
            &params(&policy),
            format!("{:.2} / {:.2}", r.slots.free_to_start_mean_ms / 1000.0, r.slots.free_to_start_p99_ms / 1000.0),
            "s slot free to start, mean / p99",
            &format!(
                "{name}: {} starts that waited for a slot (state history); split from the host workflows' histories: slot free to successor workflow started {:.2} / {:.2} s (the scheduler), workflow started to its first activity started {:.2} / {:.2} s (the server)",
                r.slots.successors,
                r.scheduler_ms.0 / 1000.0,
                r.scheduler_ms.1 / 1000.0,
                r.server_ms.0 / 1000.0,
                r.server_ms.1 / 1000.0
            ),
        ));
        rows.push(Row::new(
            "1 rollout",
            &params(&policy),
            format!("{:.1} %", r.slots.idle_fraction * 100.0),
            "idle slot-seconds / (C x makespan)",
            &format!(
                "{name}: {:.0} slot-seconds idle between the first start and the last while hosts waited (the tail after the last start is not counted)",
                r.slots.idle_slot_seconds
            ),
        ));
        rows.push(Row::new(
            "1 rollout",
            &params(&policy),
            format!("{} / {}", r.highest_in_flight, r.max_concurrent_uploads),
            "hosts / uploads",
            &format!("{name}: highest in flight (state history) / bmc-sim max_concurrent_uploads (ceiling {c}, max_uploads {})", shape.max_uploads),
        ));
    }
    rows.push(Row::new(
        "1 rollout",
        &format!("N={n}, C={c}, task {}s", shape.task_seconds),
        format!("{bound_s:.1}"),
        "s lower bound",
        &format!(
            "ceil(N/C) x fastest single-host update ({:.1} s event-driven run, {:.1} s interval run; min used), from HostReprovision enter/leave in the state history",
            fastest_s,
            ni.fastest_ms as f64 / 1000.0
        ),
    ));
    rows.push(Row::new(
        "1 rollout",
        &format!("N={n}, C={c}, task {}s", shape.task_seconds),
        format!("{:.2}", ni.makespan.as_secs_f64() / ev.makespan.as_secs_f64()),
        "x",
        "NICo-interval makespan / event-driven makespan",
    ));
    Ok(fastest_ms)
}

/// Where a run's makespan went: the start (first crawl and pass), then ceil(N/C) waves of hosts
/// that took `mean_update_ms` each (the bound assumes every host as fast as the fastest one).
fn where_time_went(r: &RunResult, n: usize, c: usize) -> String {
    let waves = (n as f64 / c as f64).ceil();
    format!(
        "first host started {:.1} s after the worker; hosts took {:.1} s on average (fastest {:.1} s), ceil(N/C) x mean = {:.1} s; {} scheduler passes; CPU over the rollout: dev server {:.0} s, worker + bmc-sim + bench {:.0} s",
        r.first_start_ms / 1000.0,
        r.mean_update_ms / 1000.0,
        r.fastest_ms as f64 / 1000.0,
        waves * r.mean_update_ms / 1000.0,
        r.passes,
        r.server_cpu_s,
        r.own_cpu_s
    )
}

/// The main size once more, event-driven, with `max_uploads` raised to the ceiling: how much of
/// the distance to the bound is the site's upload limit (each component holds an upload slot
/// through its BMC task, so 20 slots serve fewer than 50 hosts at once).
async fn run_open_uploads(args: &Args, main: &Shape, main_fastest_ms: i64, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let (n, c) = (main.hosts, main.ceiling);
    let shape = Shape { max_uploads: c as u32, ..*main };
    eprintln!("rollout: event-driven run ({n} hosts, C={c}, max_uploads={c})");
    let r = run_once(args, &shape, true, "300s").await?;
    let waves = (n as f64 / c as f64).ceil();
    let bound_s = waves * r.fastest_ms as f64 / 1000.0;
    let main_bound_s = waves * main_fastest_ms as f64 / 1000.0;
    rows.push(Row::new(
        "1 rollout",
        &format!(
            "N={n} hosts x 2 components (bmc+uefi), C={c}, max_uploads={c}, task {}s / reset {}s / BMC reset {}s, hostfw: event_driven = true, run interval 300 s",
            shape.task_seconds, shape.reset_seconds, shape.manager_reset_seconds
        ),
        format!("{:.1}", r.makespan.as_secs_f64()),
        "s makespan",
        &format!(
            "event-driven, upload limit not binding: {:.2}x this run's lower bound ({bound_s:.1} s), {:.2}x the runs above ({main_bound_s:.1} s); slot free to start {:.2} / {:.2} s; idle {:.1} %; {} / {} hosts / uploads in flight; {}",
            r.makespan.as_secs_f64() / bound_s,
            r.makespan.as_secs_f64() / main_bound_s,
            r.slots.free_to_start_mean_ms / 1000.0,
            r.slots.free_to_start_p99_ms / 1000.0,
            r.slots.idle_fraction * 100.0,
            r.highest_in_flight,
            r.max_concurrent_uploads,
            where_time_went(&r, n, c)
        ),
    ));
    Ok(())
}
