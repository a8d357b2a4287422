//! Target `time_args`: the short texts operators and the API pass as arguments.
//!
//! Owns feeding one text to the argument parsers production calls: `--start`/`--end` times and
//! the window they make (`hostfw_starter::window_time`, with a fixed "now" and a local-time rule
//! that has a skipped and a repeated hour, so the DST refusals run), RFC 3339 timestamps,
//! durations (`30s`, `6h`), a manifest's `not_after`, labels (`key=value`), freeze selectors, BMC
//! addresses and BMC lookups. Properties: no panic; a refusal is non-empty and names the flag or
//! quotes the input; what parses survives a round trip through its canonical text. It must not
//! touch the site database.

use chrono::{DateTime, FixedOffset, LocalResult, NaiveDateTime, TimeZone, Timelike};
use hostfw_model::gates::FreezeScope;
use hostfw_model::{parse_duration, parse_label, parse_not_after, parse_rfc3339, rfc3339_utc, BmcAddress, BmcLookup};
use hostfw_starter::window_time::{parse_time, resolve_window};

use crate::input::{assert_names, parts};

/// "Now" for the window checks: 2026-06-01T00:00:00Z.
const NOW_MS: i64 = 1_780_272_000_000;

/// A local-time rule like a DST zone's: UTC+1, except that 02:xx does not exist and 03:xx
/// happens twice (at +1 and +2).
fn local(naive: NaiveDateTime) -> LocalResult<DateTime<FixedOffset>> {
    let one = FixedOffset::east_opt(3600).expect("+01:00");
    let two = FixedOffset::east_opt(7200).expect("+02:00");
    match naive.hour() {
        2 => LocalResult::None,
        3 => match (one.from_local_datetime(&naive), two.from_local_datetime(&naive)) {
            (LocalResult::Single(a), LocalResult::Single(b)) => LocalResult::Ambiguous(a, b),
            _ => LocalResult::None,
        },
        _ => one.from_local_datetime(&naive),
    }
}

pub fn run(data: &[u8]) {
    let (which, rest) = crate::input::selector(data);
    let Some(text) = crate::input::text(rest) else { return };
    match which % 8 {
        0 => match parse_time("start", text, local) {
            Ok(ms) => {
                let _ = rfc3339_utc(ms);
            }
            Err(e) => assert_names("--start", &format!("{e:#}"), &["--start"]),
        },
        1 => {
            let given = parts(text, 2);
            let start = given.first().copied().filter(|s| !s.is_empty());
            let end = given.get(1).copied().filter(|s| !s.is_empty());
            if let Err(e) = resolve_window(start, end, NOW_MS, local) {
                assert_names("--start/--end", &format!("{e:#}"), &[]);
            }
        }
        2 => match parse_rfc3339(text) {
            Ok(ms) => {
                let canonical = rfc3339_utc(ms);
                assert_eq!(parse_rfc3339(&canonical), Ok(ms), "RFC 3339: {text:?} → {ms} → {canonical:?} → other");
            }
            Err(e) => assert_names("RFC 3339 time", &e.to_string(), &[text]),
        },
        3 => {
            if let Err(e) = parse_duration(text) {
                assert_names("duration", &e.to_string(), &[text]);
            }
        }
        4 => {
            if let Err(e) = parse_not_after(text) {
                assert_names("not_after", &e.to_string(), &[text.trim()]);
            }
        }
        5 => {
            if let Err(e) = parse_label(text) {
                assert_names("label", &e.to_string(), &[]);
            }
        }
        6 => {
            if let Err(e) = FreezeScope::parse(text) {
                assert_names("freeze selector", &e.to_string(), &[]);
            }
            if let Err(e) = FreezeScope::parse_stored(text) {
                assert_names("stored freeze scope", &e.to_string(), &[]);
            }
        }
        _ => {
            match text.parse::<BmcAddress>() {
                Ok(address) => {
                    let canonical = address.to_string();
                    let again = canonical.parse::<BmcAddress>();
                    assert_eq!(again.as_ref().ok(), Some(&address), "BMC address {text:?} → {canonical:?} → {again:?}");
                }
                Err(e) => assert_names("BMC address", &e.to_string(), &["invalid BMC address"]),
            }
            if let Err(e) = text.parse::<BmcLookup>() {
                assert_names("BMC lookup", &e.to_string(), &[]);
            }
        }
    }
}
