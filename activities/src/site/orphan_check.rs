//! `OrphanCheck`: how often one worker's scheduler passes look for requests left without a
//! workflow (`repair::requests_without_workflow`, a Temporal visibility list).
//!
//! Owns only the last time the check ran and the "is it due" decision. It must not run the check
//! itself (that is `manager_pass`) nor decide what counts as an orphan (that is `repair`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The last check of this process. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct OrphanCheck {
    last: Arc<Mutex<Option<Instant>>>,
}

impl OrphanCheck {
    /// Whether a check is due at `now` (none ran yet, or the last ran `every` ago or more); a
    /// `true` answer records `now` as the last check, so of concurrent callers only one runs it.
    pub fn due(&self, now: Instant, every: Duration) -> bool {
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match *last {
            Some(at) if now.saturating_duration_since(at) < every => false,
            _ => {
                *last = Some(now);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_check_is_due_then_none_until_the_period_passed() {
        let check = OrphanCheck::default();
        let t0 = Instant::now();
        let every = Duration::from_secs(10);
        assert!(check.due(t0, every), "no check ran yet");
        assert!(!check.due(t0 + Duration::from_secs(3), every), "3 s after a check");
        assert!(!check.clone().due(t0 + Duration::from_millis(9_999), every), "clones share the last check");
        assert!(check.due(t0 + every, every), "a whole period later");
        assert!(!check.due(t0 + every + Duration::from_secs(1), every), "the check at t0 + 10 s counts");
    }
}
