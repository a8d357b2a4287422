//! `hostfw`: the operator CLI of hostfw. See `hostfw --help`.
//!
//! Every failure is printed with its cause chain and exits with status 1 (bad arguments exit with
//! clap's status 2).

use clap::Parser;
use hostfw_starter::cli::Cli;

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    // Diagnostics only (the output is on stdout): text on a terminal, JSON when stderr is captured.
    let format = std::env::var("HOSTFW_LOG_FORMAT")
        .ok()
        .and_then(|v| <hostfw_logging::LogFormat as clap::ValueEnum>::from_str(&v, true).ok())
        .unwrap_or_default();
    hostfw_logging::init(format, hostfw_logging::filter("HOSTFW_LOG", "warn"), hostfw_logging::Stream::Stderr);
    if let Err(e) = hostfw_starter::run(cli).await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
