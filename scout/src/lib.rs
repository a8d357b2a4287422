//! Scout, the hostfw host agent: a Temporal activity worker on each host's own task queue
//! (`scout/<machine-id>`) that downloads a packaged upgrade script and its artifacts, verifies
//! the package's ed25519 signature and their SHA-256 digests, runs the script with its timeout and reports exit code and output
//! (the contract is `hostfw_workflows::scout`).
//!
//! Owns re-exporting the public API; each module's doc says the one concept it owns.

mod activity;
mod agent;
mod download;
mod error;
pub mod ledger;
pub mod process;
mod settings;
mod signature;
mod upgrade;

pub use activity::{ScoutActivitiesImpl, AGENT_FAILURE_TYPE};
pub use agent::{run_agent, run_agent_with};
pub use hostfw_connect::{DEFAULT_NAMESPACE, DEFAULT_TEMPORAL_ADDRESS};

/// Connect Scout: `address` and `namespace` are the command-line flags, if given; then Temporal's
/// standard environment settings; then `localhost:7233` / `default` (see `hostfw_connect`).
pub async fn connect(
    address: Option<&str>,
    namespace: Option<&str>,
    identity: &str,
) -> Result<temporalio_client::Client, hostfw_connect::ConnectError> {
    let endpoint = hostfw_connect::Endpoint {
        address,
        namespace,
        default_address: DEFAULT_TEMPORAL_ADDRESS,
        default_namespace: DEFAULT_NAMESPACE,
    };
    hostfw_connect::connect(endpoint, identity).await
}
pub use error::{ScoutError, TaskFailure};
pub use settings::{script_env, ScoutSettings, DEFAULT_STATE_DIR, TASK_ENV};
pub use signature::TrustedKey;
pub use upgrade::DOWNLOAD_DIR_NAME;
