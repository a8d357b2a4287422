//! `scout`: the hostfw host agent binary. Serves one or more machines (one per real host; several
//! simulated hosts in the demo) until SIGTERM or Ctrl-C, then lets running upgrades finish.

use clap::Parser;
use hostfw_scout::{connect, run_agent_with, ScoutSettings, TrustedKey, DEFAULT_STATE_DIR};

#[derive(Parser, Debug)]
#[command(name = "scout", version, about = "Run the hostfw Scout agent for one or more machines")]
struct Args {
    /// Machine id to serve (repeatable); Scout polls the task queue `scout/<id>` for each.
    #[arg(long = "machine", value_name = "ID", required = true)]
    machines: Vec<String>,
    /// Temporal frontend `host:port` (else TEMPORAL_ADDRESS, else localhost:7233).
    #[arg(long, value_name = "HOST:PORT")]
    temporal_address: Option<String>,
    /// Temporal namespace (else TEMPORAL_NAMESPACE, else `default`).
    #[arg(long)]
    namespace: Option<String>,
    /// Where Scout records each upgrade task it took, so a retried task never runs twice.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_STATE_DIR)]
    state_dir: std::path::PathBuf,
    /// Log line format: `text`, `json`, or `auto` (text on a terminal, JSON otherwise).
    #[arg(long, env = "HOSTFW_LOG_FORMAT", value_enum, default_value_t = hostfw_logging::LogFormat::Auto)]
    log_format: hostfw_logging::LogFormat,
    /// The operator's package signing public key (`hostfw scout-package keygen` writes
    /// `scout-signing.pub`): only packages signed by it run.
    #[arg(long, value_name = "FILE")]
    trusted_key: Option<std::path::PathBuf>,
    /// Development only: with no --trusted-key, run unsigned packages instead of refusing them.
    #[arg(long)]
    allow_unsigned: bool,
    /// Pass this variable of Scout's own environment on to package scripts (repeatable; e.g. a
    /// proxy setting). Scripts otherwise get only their task's variables and PATH, the locale,
    /// TZ and TMPDIR.
    #[arg(long = "script-env", value_name = "NAME")]
    script_env: Vec<String>,
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    hostfw_logging::init(args.log_format, hostfw_logging::filter("RUST_LOG", "info"), hostfw_logging::Stream::Stdout);
    let identity = format!("scout {} (pid {})", args.machines.join(","), std::process::id());
    let client = connect(args.temporal_address.as_deref(), args.namespace.as_deref(), &identity).await?;
    let trusted_key = match &args.trusted_key {
        Some(path) => Some(TrustedKey::from_file(path).map_err(|e| anyhow::anyhow!("--trusted-key {e}"))?),
        None => None,
    };
    let script_env =
        hostfw_scout::script_env(&args.script_env, |n| std::env::var(n).ok()).map_err(anyhow::Error::msg)?;
    let settings = ScoutSettings {
        script_env,
        state_dir: args.state_dir,
        trusted_key,
        allow_unsigned: args.allow_unsigned,
        ..ScoutSettings::default()
    };
    run_agent_with(client, args.machines, settings, shutdown_signal()).await?;
    tracing::info!("scout stopped");
    Ok(())
}
