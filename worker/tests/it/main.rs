//! The integration tests of `hostfw-worker`, one test binary: one module per concern
//! (each module's doc says what it covers).

mod common;

mod activation;
mod artifact_server;
mod crawl;
mod health;
mod metrics;
mod metrics_outage;
mod stopping;
