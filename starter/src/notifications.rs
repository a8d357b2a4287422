//! `notifications list [--limit N]`: the recent webhook events (newest first) and each webhook's
//! delivery state, read from the site database's outbox.
//!
//! Owns reading and printing them; it must not send, retry or change any delivery (the
//! worker's `SiteNotifier` does).

use crate::context::Context;
use crate::output;

/// `notifications list`.
pub async fn list(ctx: &Context, limit: u32) -> anyhow::Result<()> {
    let records = ctx.store.notification_list(limit).await?;
    let mut rows = Vec::new();
    for r in &records {
        let deliveries = if r.deliveries.is_empty() {
            vec!["(no webhook)".to_string()]
        } else {
            r.deliveries
                .iter()
                .map(|d| {
                    let mut text = format!("{}: {} ({} attempts)", d.webhook, d.state, d.attempts);
                    if let Some(next) = d.next_attempt_at_ms {
                        text.push_str(&format!(", next {}", output::time(next)));
                    }
                    if let Some(e) = &d.last_error {
                        text.push_str(&format!(", last error: {e}"));
                    }
                    text
                })
                .collect()
        };
        rows.push(vec![
            output::time(r.event.created_at_ms),
            r.event.kind.to_string(),
            r.event.subject.clone(),
            r.event.id.clone(),
            deliveries.join("; "),
        ]);
    }
    output::print(ctx.format, &records, &["WHEN", "KIND", "SUBJECT", "EVENT ID", "DELIVERIES"], rows)
}
