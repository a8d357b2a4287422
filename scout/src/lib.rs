//! Scout, the hostfw host agent: a Temporal activity worker on each host's own task queue
//! (`scout/<machine-id>`) that downloads a packaged upgrade script and its artifacts, verifies
//! their SHA-256 digests, runs the script with its timeout and reports exit code and output
//! (the contract is `hostfw_workflows::scout`).
//!
//! Owns re-exporting the public API; each module's doc says the one concept it owns.

mod activity;
mod agent;
mod connect;
mod download;
mod error;
pub mod ledger;
pub mod process;
mod script;
mod settings;
mod tail;
mod upgrade;

pub use activity::{ScoutActivitiesImpl, AGENT_FAILURE_TYPE};
pub use agent::{run_agent, run_agent_with};
pub use connect::{connect, DEFAULT_NAMESPACE, DEFAULT_TEMPORAL_ADDRESS};
pub use error::{ScoutError, TaskFailure};
pub use settings::{ScoutSettings, DEFAULT_STATE_DIR};
pub use upgrade::DOWNLOAD_DIR_NAME;
