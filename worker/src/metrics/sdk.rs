//! The Temporal SDK's own worker metrics (`temporal_*`: task slots, pollers, latencies): its
//! Prometheus exporter on a private loopback port, the telemetry options that feed it, and
//! fetching its page so `/metrics` can append it.
//!
//! Owns starting the exporter and reading it back. It must not be exposed on its own: operators
//! scrape hostfw's `/metrics` only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use temporalio_common::telemetry::metrics::CoreMeter;
use temporalio_common::telemetry::{start_prometheus_metric_exporter, PrometheusExporterOptions, TelemetryOptions};

/// A running SDK exporter: where it listens and the telemetry options for `run_worker_with_telemetry`.
pub struct SdkMetrics {
    pub addr: SocketAddr,
    pub telemetry: TelemetryOptions,
}

/// Start the SDK's exporter on `127.0.0.1:0`. Needs a Tokio runtime (the exporter spawns its
/// server); it runs until the process exits.
pub fn start_sdk_metrics() -> anyhow::Result<SdkMetrics> {
    let options = PrometheusExporterOptions::builder().socket_addr(SocketAddr::from(([127, 0, 0, 1], 0))).build();
    let prom = start_prometheus_metric_exporter(options).map_err(|e| anyhow!("Temporal SDK metrics exporter: {e}"))?;
    let telemetry = TelemetryOptions::builder().metrics(prom.meter as Arc<dyn CoreMeter>).build();
    Ok(SdkMetrics { addr: prom.bound_addr, telemetry })
}

/// The exporter's page, or why it could not be read.
pub async fn fetch(http: &reqwest::Client, addr: SocketAddr) -> Result<String, reqwest::Error> {
    let response = http.get(format!("http://{addr}/metrics")).timeout(Duration::from_secs(5)).send().await?;
    response.error_for_status()?.text().await
}
