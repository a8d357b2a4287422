//! Telling the Machine Update Manager that something it reads changed (a window, an override,
//! the runtime catalog), so the change applies within a second instead of at its next pass.

use hostfw_activities::site_link;

use crate::context::Context;

/// Wake the Machine Update Manager after a change it reads (a window, an override, the catalog).
/// Best effort: without a reachable Temporal server the change still applies at the next pass.
pub async fn wake(ctx: &Context, reason: &str) {
    let attempt = async {
        let client = ctx.temporal().await?;
        site_link::wake_manager(&client, reason).await;
        anyhow::Ok(())
    };
    match tokio::time::timeout(std::time::Duration::from_secs(5), attempt).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "could not wake the machine update manager; the change applies at its next pass")
        }
        Err(_) => {
            tracing::warn!("the Temporal server did not answer in 5 s; the change applies at the manager's next pass")
        }
    }
}
