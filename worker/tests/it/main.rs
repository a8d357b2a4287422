//! The integration tests of `hostfw-worker`, one test binary: one module per concern
//! (each module's doc says what it covers). They test the worker itself (its servers, probes,
//! metrics and wiring); tests of one activity called directly live in `activities/tests/it`.

mod common;

mod artifact_server;
mod health;
mod metrics;
mod metrics_outage;
