//! Giving back a site-database lease (a script lock, an upload slot) when the first try failed.
//!
//! A release that fails because the site database blinked (a PostgreSQL restart, a dropped
//! connection) must not leave the lease to its expiry: an upload slot handed to a BMC task holds
//! for the whole task bound (an hour by default), and a script lock left behind makes the next
//! run wait. So the release is tried again in the background, with a doubling pause (0.5 s up to
//! 10 s), for at most [`RELEASE_RETRY_FOR`]; the activity that held the lease does not wait for it.
//! A worker that dies meanwhile leaves the lease to its expiry, as before.
//!
//! This file owns only the retrying; what "release" means, and that a release is fenced (it never
//! frees a newer holder's lease), belongs to the caller's store call.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use hostfw_store::StoreError;

use crate::tunables::RELEASE_RETRY_FOR;

/// First pause before a retry; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(500);
/// Longest pause between two retries.
const MAX_PAUSE: Duration = Duration::from_secs(10);

/// Try `release` again in the background until it succeeds or [`RELEASE_RETRY_FOR`] has passed;
/// `what` names the lease in the logs. Needs a Tokio runtime (activities run in one).
pub fn in_background<F, Fut>(what: String, release: F) -> tokio::task::JoinHandle<bool>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), StoreError>> + Send + 'static,
{
    tokio::spawn(retry(what, release, RELEASE_RETRY_FOR))
}

/// The loop behind [`in_background`]: true once a try succeeded, false when `give_up_after`
/// passed first.
pub async fn retry<F, Fut>(what: String, mut release: F, give_up_after: Duration) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), StoreError>>,
{
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    let mut tries = 0u32;
    loop {
        tokio::time::sleep(pause).await;
        if started.elapsed() >= give_up_after {
            break;
        }
        tries += 1;
        match release().await {
            Ok(()) => {
                tracing::info!(lease = %what, tries, "released after the site database came back");
                return true;
            }
            Err(e) => tracing::debug!(lease = %what, error = %hostfw_model::error_chain(&e), "release failed again"),
        }
        pause = (pause * 2).min(MAX_PAUSE);
    }
    tracing::warn!(lease = %what, tries, "gave up releasing; the lease frees itself when it expires");
    false
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use super::*;

    fn outage(failures: u32) -> (Arc<AtomicU32>, impl FnMut() -> std::future::Ready<Result<(), StoreError>>) {
        let calls = Arc::new(AtomicU32::new(0));
        let seen = calls.clone();
        let release = move || {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            std::future::ready(if n < failures {
                Err(StoreError::Database {
                    op: "upload_slot_release",
                    id: "h".to_string(),
                    source: sqlx::Error::PoolTimedOut,
                })
            } else {
                Ok(())
            })
        };
        (calls, release)
    }

    #[tokio::test(start_paused = true)]
    async fn a_release_that_failed_is_tried_until_the_database_answers() {
        let (calls, release) = outage(4);
        assert!(retry("slot 3".to_string(), release, Duration::from_secs(60)).await);
        assert_eq!(calls.load(Ordering::SeqCst), 5, "four failures, then the release that worked, then nothing");
    }

    #[tokio::test(start_paused = true)]
    async fn a_release_gives_up_after_its_bound_and_says_so() {
        let (calls, release) = outage(u32::MAX);
        assert!(!retry("slot 3".to_string(), release, Duration::from_secs(30)).await);
        // Tries at 0.5, 1.5, 3.5, 7.5, 15.5 and 25.5 s; the next would be at 35.5 s, past the bound.
        assert_eq!(calls.load(Ordering::SeqCst), 6);
    }
}
