//! Times of `managed-host start-updates --start/--end` and the window they make.
//!
//! Owns the accepted forms: the seed's `YYYY-MM-DDTHH:MM:SS+0000` (explicit offset, ±HHMM), RFC 3339
//! as hostfw prints times (`2026-12-01T22:00:00Z`, `...+02:00`, fractional seconds allowed), and
//! `YYYY-MM-DDTHH:MM:SS` (local time; a local time that is ambiguous or skipped by a DST change is
//! refused), the defaults (start = now, end = start + 24 h) and the
//! checks (start before end, end not in the past). Pure: `now` and the local-time rule are
//! parameters, so tests are deterministic. It must not touch the site database.

use anyhow::{anyhow, bail};
use chrono::{DateTime, FixedOffset, LocalResult, NaiveDateTime, TimeZone};
use hostfw_model::TimeWindow;

/// Length of a window without `--end`.
pub const DEFAULT_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;

const WITH_OFFSET: &str = "%Y-%m-%dT%H:%M:%S%z";
const LOCAL: &str = "%Y-%m-%dT%H:%M:%S";
const EXPECTED: &str = "expected YYYY-MM-DDTHH:MM:SSZ or YYYY-MM-DDTHH:MM:SS+00:00 (RFC 3339), \
    YYYY-MM-DDTHH:MM:SS+0000 (explicit UTC offset) or YYYY-MM-DDTHH:MM:SS (local time)";

/// The production local-time rule: the machine's time zone (`chrono::Local`).
pub fn system_local(naive: NaiveDateTime) -> LocalResult<DateTime<FixedOffset>> {
    chrono::Local.from_local_datetime(&naive).map(|t| t.fixed_offset())
}

pub use hostfw_model::rfc3339_utc;

/// Parses one `--<flag>` value into unix milliseconds.
pub fn parse_time<L>(flag: &str, text: &str, local: L) -> anyhow::Result<i64>
where
    L: Fn(NaiveDateTime) -> LocalResult<DateTime<FixedOffset>>,
{
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_str(text, WITH_OFFSET) {
        return Ok(t.timestamp_millis());
    }
    if let Ok(ms) = hostfw_model::parse_rfc3339(text) {
        return Ok(ms);
    }
    let naive =
        NaiveDateTime::parse_from_str(text, LOCAL).map_err(|e| anyhow!("--{flag} {text:?}: {EXPECTED} ({e})"))?;
    match local(naive) {
        LocalResult::Single(t) => Ok(t.timestamp_millis()),
        LocalResult::Ambiguous(a, b) => bail!(
            "--{flag} {text:?}: this local time happens twice (a daylight-saving change): at {} and \
             at {}; give an explicit offset, e.g. {}",
            rfc3339_utc(a.timestamp_millis()),
            rfc3339_utc(b.timestamp_millis()),
            a.format(WITH_OFFSET)
        ),
        LocalResult::None => bail!(
            "--{flag} {text:?}: this local time does not exist (skipped by a daylight-saving \
             change); give an explicit offset, e.g. {text}+0000"
        ),
    }
}

/// The window for `--start`/`--end` as given at `now_ms`.
pub fn resolve_window<L>(start: Option<&str>, end: Option<&str>, now_ms: i64, local: L) -> anyhow::Result<TimeWindow>
where
    L: Fn(NaiveDateTime) -> LocalResult<DateTime<FixedOffset>>,
{
    let start_ms = match start {
        Some(text) => parse_time("start", text, &local)?,
        None => now_ms,
    };
    let end_ms = match end {
        Some(text) => parse_time("end", text, &local)?,
        None => start_ms.saturating_add(DEFAULT_WINDOW_MS),
    };
    let end_label = match end {
        Some(text) => format!("--end {text:?}"),
        None => "the default end (start + 24 h)".to_string(),
    };
    if start_ms >= end_ms {
        bail!(
            "the window must start before it ends: start {} is not before {end_label} = {}",
            rfc3339_utc(start_ms),
            rfc3339_utc(end_ms)
        );
    }
    if end_ms < now_ms {
        bail!(
            "the window would end in the past: {end_label} = {} is before now ({})",
            rfc3339_utc(end_ms),
            rfc3339_utc(now_ms)
        );
    }
    Ok(TimeWindow { start_ms, end_ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-03-01T12:00:00Z.
    const NOW: i64 = 1_772_366_400_000;
    const HOUR: i64 = 3_600_000;

    fn plus_two(naive: NaiveDateTime) -> LocalResult<DateTime<FixedOffset>> {
        FixedOffset::east_opt(2 * 3600).unwrap().from_local_datetime(&naive)
    }

    fn ambiguous(naive: NaiveDateTime) -> LocalResult<DateTime<FixedOffset>> {
        let a = FixedOffset::east_opt(-4 * 3600).unwrap().from_local_datetime(&naive).unwrap();
        let b = FixedOffset::east_opt(-5 * 3600).unwrap().from_local_datetime(&naive).unwrap();
        LocalResult::Ambiguous(a, b)
    }

    fn skipped(_: NaiveDateTime) -> LocalResult<DateTime<FixedOffset>> {
        LocalResult::None
    }

    #[test]
    fn now_constant_is_what_it_says() {
        assert_eq!(rfc3339_utc(NOW), "2026-03-01T12:00:00Z");
    }

    #[test]
    fn explicit_offsets() {
        assert_eq!(parse_time("start", "2026-03-01T12:00:00+0000", plus_two).unwrap(), NOW);
        assert_eq!(parse_time("start", "2026-03-01T14:00:00+0200", plus_two).unwrap(), NOW);
        assert_eq!(parse_time("start", "2026-03-01T07:00:00-0500", plus_two).unwrap(), NOW);
        assert_eq!(parse_time("start", " 2026-03-01T12:00:00+0000 ", plus_two).unwrap(), NOW);
    }

    /// Issue 13 finding 4: the times hostfw itself prints are accepted back.
    #[test]
    fn rfc3339_as_hostfw_prints_it() {
        assert_eq!(parse_time("start", "2026-03-01T12:00:00Z", plus_two).unwrap(), NOW);
        assert_eq!(parse_time("start", &rfc3339_utc(NOW), plus_two).unwrap(), NOW);
        assert_eq!(parse_time("start", "2026-03-01T14:00:00+02:00", plus_two).unwrap(), NOW);
        assert_eq!(parse_time("start", "2026-03-01T12:00:00.000Z", plus_two).unwrap(), NOW);
        assert_eq!(parse_time("end", "2026-03-01t12:00:00z", plus_two).unwrap(), NOW);
    }

    #[test]
    fn local_times_use_the_local_rule() {
        assert_eq!(parse_time("start", "2026-03-01T14:00:00", plus_two).unwrap(), NOW);
    }

    #[test]
    fn bad_formats_name_the_flag_and_the_forms() {
        for bad in ["2026-03-01 12:00:00", "tomorrow", "2026-02-30T00:00:00", "2026-03-01T12:00", "", "12:00:00"] {
            let err = parse_time("end", bad, plus_two).unwrap_err().to_string();
            assert!(err.starts_with(&format!("--end {bad:?}")), "{err}");
            assert!(err.contains("YYYY-MM-DDTHH:MM:SS+0000"), "{err}");
        }
    }

    #[test]
    fn ambiguous_and_skipped_local_times_are_refused() {
        let err = parse_time("start", "2026-11-01T01:30:00", ambiguous).unwrap_err().to_string();
        assert!(err.contains("happens twice"), "{err}");
        assert!(err.contains("2026-11-01T05:30:00Z") && err.contains("2026-11-01T06:30:00Z"), "{err}");
        assert!(err.contains("2026-11-01T01:30:00-0400"), "{err}");
        let err = parse_time("start", "2026-03-08T02:30:00", skipped).unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
    }

    #[test]
    fn defaults_are_now_and_a_day() {
        assert_eq!(
            resolve_window(None, None, NOW, plus_two).unwrap(),
            TimeWindow { start_ms: NOW, end_ms: NOW + 24 * HOUR }
        );
        let start = "2026-03-02T00:00:00+0000";
        assert_eq!(
            resolve_window(Some(start), None, NOW, plus_two).unwrap(),
            TimeWindow { start_ms: NOW + 12 * HOUR, end_ms: NOW + 36 * HOUR }
        );
        let end = "2026-03-01T13:00:00+0000";
        assert_eq!(
            resolve_window(None, Some(end), NOW, plus_two).unwrap(),
            TimeWindow { start_ms: NOW, end_ms: NOW + HOUR }
        );
    }

    #[test]
    fn a_window_that_started_earlier_is_fine_while_it_lasts() {
        let w = resolve_window(Some("2026-03-01T10:00:00+0000"), None, NOW, plus_two).unwrap();
        assert_eq!(w, TimeWindow { start_ms: NOW - 2 * HOUR, end_ms: NOW + 22 * HOUR });
    }

    #[test]
    fn start_must_be_before_end() {
        let err = resolve_window(Some("2026-03-03T00:00:00+0000"), Some("2026-03-02T00:00:00+0000"), NOW, plus_two)
            .unwrap_err()
            .to_string();
        assert!(err.contains("must start before it ends"), "{err}");
        assert!(err.contains("--end \"2026-03-02T00:00:00+0000\""), "{err}");
        let same = "2026-03-03T00:00:00+0000";
        assert!(resolve_window(Some(same), Some(same), NOW, plus_two).is_err());
    }

    #[test]
    fn end_must_not_be_in_the_past() {
        let err = resolve_window(Some("2026-02-01T00:00:00+0000"), Some("2026-02-02T00:00:00+0000"), NOW, plus_two)
            .unwrap_err()
            .to_string();
        assert!(err.contains("in the past"), "{err}");
        assert!(err.contains("2026-02-02T00:00:00Z") && err.contains("2026-03-01T12:00:00Z"), "{err}");
        let err = resolve_window(Some("2026-02-01T00:00:00+0000"), None, NOW, plus_two).unwrap_err().to_string();
        assert!(err.contains("default end"), "{err}");
    }
}
