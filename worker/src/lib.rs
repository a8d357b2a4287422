//! The hostfw worker as a library: connect to Temporal (waiting for it and the site database at
//! start: `startup`), build the activity dependencies from the site config, serve firmware
//! artifacts, Prometheus metrics and the `/healthz` and `/readyz` probes (`health`), re-read the
//! site config on request (`live_config`), and run the worker until asked to stop.
//!
//! `main.rs` wires these together for the `hostfw-worker` binary; the end-to-end tests and the
//! CLI's demo use the same functions, so there is one way to start a worker.

pub mod artifact_server;
pub mod build_info;
pub mod connect;
pub mod health;
pub mod live_config;
pub mod metrics;
pub mod run;
pub mod site_workflows;
pub mod startup;
pub mod tuning;

pub use artifact_server::serve_artifacts;
pub use connect::connect;
pub use metrics::{serve_metrics, start_sdk_metrics, MetricsServer, SdkMetrics};
pub use run::{run_worker, run_worker_with_telemetry};
