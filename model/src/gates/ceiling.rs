//! The site-wide update ceiling (seed "Site capacity"): how many automatic updates may run at
//! once, from `machine_updater.max_concurrent_machine_updates_absolute` / `_percent` and the
//! fleet's health, with one operator-readable line saying how the number came about.
//!
//! Owns the arithmetic only (integer, no float): percent is `ceil(percent × total / 100)` minus
//! the unhealthy hosts, saturating at 0; both set → the smaller; neither → 0. It must not count
//! in-flight work or pick hosts (see `gates::pass`).

use serde::{Deserialize, Serialize};

/// Host counts of the fleet the percentage applies to. Named fields on purpose: NICo's percent
/// ceiling is always zero because its two positional integers are passed in reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FleetHealth {
    /// Every managed host considered by the pass.
    pub total: u32,
    /// Hosts currently unhealthy (subtracted from the percentage ceiling).
    pub unhealthy: u32,
}

/// The two `[machine_updater]` limits as configured (`None` = unset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CeilingLimits {
    /// `max_concurrent_machine_updates_absolute`.
    pub absolute: Option<u32>,
    /// `max_concurrent_machine_updates_percent` (1..=100 once validated).
    pub percent: Option<u32>,
}

/// The usable ceiling and how it was computed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Ceiling {
    pub limit: u32,
    /// One operator-readable line, e.g.
    /// `min(absolute 10, percent: ceil(20% of 60 hosts) = 12 − 2 unhealthy = 10) = 10`.
    pub how: String,
}

/// Text of the ceiling when neither limit is set (S13).
pub const BOTH_UNSET: &str = "both max_concurrent_machine_updates_absolute and \
max_concurrent_machine_updates_percent are unset: the ceiling is 0 and no automatic update starts";

/// The site ceiling for `limits` over `fleet`.
pub fn ceiling(limits: CeilingLimits, fleet: FleetHealth) -> Ceiling {
    match (limits.absolute, limits.percent) {
        (None, None) => Ceiling { limit: 0, how: BOTH_UNSET.to_string() },
        (Some(a), None) => {
            Ceiling { limit: a, how: format!("absolute {a} (max_concurrent_machine_updates_percent is unset) = {a}") }
        }
        (None, Some(p)) => {
            let (limit, how) = percent_ceiling(p, fleet);
            Ceiling { limit, how: format!("{how} (max_concurrent_machine_updates_absolute is unset)") }
        }
        (Some(a), Some(p)) => {
            let (by_percent, how) = percent_ceiling(p, fleet);
            let limit = a.min(by_percent);
            Ceiling { limit, how: format!("min(absolute {a}, {how}) = {limit}") }
        }
    }
}

/// `ceil(percent × total / 100) − unhealthy`, saturating at 0, and its explanation.
fn percent_ceiling(percent: u32, fleet: FleetHealth) -> (u32, String) {
    let share = (u64::from(percent) * u64::from(fleet.total)).div_ceil(100);
    let limit = share.saturating_sub(u64::from(fleet.unhealthy));
    let limit = u32::try_from(limit).unwrap_or(u32::MAX);
    let floor = if share < u64::from(fleet.unhealthy) { " (floored at 0)" } else { "" };
    let how = format!(
        "percent: ceil({percent}% of {} hosts) = {share} − {} unhealthy = {limit}{floor}",
        fleet.total, fleet.unhealthy
    );
    (limit, how)
}
