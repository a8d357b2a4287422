//! The end-to-end tests of hostfw, one test binary: each module drives real sites (a Temporal dev
//! server, a bmc-sim fleet, a site database, the worker) through the test kit (`hostfw_tests`,
//! `tests/src/`). Each module's doc says what it covers. The chaos suite (`chaos`) is ignored
//! here; `make chaos` runs it (`cargo test -p hostfw-tests --test e2e -- --ignored chaos::`).
//!
//! The child-process tests need the worker binary: `cargo build --workspace --bins` (or
//! `HOSTFW_WORKER_BIN`).

mod abort;
mod api;
mod api_fuzz;
mod api_verbs;
mod approval_deadline;
mod brakes;
mod canary_waves;
mod chaos;
mod compliance;
mod compose;
mod config_check;
mod durability;
mod error_budget;
mod failure_domains;
mod history_shape;
mod host_reprovision;
mod live_config;
mod logs;
mod manager;
mod notifications;
mod orphans;
mod profiles;
mod prometheus;
mod recovery;
mod replay;
mod routes;
mod security;
mod signal_sequences;
mod slow_inventory;
mod uploads;
mod window_fit;
mod worker_startup;
mod worker_upgrade;
