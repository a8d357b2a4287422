//! The error-budget series of a scrape, per rollout target on record (a catalog vendor/model's
//! component at one desired version, since its last `hostfw budget resume`):
//! - `hostfw_error_budget_hosts{vendor,model,component,version,outcome}`: hosts that attempted
//!   the target (`outcome="attempted"`) and, of them, hosts that failed it (`"failed"`);
//! - `hostfw_target_paused{vendor,model,component,version}`: 1 while the target's budget is
//!   spent or its canary wave ended with too many failures (the scheduler starts no new host on
//!   it), else 0;
//! - `hostfw_canary_wave{vendor,model,component,version}`: the open canary wave of each target
//!   with work left (from 1), and `hostfw_canary_wave_hosts{...,kind}`: the target's hosts
//!   (`total`), how many the open wave lets start (`allowed`), have started (`started`) and are
//!   still running (`running`).
//!
//! Owns these series' names, help texts and labels (catalog names and versions only, never a
//! machine id). It must stay pure and must not decide what is paused (`gates::paused_targets`,
//! through the scheduler's plan).

use std::fmt::Write;

use hostfw_model::gates::{PausedTarget, Target, TargetRecord, WaveStatus};

use super::compliance::escape;
use super::render::header;

pub const BUDGET_HOSTS: &str = "hostfw_error_budget_hosts";
pub const TARGET_PAUSED: &str = "hostfw_target_paused";
pub const CANARY_WAVE: &str = "hostfw_canary_wave";
pub const CANARY_WAVE_HOSTS: &str = "hostfw_canary_wave_hosts";

/// What a scrape shows of the error budgets: the records and the plan's paused targets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BudgetSeries {
    pub records: Vec<TargetRecord>,
    pub paused: Vec<PausedTarget>,
    /// The plan's canary waves.
    pub waves: Vec<WaveStatus>,
}

fn labels(t: &Target) -> String {
    format!(
        "vendor=\"{}\",model=\"{}\",component=\"{}\",version=\"{}\"",
        escape(&t.vendor),
        escape(&t.model),
        t.component.as_str(),
        escape(&t.version)
    )
}

/// Append the error-budget series to `out`.
pub fn write(out: &mut String, b: &BudgetSeries) {
    let help = "Hosts that attempted each rollout target since its last resume, and those that failed it.";
    header(out, BUDGET_HOSTS, "gauge", help);
    for r in &b.records {
        let l = labels(&r.target);
        let _ = writeln!(out, "{BUDGET_HOSTS}{{{l},outcome=\"attempted\"}} {}", r.attempted_hosts);
        let _ = writeln!(out, "{BUDGET_HOSTS}{{{l},outcome=\"failed\"}} {}", r.failed_hosts());
    }
    let help =
        "1 while a rollout target's error budget is spent: no new host starts on it until `hostfw budget resume`.";
    header(out, TARGET_PAUSED, "gauge", help);
    for r in &b.records {
        let paused = b.paused.iter().any(|p| p.target == r.target);
        let _ = writeln!(out, "{TARGET_PAUSED}{{{}}} {}", labels(&r.target), u8::from(paused));
    }
    header(out, CANARY_WAVE, "gauge", "The open canary wave of each rollout target with work left (from 1).");
    for w in &b.waves {
        let _ = writeln!(out, "{CANARY_WAVE}{{{}}} {}", labels(&w.target), w.wave);
    }
    let help = "A rollout target's hosts (total), how many its open canary wave lets start (allowed), have started and are running.";
    header(out, CANARY_WAVE_HOSTS, "gauge", help);
    for w in &b.waves {
        let l = labels(&w.target);
        for (kind, n) in [("total", w.hosts), ("allowed", w.allowed), ("started", w.started), ("running", w.running)] {
            let _ = writeln!(out, "{CANARY_WAVE_HOSTS}{{{l},kind=\"{kind}\"}} {n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use hostfw_model::gates::{ErrorBudget, TargetFailure};
    use hostfw_model::ComponentType;

    use super::*;

    #[test]
    fn a_spent_target_is_1_and_one_within_budget_is_0() {
        let t = |m: &str| Target {
            vendor: "Dell".into(),
            model: m.into(),
            component: ComponentType::Bmc,
            version: "7\"1".into(),
        };
        let failure = |id: &str| TargetFailure { machine_id: id.into(), reason: "task failed".into(), at_ms: 1 };
        let records = vec![
            TargetRecord {
                target: t("A"),
                attempted_hosts: 2,
                failures: vec![failure("a1"), failure("a2")],
                open: vec![],
                finished: vec![],
                last_done_ms: None,
                last_attempt_ms: None,
                failed_last: 2,
                waves: None,
            },
            TargetRecord {
                target: t("B"),
                attempted_hosts: 5,
                failures: vec![],
                open: vec![],
                finished: vec![],
                last_done_ms: None,
                last_attempt_ms: None,
                failed_last: 0,
                waves: None,
            },
        ];
        let budget = ErrorBudget { failed_hosts: 2, failed_percent: 0, min_hosts: 1 };
        let paused = hostfw_model::gates::paused_targets(&budget, &records);
        let mut out = String::new();
        write(&mut out, &BudgetSeries { records, paused, waves: vec![] });
        let a = "vendor=\"Dell\",model=\"A\",component=\"bmc\",version=\"7\\\"1\"";
        assert!(out.contains(&format!("{TARGET_PAUSED}{{{a}}} 1")), "{out}");
        assert!(out.contains(&format!("{BUDGET_HOSTS}{{{a},outcome=\"failed\"}} 2")), "{out}");
        assert!(out.contains("model=\"B\",component=\"bmc\",version=\"7\\\"1\"} 0"), "{out}");
        assert!(!out.contains("a1"), "no machine id in a label: {out}");
    }
}
