//! `TimeWindow`: a span of time `[start_ms, end_ms)` in unix milliseconds. The one window type:
//! a host's update window (`managed-host start-updates`), the site's autoreboot period
//! (`machine_updater.instance_autoreboot_period`) and the workflow input that carries it.
//!
//! Owns the type, its time test, and the config form of a window (two RFC 3339 texts, parsed once
//! when the config loads). It must not read a clock: callers pass `now`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::time_text::{parse_rfc3339, rfc3339_utc};

/// `[start_ms, end_ms)` in unix milliseconds. Serialized as `{ "start_ms", "end_ms" }` (recorded
/// workflow histories hold this form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(description = "An update window: from `start` (included) to `end` (excluded)."))]
pub struct TimeWindow {
    pub start_ms: i64,
    pub end_ms: i64,
}

impl TimeWindow {
    /// A window, refused unless `start_ms < end_ms`.
    pub fn new(start_ms: i64, end_ms: i64) -> Result<TimeWindow, EmptyWindow> {
        if start_ms < end_ms {
            Ok(TimeWindow { start_ms, end_ms })
        } else {
            Err(EmptyWindow { start_ms, end_ms })
        }
    }

    /// True when `start_ms <= now_ms < end_ms`.
    pub fn contains(&self, now_ms: i64) -> bool {
        self.start_ms <= now_ms && now_ms < self.end_ms
    }
}

/// A window whose start is not before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("start {} is not before end {}", rfc3339_utc(*start_ms), rfc3339_utc(*end_ms))]
pub struct EmptyWindow {
    pub start_ms: i64,
    pub end_ms: i64,
}

impl std::fmt::Display for TimeWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} .. {}", rfc3339_utc(self.start_ms), rfc3339_utc(self.end_ms))
    }
}

/// One RFC 3339 timestamp of a config file, parsed when it is read (so its key is named in errors).
struct Rfc3339(i64);

impl<'de> Deserialize<'de> for Rfc3339 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse_rfc3339(&text).map(Rfc3339).map_err(serde::de::Error::custom)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowText {
    start: Rfc3339,
    end: Rfc3339,
}

#[derive(Serialize)]
struct WindowTextOut {
    start: String,
    end: String,
}

/// `#[serde(with = "crate::window::config_text")]` on an `Option<TimeWindow>` config key written
/// `{ start = "<RFC 3339>", end = "<RFC 3339>" }`.
pub mod config_text {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TimeWindow>, D::Error> {
        match Option::<WindowText>::deserialize(d)? {
            None => Ok(None),
            Some(w) => TimeWindow::new(w.start.0, w.end.0).map(Some).map_err(serde::de::Error::custom),
        }
    }

    pub fn serialize<S: Serializer>(w: &Option<TimeWindow>, s: S) -> Result<S::Ok, S::Error> {
        w.map(|w| WindowTextOut { start: rfc3339_utc(w.start_ms), end: rfc3339_utc(w.end_ms) }).serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_is_half_open_and_new_refuses_empty_windows() {
        let w = TimeWindow::new(10, 20).unwrap();
        assert!(!w.contains(9) && w.contains(10) && w.contains(19) && !w.contains(20));
        assert!(TimeWindow::new(20, 20).is_err());
        assert!(TimeWindow::new(0, 1_000).unwrap().to_string().starts_with("1970-01-01T00:00:00Z .. "));
    }
}
