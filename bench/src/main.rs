//! `hostfw-bench`: the benchmarks of `make bench`. Each benchmark starts what it needs (Temporal
//! dev server, bmc-sim fleet, site database, worker) and stops it; the binary prints ONE table and
//! writes it, with the machine description and the date, to `docs/benchmarks.md`.
//!
//! ```sh
//! hostfw-bench                                  # everything at the default sizes
//! hostfw-bench --only pass,history --pass-sizes 1000,10000
//! hostfw-bench --only rollout --hosts 100 --ceiling 10
//! ```

mod capacity;
mod crawl;
mod crawl_profiles;
mod history;
mod measure;
mod pass;
mod report;
mod rollout;
mod site;
mod slots;

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;

const ALL: &[&str] = &["rollout", "pass", "history", "capacity", "crawl"];

/// The label of a benchmark's rows in the table (its first column).
fn label(name: &str) -> &'static str {
    match name {
        "rollout" => "1 rollout",
        "pass" => "2 scheduler pass",
        "history" => "3 history size",
        "capacity" => "4 worker capacity",
        _ => "5 site explorer crawl",
    }
}

#[derive(Parser, Debug, Clone)]
#[command(name = "hostfw-bench", about = "hostfw benchmarks: one table, also written to docs/benchmarks.md")]
pub struct Args {
    /// Benchmarks to run, comma-separated: rollout,pass,history,capacity,crawl.
    #[arg(long, value_delimiter = ',', default_values_t = ALL.iter().map(|s| s.to_string()).collect::<Vec<_>>())]
    pub only: Vec<String>,
    /// Rollout: hosts in the fleet.
    #[arg(long, default_value_t = 500)]
    pub hosts: usize,
    /// Rollout: site ceiling (max_concurrent_machine_updates_absolute).
    #[arg(long, default_value_t = 50)]
    pub ceiling: usize,
    /// Rollout: firmware_global.max_uploads.
    #[arg(long, default_value_t = 20)]
    pub max_uploads: u32,
    /// Rollout: run the main size once more, event-driven, with max_uploads raised to the ceiling.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub open_uploads: bool,
    /// Rollout: bmc-sim task_seconds, reset_seconds, manager_reset_seconds.
    #[arg(long, default_value_t = 2.0)]
    pub task_seconds: f64,
    #[arg(long, default_value_t = 1.5)]
    pub reset_seconds: f64,
    #[arg(long, default_value_t = 2.0)]
    pub manager_reset_seconds: f64,
    /// Rollout, second size (tasks of tens of seconds, the server far from its limit): hosts (0
    /// skips it), ceiling and bmc-sim task_seconds.
    #[arg(long, default_value_t = 100)]
    pub long_hosts: usize,
    #[arg(long, default_value_t = 25)]
    pub long_ceiling: usize,
    #[arg(long, default_value_t = 20.0)]
    pub long_task_seconds: f64,
    /// Rollout: give up a run after this many seconds.
    #[arg(long, default_value_t = 1200)]
    pub rollout_timeout_secs: u64,
    /// Scheduler pass: site sizes.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1_000usize, 10_000, 100_000, 200_000])]
    pub pass_sizes: Vec<usize>,
    /// Scheduler pass: SQLite only.
    #[arg(long)]
    pub no_pg: bool,
    /// History size: component counts (1..=5).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 3, 5])]
    pub history_components: Vec<usize>,
    /// Worker capacity: parked workflows at which the worker's RSS is read (cumulative, one worker).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1_000usize, 5_000, 10_000])]
    pub capacity_sizes: Vec<usize>,
    /// Worker capacity: workflows released and drained, once per history shape (0 skips it).
    #[arg(long, default_value_t = 1_000)]
    pub drain_size: usize,
    /// Worker capacity: seconds to watch the parked worker's CPU.
    #[arg(long, default_value_t = 10)]
    pub capacity_idle_secs: u64,
    /// Worker capacity: give up draining after this many seconds.
    #[arg(long, default_value_t = 2400)]
    pub drain_timeout_secs: u64,
    /// Site Explorer: fleet sizes of one crawl.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1_000usize, 10_000])]
    pub crawl_sizes: Vec<usize>,
    /// Site Explorer: one more crawl (of the first size, at most 1,000) with every BMC answering
    /// after this many milliseconds; 0 skips it.
    #[arg(long, default_value_t = 20)]
    pub crawl_latency_ms: u64,
    /// Site Explorer, captured profiles: BMCs per fleet (one fleet per vendor tree and a mix).
    #[arg(long, default_value_t = 256)]
    pub crawl_profile_bmcs: usize,
    /// Site Explorer, captured profiles: every answer's latency in milliseconds.
    #[arg(long, default_value_t = 50)]
    pub crawl_profile_latency_ms: u64,
    /// Site Explorer, captured profiles: crawl modes, comma-separated: sequential ($expand off,
    /// one member at a time), bounded ($expand off, 4 members at a time), expand. Empty skips.
    #[arg(long, value_delimiter = ',', default_values_t = vec!["bounded".to_string(), "expand".to_string()])]
    pub crawl_modes: Vec<String>,
    /// Where to write the report; `-` writes nothing.
    #[arg(long, default_value = "docs/benchmarks.md")]
    pub out: String,
    /// Replace only the rows (and the run line) of the benchmarks run now in the existing report,
    /// keeping the others as they were; without it the report is rewritten from this run alone.
    #[arg(long)]
    pub update: bool,
}

/// One line of the table.
pub struct Row {
    pub bench: String,
    pub params: String,
    pub result: String,
    pub unit: String,
    pub notes: String,
}

impl Row {
    pub fn new(bench: &str, params: &str, result: String, unit: &str, notes: &str) -> Row {
        Row { bench: bench.into(), params: params.into(), result, unit: unit.into(), notes: notes.into() }
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from("| benchmark | parameters | result | unit | notes |\n|---|---|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            cell(&r.bench),
            cell(&r.params),
            cell(&r.result),
            cell(&r.unit),
            cell(&r.notes)
        ));
    }
    out
}

fn sh(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn machine() -> String {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map(|kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0))
        .unwrap_or_else(|| "?".into());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "?".into());
    format!(
        "- nproc: {}\n- memory (MemTotal): {mem}\n- CPU: {cpu}\n- kernel: {}\n- open files limit: {}\n",
        sh("nproc", &[]),
        sh("uname", &["-sr"]),
        sh("sh", &["-c", "ulimit -n"]),
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    for b in &args.only {
        if !ALL.contains(&b.as_str()) {
            anyhow::bail!("unknown benchmark {b:?}; choose from {}", ALL.join(","));
        }
    }
    let started = Instant::now();
    let date = sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for name in ALL.iter().filter(|b| args.only.iter().any(|o| o == *b)) {
        let t = Instant::now();
        eprintln!("== {name}");
        let result = match *name {
            "rollout" => rollout::run(&args, &mut rows).await,
            "pass" => pass::run(&args, &mut rows).await,
            "history" => history::run(&args, &mut rows).await,
            "capacity" => capacity::run(&args, &mut rows).await,
            "crawl" => crawl::run(&args, &mut rows).await,
            _ => unreachable!(),
        };
        if let Err(e) = result {
            eprintln!("{name} FAILED: {e:#}");
            rows.push(Row::new(label(name), "", "FAILED".into(), "", &format!("{e:#}")));
            failures.push(name.to_string());
        }
        eprintln!("== {name} took {:.0} s", t.elapsed().as_secs_f64());
    }
    println!("{}", table(&rows));
    let total = started.elapsed().as_secs_f64();
    println!("total: {total:.0} s");
    if args.out != "-" {
        let path = PathBuf::from(&args.out);
        let path = if path.is_relative() { hostfw_tests::workspace_root().join(path) } else { path };
        let argv: Vec<String> = std::env::args().skip(1).filter(|a| a != "--update").collect();
        let ran: Vec<&str> = ALL.iter().copied().filter(|b| args.only.iter().any(|o| o == b)).collect();
        let run_line = format!(
            "- {}: {date}, `make bench{}`, {total:.0} s",
            ran.join(", "),
            if argv.is_empty() { String::new() } else { format!(" ARGS=\"{}\"", argv.join(" ")) }
        );
        let (mut runs, mut kept) = (Vec::new(), Vec::new());
        if args.update {
            let old = std::fs::read_to_string(&path)
                .map_err(|e| anyhow::anyhow!("--update: reading {}: {e}", path.display()))?;
            let labels: Vec<&str> = ran.iter().map(|b| label(b)).collect();
            runs = report::run_lines(&old)
                .into_iter()
                .map(|line| report::drop_benchmarks(&line, &ran))
                .filter(|line| !line.is_empty())
                .collect();
            kept = report::rows(&old).into_iter().filter(|r| !labels.contains(&r.bench.as_str())).collect();
        }
        runs.push(run_line);
        kept.extend(rows);
        kept.sort_by(|a, b| a.bench.cmp(&b.bench));
        let doc = format!(
            "# Benchmarks\n\nWritten by `make bench` (`scripts/bench.sh` runs the release binary `hostfw-bench`). Every benchmark \
             starts its own Temporal dev server (the pinned CLI), bmc-sim fleet, site database and worker, and stops them. Rerun a \
             subset with e.g. `make bench ARGS=\"--only pass,history\"`; `--update` replaces only that subset's rows here.\n\n\
             ## Runs\n\n{}\n\n## Machine\n\n{}\n## Results\n\n{}\n",
            runs.join("\n"),
            machine(),
            table(&kept),
        );
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, doc)?;
        eprintln!("wrote {}", path.display());
    }
    if !failures.is_empty() {
        anyhow::bail!("failed: {}", failures.join(", "));
    }
    Ok(())
}
