//! The `bmc-sim` binary: load a fleet file, start every BMC, print one line per host, write
//! the CA certificate (`--ca-out`, TLS fleets) and the ready file, run until SIGTERM/Ctrl-C. Wiring only; all behaviour is in the library.
//!
//! Exit codes: 0 after a clean stop, 2 for a bad fleet file, 1 for anything else.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use hostfw_bmc_sim::{FleetSpec, RunningFleet, StatsReader};
use tokio::signal::unix::{signal, SignalKind};

/// A fleet of simulated Redfish BMCs, one HTTP listener per host.
#[derive(Debug, Parser)]
#[command(name = "bmc-sim", version)]
struct Args {
    /// Fleet file (TOML: optional [defaults], one [[host]] per BMC).
    #[arg(long, env = "BMC_SIM_FLEET")]
    fleet: PathBuf,
    /// Written (JSON list of {id, base_url}) once every listener is bound.
    #[arg(long)]
    ready_file: Option<PathBuf>,
    /// Write the PEM certificate of the fleet's CA here (needs `tls = true` in the fleet file);
    /// written before the ready file.
    #[arg(long)]
    ca_out: Option<PathBuf>,
    /// Serve the fleet-wide statistics (JSON: uploads, highest concurrent uploads, resets, per host)
    /// at `GET http://<addr>/stats`, e.g. `127.0.0.1:9900`.
    #[arg(long, value_name = "ADDR")]
    control_listen: Option<String>,
    /// Log line format: `text`, `json`, or `auto` (text on a terminal, JSON otherwise).
    #[arg(long, env = "HOSTFW_LOG_FORMAT", value_enum, default_value_t = hostfw_logging::LogFormat::Auto)]
    log_format: hostfw_logging::LogFormat,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    hostfw_logging::init(args.log_format, hostfw_logging::filter("RUST_LOG", "info"), hostfw_logging::Stream::Stderr);
    let spec = match FleetSpec::load(&args.fleet) {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("bmc-sim: {:#}", anyhow::Error::new(e));
            return ExitCode::from(2);
        }
    };
    if args.ca_out.is_some() && !spec.tls {
        eprintln!("bmc-sim: --ca-out needs `tls = true` in fleet file {}", args.fleet.display());
        return ExitCode::from(2);
    }
    match run(spec, args.ready_file.as_deref(), args.ca_out.as_deref(), args.control_listen.as_deref()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bmc-sim: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn run(
    spec: FleetSpec,
    ready_file: Option<&Path>,
    ca_out: Option<&Path>,
    control_listen: Option<&str>,
) -> anyhow::Result<()> {
    // Installed before the ready file exists, so a SIGTERM right after it is handled.
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let fleet = hostfw_bmc_sim::start(spec).await.context("starting the fleet")?;
    let control = match control_listen {
        Some(addr) => Some(serve_control(addr, fleet.stats_reader()).await?),
        None => None,
    };
    for h in fleet.hosts() {
        println!("{} {} {} at {}", h.id, h.vendor, h.model, h.base_url);
    }
    if let (Some(path), Some(pem)) = (ca_out, fleet.ca_pem()) {
        write_atomically(path, pem.as_bytes()).context("writing the CA certificate")?;
    }
    if let Some(path) = ready_file {
        write_ready_file(&fleet, path)?;
    }
    tracing::info!(hosts = fleet.hosts().len(), "fleet ready");
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    tracing::info!("stopping");
    if let Some(control) = control {
        control.abort();
    }
    fleet.shutdown().await;
    Ok(())
}

/// `GET /stats` on `addr`: the fleet-wide statistics as JSON.
async fn serve_control(addr: &str, stats: StatsReader) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let listener =
        tokio::net::TcpListener::bind(addr).await.with_context(|| format!("binding the control endpoint {addr}"))?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new().route(
        "/stats",
        axum::routing::get(move || {
            let stats = stats.clone();
            async move { axum::Json(stats.read()) }
        }),
    );
    println!("control http://{bound}/stats");
    tracing::info!(%bound, "serving fleet statistics at /stats");
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the control endpoint stopped");
        }
    }))
}

fn write_ready_file(fleet: &RunningFleet, path: &Path) -> anyhow::Result<()> {
    let list: Vec<_> = fleet.hosts().iter().map(|h| serde_json::json!({"id": h.id, "base_url": h.base_url})).collect();
    write_atomically(path, &serde_json::to_vec_pretty(&list)?).context("writing the ready file")
}

/// Written to a temporary name then renamed, so a reader never sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
