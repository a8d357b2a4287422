//! What the benchmarks measure with (the site, its server and its workers come from the test
//! kit, `hostfw_tests`): a process's RSS and CPU time from /proc, and each host's update
//! intervals from the state history.

use std::process::Command;

use hostfw_store::Store;

/// VmRSS of a process, in MiB.
pub fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// utime + stime of a process, in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks())
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Each update of `machine_id` as (entered HostReprovision, left it), from the state history; one
/// still running ends `None`.
pub async fn update_intervals(store: &Store, machine_id: &str) -> anyhow::Result<Vec<(i64, Option<i64>)>> {
    let history = store.history_list(machine_id, 10_000).await?;
    Ok(hostfw_model::update_intervals::update_intervals(history.iter().rev().map(|h| (h.state, h.at_ms))))
}

pub use hostfw_model::update_intervals::max_overlap;
