//! Waiting for the worker's dependencies at start: Temporal and the site database may come up
//! after the worker (compose, systemd, a restarted cluster), so the worker retries them with a
//! capped exponential backoff (`tuning::STARTUP_RETRY_*`) instead of exiting.
//!
//! Owns the backoff, the retry loop and which failures are worth retrying. It must not decide
//! what a connection is (`connect`, `hostfw_store::Store::connect`) or how the process exits.
//! Every failed attempt is one WARN line with the error chain (which names the address); success
//! is one INFO line. A stop request (SIGTERM, Ctrl-C) ends the wait at once.

use std::future::Future;
use std::time::Duration;

use hostfw_connect::ConnectError;
use hostfw_model::{error_chain, SiteConfig};
use hostfw_store::{Store, StoreError};
use temporalio_client::Client;
use tokio::sync::watch;

use crate::tuning::{STARTUP_RETRY_FIRST, STARTUP_RETRY_MAX};

/// Delays between attempts: `first`, doubling, never above `max`.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    pub fn new(first: Duration, max: Duration) -> Backoff {
        Backoff { next: first.min(max), max }
    }

    /// The delay before the next attempt; the one after it doubles (capped).
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(self.max);
        delay
    }
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff::new(STARTUP_RETRY_FIRST, STARTUP_RETRY_MAX)
    }
}

/// How waiting for a dependency ended without it.
#[derive(Debug, thiserror::Error)]
pub enum StartupError<E: std::error::Error + 'static> {
    /// A stop was requested while waiting.
    #[error("stopped while waiting for {what}")]
    Stopped { what: &'static str },
    /// The failure will not go away by retrying (a bad address, a refused password, ...).
    #[error(transparent)]
    Fatal(E),
}

/// Try `attempt` until it succeeds, a failure is not `retryable`, or `stop` turns true. `what`
/// names the dependency in the log ("Temporal", "the site database").
pub async fn retry<T, E, F, Fut>(
    what: &'static str,
    mut backoff: Backoff,
    stop: &mut watch::Receiver<bool>,
    retryable: impl Fn(&E) -> bool,
    mut attempt: F,
) -> Result<T, StartupError<E>>
where
    E: std::error::Error + 'static,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    for n in 1u64.. {
        if *stop.borrow() {
            return Err(StartupError::Stopped { what });
        }
        let result = tokio::select! {
            r = attempt() => r,
            _ = stop.wait_for(|s| *s) => return Err(StartupError::Stopped { what }),
        };
        match result {
            Ok(v) => {
                tracing::info!(attempts = n, "connected to {what}");
                return Ok(v);
            }
            Err(e) if retryable(&e) => {
                let delay = backoff.next_delay();
                tracing::warn!(attempt = n, retry_in = ?delay, error = %error_chain(&e), "{what} is not reachable yet; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = stop.wait_for(|s| *s) => return Err(StartupError::Stopped { what }),
                }
            }
            Err(e) => return Err(StartupError::Fatal(e)),
        }
    }
    unreachable!("the attempt counter does not run out")
}

/// Connect to the site's Temporal server, retrying while it cannot be reached (a bad address or
/// bad environment settings fail at once).
pub async fn connect_temporal(
    site: &SiteConfig,
    identity: &str,
    stop: &mut watch::Receiver<bool>,
) -> Result<Client, StartupError<ConnectError>> {
    let retryable = |e: &ConnectError| matches!(e, ConnectError::Unreachable { .. });
    retry("Temporal", Backoff::default(), stop, retryable, || crate::connect::connect_endpoint(site, identity)).await
}

/// Open the site database, retrying while the failure is transient (connection refused, server
/// starting up); a refused password or a failed migration fails at once. An existing database
/// with no machines registered is a WARN, once (a created one is already one, from the store).
pub async fn open_store(
    site: &SiteConfig,
    stop: &mut watch::Receiver<bool>,
) -> Result<Store, StartupError<StoreError>> {
    let store =
        retry("the site database", Backoff::default(), stop, StoreError::is_transient, || Store::open_site(site))
            .await?;
    if store.created_file().is_none() {
        match store.emptiness_warning().await {
            Ok(Some(warning)) => tracing::warn!("{warning}"),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "could not count the registered machines"),
        }
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let mut b = Backoff::new(Duration::from_millis(500), Duration::from_secs(3));
        let delays: Vec<_> = (0..6).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(delays, [500, 1000, 2000, 3000, 3000, 3000]);
    }

    #[derive(Debug, thiserror::Error)]
    #[error("attempt failed ({0})")]
    struct Failed(bool);

    #[tokio::test(start_paused = true)]
    async fn retries_until_success_and_stops_on_a_fatal_error() {
        let (_tx, mut stop) = watch::channel(false);
        let mut calls = 0;
        let got = retry(
            "x",
            Backoff::default(),
            &mut stop,
            |e: &Failed| e.0,
            || {
                calls += 1;
                let n = calls;
                async move {
                    if n < 4 {
                        Err(Failed(true))
                    } else {
                        Ok(n)
                    }
                }
            },
        )
        .await;
        assert_eq!(got.unwrap(), 4);

        let mut calls = 0;
        let got: Result<(), _> = retry(
            "x",
            Backoff::default(),
            &mut stop,
            |e: &Failed| e.0,
            || {
                calls += 1;
                async { Err(Failed(false)) }
            },
        )
        .await;
        assert!(matches!(got, Err(StartupError::Fatal(Failed(false)))));
        assert_eq!(calls, 1, "a fatal error is not retried");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_ends_the_wait() {
        let (tx, mut stop) = watch::channel(false);
        let waiting =
            retry("x", Backoff::default(), &mut stop, |_: &Failed| true, || async { Err::<(), _>(Failed(true)) });
        let stopper = async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            tx.send(true).unwrap();
        };
        let (got, ()) = tokio::join!(waiting, stopper);
        assert!(matches!(got, Err(StartupError::Stopped { what: "x" })));
    }
}
