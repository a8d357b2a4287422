//! Waiting for a condition: poll it until it holds, or give up after a deadline. Tests and
//! benchmarks await conditions this way, never with fixed sleeps.

use std::future::Future;
use std::time::{Duration, Instant};

/// Poll `check` every `every` until it returns `Some`; an error naming `what` after `within`.
pub async fn wait_for<T, F, Fut>(what: &str, within: Duration, every: Duration, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            anyhow::bail!("timed out after {within:?} waiting for {what}");
        }
        tokio::time::sleep(every).await;
    }
}
