//! Config durations: an integer means seconds; a string is a whole number with a unit suffix
//! (`ms`, `s`, `m`, `h`), e.g. `"500ms"`, `"90s"`, `"60m"`, `"2h"`.
//!
//! Owns parsing, formatting and the serde helper (`#[serde(with = "crate::duration::serde_duration")]`).
//! It must not know which keys are durations or what their defaults are (that is `config`).

use std::time::Duration;

use crate::error::DurationError;

/// Parses `"90s"`, `"60m"`, `"1h"`, `"500ms"`. A bare number string is rejected (write the unit).
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let fail = |problem: &str| DurationError { value: text.to_string(), problem: problem.to_string() };
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| fail("missing unit; write e.g. \"30s\", \"60m\", \"2h\" or \"500ms\""))?;
    let (digits, unit) = trimmed.split_at(split);
    if digits.is_empty() {
        return Err(fail("expected a whole number followed by ms, s, m or h"));
    }
    let n: u64 = digits.parse().map_err(|_| fail("number too large"))?;
    let per_unit_ms: u64 = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(fail("unknown unit; use ms, s, m or h")),
    };
    let ms = n.checked_mul(per_unit_ms).ok_or_else(|| fail("number too large"))?;
    Ok(Duration::from_millis(ms))
}

/// Formats a duration in the largest unit that represents it exactly (`"2h"`, `"90s"`, `"1500ms"`).
/// Sub-millisecond parts are dropped. `parse_duration(&format_duration(d))` gives `d` back.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".to_string();
    }
    for (unit, size) in [("h", 3_600_000u128), ("m", 60_000), ("s", 1_000)] {
        if ms % size == 0 {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// Serde helper for `std::time::Duration` fields in the config.
pub mod serde_duration {
    use std::fmt;
    use std::time::Duration;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        d.deserialize_any(DurationVisitor)
    }

    struct DurationVisitor;

    impl Visitor<'_> for DurationVisitor {
        type Value = Duration;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a duration: seconds as an integer, or a string like \"30s\", \"60m\", \"2h\", \"500ms\"")
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
            Ok(Duration::from_secs(v))
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
            u64::try_from(v)
                .map(Duration::from_secs)
                .map_err(|_| E::custom(format!("invalid duration `{v}`: must not be negative")))
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
            super::parse_duration(v).map_err(E::custom)
        }
    }
}
