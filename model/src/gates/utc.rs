//! Unix milliseconds as RFC 3339 UTC text (`2026-05-01T22:00:00Z`) for operator messages.
//!
//! Owns that one formatting rule (proleptic Gregorian calendar, integer arithmetic, no date
//! library). It must not parse text or read a clock.

/// `ms` as `YYYY-MM-DDTHH:MM:SSZ` (sub-second part dropped, `.sss` kept when non-zero).
pub fn format_utc_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let frac = if millis == 0 {
        String::new()
    } else {
        format!(".{millis:03}")
    };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{frac}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// Days since 1970-01-01 → (year, month, day) (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::format_utc_ms;

    #[test]
    fn known_instants() {
        assert_eq!(format_utc_ms(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc_ms(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc_ms(1_777_672_800_500), "2026-05-01T22:00:00.500Z");
        assert_eq!(format_utc_ms(-1000), "1969-12-31T23:59:59Z");
    }
}
