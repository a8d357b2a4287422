//! `hostfw-api`: the hostfw API alone, for sites that run it apart from the workers (several
//! stateless replicas behind a load balancer, one site database, one Temporal). Serves `[api]`
//! of the site config until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;

#[derive(Parser, Debug)]
#[command(name = "hostfw-api", version, about = "Serve the hostfw API ([api] of the site config)")]
struct Args {
    /// Site config file.
    #[arg(long, env = "HOSTFW_CONFIG", default_value = "config/site.toml")]
    config: PathBuf,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    hostfw_logging::init(
        hostfw_logging::LogFormat::Auto,
        hostfw_logging::filter("RUST_LOG", "info"),
        hostfw_logging::Stream::Stderr,
    );
    let site = Arc::new(hostfw_model::SiteConfig::load(&args.config)?);
    let store = hostfw_store::Store::open_site(&site)
        .await
        .with_context(|| format!("opening the site database {}", site.site.database_url))?;
    let server = hostfw_api::ApiServer::start(site, store).await?;
    println!("hostfw API: {}/v1", server.url());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    server.stop().await;
    Ok(())
}
