//! The webhook notification series of a scrape (issue 27 item 7):
//! - `hostfw_notification_deliveries_pending`: deliveries neither delivered nor given up, plus
//!   events not yet fanned out to the webhooks (the outbox backlog);
//! - `hostfw_notification_deliveries_total{outcome}`: POST attempts by outcome (`delivered`,
//!   `failed`: retried later, `gave_up`), counted site-wide in the site database.
//!
//! Owns these series' names, help texts and labels (the outcome only, never a webhook URL). It
//! must stay pure: the caller reads the store.

use std::fmt::Write;

use hostfw_store::{NOTIFICATION_DELIVERIES_TOTAL, OUTCOME_DELIVERED, OUTCOME_FAILED, OUTCOME_GAVE_UP};

use super::render::header;

pub const PENDING: &str = "hostfw_notification_deliveries_pending";
pub const TOTAL: &str = "hostfw_notification_deliveries_total";

/// What a scrape read: the backlog and the counter rows (`Store::counter_list`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotificationSeries {
    pub pending: u64,
    pub delivered: i64,
    pub failed: i64,
    pub gave_up: i64,
}

impl NotificationSeries {
    /// The series from the backlog and the counter rows; absent counters are 0.
    pub fn of(pending: u64, counters: &[(String, String, i64)]) -> NotificationSeries {
        let get = |label: &str| {
            counters.iter().find(|(n, l, _)| n == NOTIFICATION_DELIVERIES_TOTAL && l == label).map_or(0, |(_, _, v)| *v)
        };
        NotificationSeries {
            pending,
            delivered: get(OUTCOME_DELIVERED),
            failed: get(OUTCOME_FAILED),
            gave_up: get(OUTCOME_GAVE_UP),
        }
    }
}

/// Append the notification series to `out`.
pub fn write(out: &mut String, s: &NotificationSeries) {
    header(out, PENDING, "gauge", "Webhook deliveries not yet delivered nor given up (the notification outbox).");
    let _ = writeln!(out, "{PENDING} {}", s.pending);
    header(out, TOTAL, "counter", "Webhook delivery attempts by outcome (delivered, failed and retried, gave_up).");
    for (outcome, n) in [(OUTCOME_DELIVERED, s.delivered), (OUTCOME_FAILED, s.failed), (OUTCOME_GAVE_UP, s.gave_up)] {
        let _ = writeln!(out, "{TOTAL}{{outcome=\"{outcome}\"}} {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_is_written_from_the_counter_rows() {
        let rows = vec![
            (NOTIFICATION_DELIVERIES_TOTAL.to_string(), OUTCOME_DELIVERED.to_string(), 3),
            (NOTIFICATION_DELIVERIES_TOTAL.to_string(), OUTCOME_FAILED.to_string(), 2),
            ("firmware_updates_total".to_string(), OUTCOME_FAILED.to_string(), 9),
        ];
        let mut out = String::new();
        write(&mut out, &NotificationSeries::of(4, &rows));
        assert!(out.contains("\nhostfw_notification_deliveries_pending 4\n"), "{out}");
        assert!(out.contains("hostfw_notification_deliveries_total{outcome=\"delivered\"} 3\n"), "{out}");
        assert!(out.contains("hostfw_notification_deliveries_total{outcome=\"failed\"} 2\n"), "{out}");
        assert!(out.contains("hostfw_notification_deliveries_total{outcome=\"gave_up\"} 0\n"), "{out}");
    }
}
