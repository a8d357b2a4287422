//! Wall-clock formatting for Redfish timestamps and `f64` seconds → `Duration`. Nothing else.

use std::time::Duration;

/// Now as a Redfish DateTimeOffset, e.g. `2025-01-31T12:00:00+00:00`.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

/// Fleet-file seconds (validated finite and non-negative) as a `Duration`.
pub fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::ZERO)
}
