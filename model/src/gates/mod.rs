//! The Machine Update Manager's scheduling gates as pure rules (seed "Scheduling gates",
//! checklist S6–S15): given the policy, the hosts and `now`, which drifted hosts to start and why
//! every other non-compliant host waits.
//!
//! Owns the public surface of the gates; each file owns one concept (ceiling arithmetic, host
//! view, firmware status, brakes (freezes and manual pauses), policy, per-host gates, failure-domain caps, error budgets, canary waves, window fit, approval deadlines, skip reasons,
//! the fleet pass). It must do no
//! I/O, no async and read no clock: the caller supplies `now_ms` and every host's facts.

mod approval;
mod budget;
mod ceiling;
mod direct;
mod firmware;
mod freeze;
mod host_gates;
mod host_view;
mod label_caps;
mod pass;
mod policy;
mod reason;
mod waves;
mod window_fit;

pub use approval::{
    hold_until, overdue_approvals, ApprovalDeadline, ApprovalFacts, ApprovalHold, ApprovalWait, DeadlinePolicy,
    OverdueApproval,
};
pub use budget::{host_targets, paused_targets, ErrorBudget, PausedTarget, Target, TargetFailure, TargetRecord};
pub use ceiling::{ceiling, Ceiling, CeilingLimits, FleetHealth, BOTH_UNSET};
pub use direct::{rollout_holds, RolloutHold};
pub use firmware::{firmware_status, FirmwareStatus, UnmatchedComponent};
pub use freeze::{check_reason, covering, holding, Freeze, FreezeError, FreezeScope, OperatorPause};
pub use host_gates::firmware_gate;
pub use host_view::HostView;
pub use label_caps::LabelLoad;
pub use pass::{frozen_by, plan, Brakes, PassInput, Plan};
pub use policy::SchedulingPolicy;
pub use reason::{SkipReason, Skipped, MACHINE_ID_PLACEHOLDER};
pub use waves::{
    check_waves, default_waves, is_canary, wave_marks, wave_statuses, NextWave, WaveMark, WavePolicy, WaveRecord,
    WaveSize, WaveStatus, CANARY_LABEL,
};
pub use window_fit::{component_set, estimate, p90, span_text, Estimate, UpdateDurations, WINDOW_FIT_RUNS_KEPT};
