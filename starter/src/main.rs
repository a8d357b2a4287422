//! `hostfw`: the operator CLI of hostfw. See `hostfw --help`.
//!
//! Every failure is printed with its cause chain and exits with status 1 (bad arguments exit with
//! clap's status 2).

use clap::Parser;
use hostfw_starter::cli::Cli;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HOSTFW_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if let Err(e) = hostfw_starter::run(cli).await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
