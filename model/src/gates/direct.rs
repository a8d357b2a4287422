//! What the rollout gates say of a *direct* request (`host reprovision set`, `host reprovision
//! all-drifted --bypass-ceiling`): a direct request bypasses the site ceiling, update windows
//! and the auto-update policy, but not the brakes a rollout put on its targets. A host that
//! would install a paused target (error budget spent, or a canary wave that ended over it) or a
//! target whose open canary wave is full is refused unless the operator says
//! `--ignore-rollout-gates`. The operator's brakes hold it too: a freeze covering the host, or a
//! target an operator paused (`gates::freeze`).
//!
//! Owns [`RolloutHold`] and [`rollout_holds`]. Pure: the caller passes the pass's [`Plan`] and
//! the host's view, read at once from the site database.

use std::fmt;

use serde::Serialize;

use super::budget::Target;
use super::freeze::FreezeScope;
use super::host_view::HostView;
use super::pass::{frozen_by, Plan};
use super::waves::NextWave;

/// Why the rollout gates hold a host a direct request names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum RolloutHold {
    /// A target the host would install is paused.
    Paused { target: Target, rule: String },
    /// The open canary wave of a target the host would install has no room left.
    WaveClosed { target: Target, wave: u32, waves: u32, allowed: u32, next: NextWave },
    /// A freeze covers the host.
    Frozen { id: i64, scope: FreezeScope, by: String, reason: String },
    /// An operator paused a target the host would install.
    PausedByOperator { target: Target, by: String, reason: String },
}

impl fmt::Display for RolloutHold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RolloutHold::Paused { target, rule } => {
                write!(f, "target {target} is paused ({rule}; `hostfw budget resume` releases it)")
            }
            RolloutHold::WaveClosed { target, wave, waves, allowed, next } => write!(
                f,
                "canary wave {wave} of {waves} of target {target} is full ({allowed} host{} in all); {next}",
                if *allowed == 1 { "" } else { "s" }
            ),
            RolloutHold::Frozen { id, scope, by, reason } => {
                write!(f, "{scope} is frozen by {by} ({reason:?}; `hostfw unfreeze --id {id}` lifts it)")
            }
            RolloutHold::PausedByOperator { target, by, reason } => {
                write!(f, "target {target} is paused by {by} ({reason:?}; `hostfw budget resume` releases it)")
            }
        }
    }
}

/// What holds `host` in `plan`'s rollout, for each of its targets (empty: nothing does).
pub fn rollout_holds(plan: &Plan, host: &HostView) -> Vec<RolloutHold> {
    let mut holds = Vec::new();
    if let Some(f) = frozen_by(host, &plan.brakes.freezes) {
        holds.push(RolloutHold::Frozen {
            id: f.id,
            scope: f.scope.clone(),
            by: f.by.clone(),
            reason: f.reason.clone(),
        });
    }
    for target in &host.targets {
        if let Some(p) = plan.brakes.pauses.iter().find(|p| &p.target == target) {
            holds.push(RolloutHold::PausedByOperator {
                target: target.clone(),
                by: p.by.clone(),
                reason: p.reason.clone(),
            });
            continue;
        }
        if let Some(p) = plan.paused.iter().find(|p| &p.target == target) {
            holds.push(RolloutHold::Paused { target: target.clone(), rule: p.rule.clone() });
            continue;
        }
        if let Some(w) = plan.waves.iter().find(|w| &w.target == target) {
            if w.room() == 0 {
                holds.push(RolloutHold::WaveClosed {
                    target: target.clone(),
                    wave: w.wave,
                    waves: w.waves,
                    allowed: w.allowed,
                    next: w.next.clone(),
                });
            }
        }
    }
    holds
}
