//! The activation preflight (`hostfw.host.activation_preflight`): before the first power action
//! of a plan of several steps, read from the BMC whether it allows every reset the plan sends, so
//! that a plan the BMC would refuse halfway (after the host was powered off) is refused before
//! anything is sent.
//!
//! Owns turning a plan's steps into the resets they send ([`needs`]: the same ResetType
//! preferences `activation` sends, from `reset_types`) and judging them against what the BMC
//! lists ([`refusals`]); both are pure. The reading is the Redfish client's (`reset_allowed`):
//! each action's `ResetType@Redfish.AllowableValues`, else its `@Redfish.ActionInfo`; an action
//! that lists nothing allows every value (the Redfish default, not a guess). It must not send
//! anything to the BMC, nor choose the steps (the workflow's plan does).

use hostfw_model::AcCycleSetting;
use hostfw_redfish::{RedfishClient, ResetsAllowed};
use hostfw_workflows::{ActivationStep, PreflightInput};
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::host::activation::ac_cycle_setting;
use crate::host::reset_types;

/// Which reset action a step posts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetTarget {
    /// The host System's `#ComputerSystem.Reset`.
    System,
    /// The BMC Manager's `#Manager.Reset`.
    Manager,
    /// The model's AC-cycle action (catalog `ac_cycle`).
    AcCycle,
}

impl ResetTarget {
    fn name(self) -> &'static str {
        match self {
            ResetTarget::System => "the host's ComputerSystem.Reset",
            ResetTarget::Manager => "the BMC's Manager.Reset",
            ResetTarget::AcCycle => "the model's ac_cycle action",
        }
    }
}

/// One reset a plan sends: for which step, to which action, and the ResetTypes it would send,
/// most wanted first (the first one the BMC lists is sent). Empty: the action gets no ResetType.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub step: &'static str,
    pub target: ResetTarget,
    pub preferences: Vec<String>,
}

fn need(step: &'static str, target: ResetTarget, preferences: &[&str]) -> Need {
    Need { step, target, preferences: preferences.iter().map(|p| p.to_string()).collect() }
}

/// The resets `steps` send, in order (an AC cycle with `power_off_first` sends ForceOff and On
/// too). `ac_cycle` is the model's setting, for the plans that cycle AC power.
pub fn needs(steps: &[ActivationStep], ac_cycle: Option<&AcCycleSetting>) -> Vec<Need> {
    let mut out = Vec::new();
    for step in steps {
        match step {
            ActivationStep::PowerOff => out.push(need("power off", ResetTarget::System, reset_types::POWER_OFF)),
            ActivationStep::PowerOn => out.push(need("power on", ResetTarget::System, reset_types::POWER_ON)),
            ActivationStep::SystemReset { reset_type } => out.push(need(
                "host restart",
                ResetTarget::System,
                &reset_types::preferences(reset_type, reset_types::SYSTEM_RESTART),
            )),
            ActivationStep::ManagerReset { reset_type, .. } => out.push(need(
                "BMC reset",
                ResetTarget::Manager,
                &reset_types::preferences(reset_type, reset_types::BMC_RESTART),
            )),
            ActivationStep::AcPowerCycle => {
                let Some(setting) = ac_cycle else { continue };
                if setting.power_off_first {
                    out.push(need("power off before the AC cycle", ResetTarget::System, reset_types::POWER_OFF));
                }
                let types: Vec<&str> = setting.reset_type.iter().map(String::as_str).collect();
                out.push(need("AC power cycle", ResetTarget::AcCycle, &types));
                if setting.power_off_first {
                    out.push(need("power on after the AC cycle", ResetTarget::System, reset_types::POWER_ON));
                }
            }
        }
    }
    out
}

/// What the BMC said of one reset action: its description, or why it cannot be used (no such
/// resource or action), as a sentence.
pub type Answer = Result<ResetsAllowed, String>;

/// Why each of `needs` cannot be sent, in order and without repeats; empty when every one can.
/// `answer` gives what the BMC said of each action.
pub fn refusals(needs: &[Need], answer: impl Fn(ResetTarget) -> Answer) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in needs {
        let why = match answer(n.target) {
            Err(e) => Some(format!("{} ({}): {e}", n.step, n.target.name())),
            Ok(a) => {
                let prefs: Vec<&str> = n.preferences.iter().map(String::as_str).collect();
                match (&a.allowed, prefs.is_empty() || a.choose(&prefs).is_some()) {
                    (Some(list), false) => Some(format!(
                        "{}: {} ({}) allows {}, not {}",
                        n.step,
                        n.target.name(),
                        a.target,
                        list.join(", "),
                        prefs.join(" or ")
                    )),
                    _ => None,
                }
            }
        };
        if let Some(why) = why.filter(|w| !out.contains(w)) {
            out.push(why);
        }
    }
    out
}

/// Read what the plan's resets need from the BMC; `BmcRejected` naming every reset it would
/// refuse (nothing was sent). A BMC that cannot be reached is retried (`BmcTransient`).
pub async fn preflight(deps: &crate::Deps, input: PreflightInput) -> Result<(), ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let client = bmc::client_with_waits(deps, &machine, &input.waits).await?;
    let ac_cycle = if input.steps.contains(&ActivationStep::AcPowerCycle) {
        Some(ac_cycle_setting(deps, &machine, &client).await?)
    } else {
        None
    };
    let needs = needs(&input.steps, ac_cycle.as_ref());
    let mut answers: Vec<(ResetTarget, Answer)> = Vec::new();
    for target in [ResetTarget::System, ResetTarget::Manager, ResetTarget::AcCycle] {
        if needs.iter().any(|n| n.target == target) {
            answers.push((target, read(&client, target, ac_cycle.as_ref()).await?));
        }
    }
    let answer = |t: ResetTarget| {
        answers.iter().find(|(a, _)| *a == t).map(|(_, r)| r.clone()).unwrap_or_else(|| Err("not read".into()))
    };
    let refused = refusals(&needs, answer);
    if refused.is_empty() {
        tracing::info!(machine_id = %machine.id, steps = ?input.steps, "activation preflight: the BMC allows every reset of the plan");
        return Ok(());
    }
    Err(error::bmc_refuses(format!("{}; nothing was powered off or reset", refused.join("; "))))
}

/// What the BMC says of one action; a fault worth retrying (unreachable, 5xx) is an error.
async fn read(
    client: &RedfishClient,
    target: ResetTarget,
    ac_cycle: Option<&AcCycleSetting>,
) -> Result<Answer, ActivityError> {
    let read = match (target, ac_cycle) {
        (ResetTarget::System, _) => client.system_resets_allowed().await,
        (ResetTarget::Manager, _) => client.manager_resets_allowed().await,
        (ResetTarget::AcCycle, Some(setting)) => client.ac_cycle_resets_allowed(setting).await,
        (ResetTarget::AcCycle, None) => return Ok(Err("no ac_cycle setting".into())),
    };
    match read {
        Ok(a) => Ok(Ok(a)),
        Err(e) if e.is_transient() => Err(error::redfish(e)),
        Err(e) => Ok(Err(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(values: &[&str]) -> Answer {
        Ok(ResetsAllowed { target: "/t".into(), allowed: Some(values.iter().map(|v| v.to_string()).collect()) })
    }

    fn setting(reset_type: Option<&str>, power_off_first: bool) -> AcCycleSetting {
        AcCycleSetting {
            resource: "/redfish/v1/Chassis/1".into(),
            action: "#Chassis.Reset".into(),
            reset_type: reset_type.map(str::to_string),
            power_off_first,
        }
    }

    fn drain() -> Vec<ActivationStep> {
        vec![ActivationStep::PowerOff, ActivationStep::AcPowerCycle, ActivationStep::PowerOn]
    }

    #[test]
    fn a_drain_sends_force_off_the_cycle_and_on_and_power_off_first_adds_its_own() {
        let plain = needs(&drain(), Some(&setting(Some("PowerCycle"), false)));
        let targets: Vec<ResetTarget> = plain.iter().map(|n| n.target).collect();
        assert_eq!(targets, vec![ResetTarget::System, ResetTarget::AcCycle, ResetTarget::System]);
        assert_eq!(plain[1].preferences, vec!["PowerCycle".to_string()]);
        assert_eq!(needs(&drain(), Some(&setting(None, true))).len(), 5);
    }

    #[test]
    fn the_captured_dell_chassis_refuses_a_power_cycle_and_allows_the_rest() {
        let needs = needs(&drain(), Some(&setting(Some("PowerCycle"), false)));
        let dell = |t: ResetTarget| match t {
            ResetTarget::AcCycle => listed(&["On", "ForceOff"]),
            _ => listed(&["On", "ForceOff", "ForceRestart", "GracefulRestart", "PowerCycle"]),
        };
        let refused = refusals(&needs, dell);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].contains("allows On, ForceOff, not PowerCycle"), "{refused:?}");
    }

    #[test]
    fn an_unlisted_action_allows_every_value_and_an_unreadable_one_is_named_once() {
        let needs = needs(&drain(), Some(&setting(Some("AuxPowerCycle"), false)));
        let none = |_| Ok(ResetsAllowed { target: "/t".into(), allowed: None });
        assert!(refusals(&needs, none).is_empty(), "no list: the standard's default allows it");
        let system_without_off = |t: ResetTarget| match t {
            ResetTarget::System => listed(&["On", "ForceRestart"]),
            _ => Err("HTTP 404".to_string()),
        };
        let refused = refusals(&needs, system_without_off);
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(refused[0].starts_with("power off:"), "{refused:?}");
        assert!(refused[1].contains("HTTP 404"), "{refused:?}");
    }

    #[test]
    fn a_bmc_reset_falls_back_like_the_reset_itself() {
        let needs = needs(
            &[
                ActivationStep::ManagerReset { reset_type: "ForceRestart".into(), healthy_reads: 2 },
                ActivationStep::PowerOn,
            ],
            None,
        );
        let dell = |t: ResetTarget| match t {
            ResetTarget::Manager => listed(&["GracefulRestart"]),
            _ => listed(&["On", "ForceOff"]),
        };
        assert!(refusals(&needs, dell).is_empty(), "GracefulRestart is a BMC reset's fallback");
    }
}
