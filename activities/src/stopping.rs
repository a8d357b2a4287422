//! The worker is stopping: a flag the worker raises when its shutdown begins. The worker's own
//! site tasks (keeping the site workflows running, watching the catalog) end on it. An activity that
//! only waits for time to pass (the notifier's round, which runs a minute at a time) watches it
//! and ends early with what it has done, so a worker stops in seconds instead of waiting out the
//! round; the workflow schedules the next round, which another worker takes.
//!
//! Owns the flag. An activity that changes a host (a flash, an upload, a reset) must not watch
//! it: such work finishes before the worker stops (a flash is never interrupted).

use std::sync::Arc;

use tokio::sync::watch;

/// Raised once, when the worker begins to stop; shared by every clone of the `Deps`.
#[derive(Clone)]
pub struct Stopping(Arc<watch::Sender<bool>>);

impl Default for Stopping {
    fn default() -> Self {
        Stopping(Arc::new(watch::channel(false).0))
    }
}

impl Stopping {
    /// The worker begins to stop.
    pub fn begin(&self) {
        self.0.send_replace(true);
    }

    /// Whether the worker is stopping.
    pub fn is_stopping(&self) -> bool {
        *self.0.borrow()
    }

    /// A receiver of the flag, for a task that selects on it (`wait_for(|s| *s)`).
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.0.subscribe()
    }

    /// Resolves once the worker is stopping (at once when it already is).
    pub async fn wait(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|stopping| *stopping).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_clone_sees_the_worker_stop() {
        let stopping = Stopping::default();
        let clone = stopping.clone();
        assert!(!clone.is_stopping());
        let waiter = tokio::spawn(async move { clone.wait().await });
        stopping.begin();
        waiter.await.unwrap();
        assert!(stopping.is_stopping());
        // Already stopping: resolves at once.
        stopping.wait().await;
    }
}
