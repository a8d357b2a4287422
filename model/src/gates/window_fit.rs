//! Window fit (`[machine_updater] window_fit_min_samples`): a host whose model needs an explicit
//! start is not started inside its update window when its update would likely overrun the
//! window's end. "Likely" is the 90th percentile (nearest rank) of the durations of past update
//! runs of the same vendor, model and component set, once at least `min_samples` of them are on
//! record; with fewer, or with the rule off (`0`), nothing is estimated and the window alone
//! decides (S10).
//!
//! Owns the estimate and the gate's rule. It must not read the runs (the site database keeps
//! them, see `Store::update_durations`) nor a clock: the caller passes `now_ms`.

use serde::{Deserialize, Serialize};

use super::budget::Target;
use super::firmware::FirmwareStatus;
use super::host_view::HostView;
use super::reason::SkipReason;
use crate::ComponentType;

/// The past runs kept (and read) per vendor, model and component set: the newest ones.
pub const WINDOW_FIT_RUNS_KEPT: u32 = 100;

/// The durations of past update runs of one vendor, model and component set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateDurations {
    pub vendor: String,
    pub model: String,
    /// The components a run installed, in `component_set` order.
    pub components: Vec<ComponentType>,
    /// How long each run took (from entering `HostReprovision` to the restore), ms.
    pub durations_ms: Vec<i64>,
}

/// What a host's update is expected to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Estimate {
    /// The 90th percentile (nearest rank) of the past runs' durations.
    pub p90_ms: i64,
    /// How many past runs it is taken from.
    pub samples: u32,
}

/// The canonical component set of `targets` (sorted by name, without repeats): the key past
/// runs are recorded and looked up under.
pub fn component_set(targets: &[Target]) -> Vec<ComponentType> {
    let mut set: Vec<ComponentType> = targets.iter().map(|t| t.component).collect();
    set.sort_by_key(|c| c.to_string());
    set.dedup();
    set
}

/// The 90th percentile of `durations_ms` by nearest rank (the smallest value at or above 90 % of
/// them); `None` when there are none.
pub fn p90(durations_ms: &[i64]) -> Option<i64> {
    let mut sorted = durations_ms.to_vec();
    sorted.sort_unstable();
    let rank = (sorted.len() * 9).div_ceil(10);
    sorted.get(rank.checked_sub(1)?).copied()
}

/// The estimate for an update installing `targets`, from the runs of the same vendor, model and
/// component set; `None` when fewer than `min_samples` runs (or `min_samples` is 0: the rule is
/// off, or nothing would be installed).
pub fn estimate(history: &[UpdateDurations], targets: &[Target], min_samples: u32) -> Option<Estimate> {
    let first = targets.first()?;
    if min_samples == 0 {
        return None;
    }
    let components = component_set(targets);
    let runs =
        history.iter().find(|h| h.vendor == first.vendor && h.model == first.model && h.components == components)?;
    let samples = u32::try_from(runs.durations_ms.len()).unwrap_or(u32::MAX);
    if samples < min_samples {
        return None;
    }
    Some(Estimate { p90_ms: p90(&runs.durations_ms)?, samples })
}

/// A host inside its explicit update window waits when its estimated update would end after the
/// window closes (`SkipReason::WindowTooShort`). Hosts whose model needs no explicit start, and
/// hosts outside their window (the window gate names those), pass.
pub(super) fn fit_gate(
    host: &HostView,
    history: &[UpdateDurations],
    min_samples: u32,
    now_ms: i64,
) -> Result<(), SkipReason> {
    let needed = matches!(host.firmware, FirmwareStatus::Drifted { explicit_start_needed: true, .. });
    let Some(window) = host.window.filter(|w| needed && w.contains(now_ms)) else { return Ok(()) };
    let Some(estimate) = estimate(history, &host.targets, min_samples) else { return Ok(()) };
    let remaining_ms = window.end_ms - now_ms;
    if estimate.p90_ms <= remaining_ms {
        return Ok(());
    }
    let first = &host.targets[0];
    Err(SkipReason::WindowTooShort {
        vendor: first.vendor.clone(),
        model: first.model.clone(),
        components: component_set(&host.targets),
        estimate,
        window,
        remaining_ms,
    })
}

/// A duration for an operator, to the second: `"2h 05m"`, `"59m 48s"`, `"42s"`.
pub fn span_text(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m {sec:02}s"),
        (h, min, _) => format!("{h}h {min:02}m"),
    }
}
