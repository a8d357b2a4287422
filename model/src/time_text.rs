//! Time as text, the one conversion every crate uses: unix milliseconds to RFC 3339 UTC
//! (`2026-05-01T22:00:00Z`, `.sss` kept when non-zero) and RFC 3339 text with any offset back to
//! unix milliseconds.
//!
//! Pure: it must not read a clock (callers pass `now`).

use chrono::{DateTime, SecondsFormat};
use thiserror::Error;

/// Text that is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("`{text}` is not an RFC 3339 timestamp like 2026-01-01T00:00:00Z ({reason})")]
pub struct TimeTextError {
    /// The rejected text, as given.
    pub text: String,
    reason: String,
}

/// `ms` as `YYYY-MM-DDTHH:MM:SSZ` (UTC; `.sss` kept when non-zero). Instants chrono cannot
/// represent are written as `<ms> ms`.
pub fn rfc3339_utc(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
        .unwrap_or_else(|| format!("{ms} ms"))
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` to unix milliseconds (sub-millisecond digits are
/// dropped). Surrounding white space is ignored.
pub fn parse_rfc3339(text: &str) -> Result<i64, TimeTextError> {
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.timestamp_millis())
        .map_err(|e| TimeTextError { text: text.to_string(), reason: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_777_672_800_500), "2026-05-01T22:00:00.500Z");
        assert_eq!(rfc3339_utc(-1000), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn parses_offsets_and_round_trips() {
        assert_eq!(parse_rfc3339("2026-05-01T22:00:00Z"), Ok(1_777_672_800_000));
        assert_eq!(parse_rfc3339(" 2026-05-02T00:00:00+02:00 "), Ok(1_777_672_800_000));
        assert_eq!(parse_rfc3339("2026-05-01T22:00:00.500Z"), Ok(1_777_672_800_500));
        for ms in [0, 1_777_672_800_500, -1000] {
            assert_eq!(parse_rfc3339(&rfc3339_utc(ms)), Ok(ms));
        }
    }

    #[test]
    fn refuses_what_is_not_rfc3339() {
        for bad in ["", "soon", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01T00:00:00+0000", "2026-02-30T00:00:00Z"]
        {
            let e = parse_rfc3339(bad).expect_err(bad);
            assert!(e.to_string().contains(&format!("`{bad}`")), "{e}");
        }
    }
}
