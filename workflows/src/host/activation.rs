//! Which resets, power cycles and waits activate a freshly installed component (nico-study §4.6),
//! as pure decisions.
//!
//! Owns the mapping component + catalog entry → activation plan, and which plans are checked
//! against the BMC before their first step (`preflight_steps`). It must not perform anything:
//! the workflow turns each step into an activity and each wait into a durable timer.

use hostfw_model::{ComponentType, FirmwareEntry};

use crate::contracts::ActivationStep;
use crate::host::settings::ReprovisionSettings;

/// One element of an activation plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivationAction {
    /// Run this step as an activity.
    Step(ActivationStep),
    /// Wait this long on a durable timer (survives worker restarts), for `reason`.
    Wait { secs: u64, reason: String },
}

fn system_restart() -> ActivationAction {
    ActivationAction::Step(ActivationStep::SystemReset { reset_type: "ForceRestart".to_string() })
}

fn manager_reset(healthy_reads: u32) -> ActivationAction {
    ActivationAction::Step(ActivationStep::ManagerReset {
        reset_type: "ForceRestart".to_string(),
        healthy_reads: healthy_reads.max(1),
    })
}

/// The plan that activates `component` after its image was accepted.
///
/// - `power_drains_needed = n`: n × (ForceOff, wait, AC power cycle, wait, On, wait); as in NICo
///   any value, even 0, replaces the default UEFI restart and HGX cycle. A BMC image still gets
///   its manager reset.
/// - BMC images (`bmc`, `combinedbmcuefi`): a manager reset, then several healthy reads;
///   `combinedbmcuefi` also restarts the system, since it carries the UEFI image too.
/// - UEFI: a system restart.
/// - HGX BMC and GPU: power off, wait `hgx_bmc_gpu_reboot_delay`, power on.
/// - Everything else (NIC, CPLD, CEC): a system restart, so an image applied on reset takes effect.
pub fn activation_plan(
    component: ComponentType,
    entry: &FirmwareEntry,
    settings: &ReprovisionSettings,
) -> Vec<ActivationAction> {
    let mut plan = Vec::new();
    if let Some(drains) = entry.power_drains_needed {
        let w = settings.power_drain;
        for n in 1..=drains {
            plan.push(ActivationAction::Step(ActivationStep::PowerOff));
            plan.push(ActivationAction::Wait {
                secs: w.after_off_secs,
                reason: format!("power drain {n}/{drains}: off"),
            });
            plan.push(ActivationAction::Step(ActivationStep::AcPowerCycle));
            plan.push(ActivationAction::Wait {
                secs: w.after_cycle_secs,
                reason: format!("power drain {n}/{drains}: AC cycle"),
            });
            plan.push(ActivationAction::Step(ActivationStep::PowerOn));
            plan.push(ActivationAction::Wait {
                secs: w.after_on_secs,
                reason: format!("power drain {n}/{drains}: on"),
            });
        }
        if component.is_bmc() {
            plan.push(manager_reset(settings.bmc_healthy_reads));
        }
        return plan;
    }
    match component {
        c if c.is_bmc() && c.is_uefi() => {
            plan.push(manager_reset(settings.bmc_healthy_reads));
            plan.push(system_restart());
        }
        c if c.is_bmc() => plan.push(manager_reset(settings.bmc_healthy_reads)),
        ComponentType::Hgxbmc | ComponentType::Gpu => {
            plan.push(ActivationAction::Step(ActivationStep::PowerOff));
            plan.push(ActivationAction::Wait {
                secs: settings.hgx_reboot_delay_secs,
                reason: "HGX BMC/GPU reboot delay".to_string(),
            });
            plan.push(ActivationAction::Step(ActivationStep::PowerOn));
        }
        _ => plan.push(system_restart()),
    }
    plan
}

/// Why `plan` cannot be carried out on a host of `model`, checked before its first power action:
/// an AC power cycle (`power_drains_needed`) on a model whose catalog entry says nothing of how
/// its AC power is cycled (`ac_cycle`); hostfw does not guess one, and must not power the host
/// off first to find out.
pub fn unrunnable(plan: &[ActivationAction], model: &hostfw_model::HostModel) -> Option<String> {
    let cycles = plan.iter().any(|a| matches!(a, ActivationAction::Step(ActivationStep::AcPowerCycle)));
    (cycles && model.ac_cycle.is_none()).then(|| {
        format!(
            "the activation needs an AC power cycle (power_drains_needed), but the catalog entry of {} {} has no \
             ac_cycle setting (which resource and action cycle its AC power); nothing was powered off",
            model.vendor, model.model
        )
    })
}

/// The steps a preflight checks against what the BMC allows before `plan` runs: all of them,
/// when there are several (a later step refused after an earlier one powered the host off would
/// leave it off, or half activated). `None` for a plan of one step or none: that step checks its
/// ResetType against the BMC's list itself, before it sends anything.
pub fn preflight_steps(plan: &[ActivationAction]) -> Option<Vec<ActivationStep>> {
    let steps: Vec<ActivationStep> = plan
        .iter()
        .filter_map(|a| match a {
            ActivationAction::Step(s) => Some(s.clone()),
            ActivationAction::Wait { .. } => None,
        })
        .collect();
    (steps.len() > 1).then_some(steps)
}

/// The resets before the first attempt of an entry with `pre_update_resets`: ForceOff, BMC reset,
/// On, then a wait for the host to settle.
pub fn pre_update_plan(settings: &ReprovisionSettings) -> Vec<ActivationAction> {
    vec![
        ActivationAction::Step(ActivationStep::PowerOff),
        manager_reset(settings.bmc_healthy_reads),
        ActivationAction::Step(ActivationStep::PowerOn),
        ActivationAction::Wait { secs: settings.pre_update_wait_secs, reason: "after pre-update resets".to_string() },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(c: ComponentType, entry: &FirmwareEntry) -> Vec<ActivationAction> {
        activation_plan(c, entry, &ReprovisionSettings::default())
    }

    fn steps(c: ComponentType) -> Vec<ActivationAction> {
        plan(c, &FirmwareEntry::new("1.0"))
    }

    #[test]
    fn bmc_images_reset_the_manager() {
        assert_eq!(
            steps(ComponentType::Bmc),
            vec![ActivationAction::Step(ActivationStep::ManagerReset {
                reset_type: "ForceRestart".into(),
                healthy_reads: 3
            })]
        );
    }

    #[test]
    fn uefi_and_others_restart_the_system() {
        for c in [ComponentType::Uefi, ComponentType::Cpldmb, ComponentType::Nic] {
            assert_eq!(steps(c), vec![system_restart()], "{c}");
        }
    }

    #[test]
    fn combined_images_reset_both() {
        let s = steps(ComponentType::Combinedbmcuefi);
        assert_eq!(s, vec![manager_reset(3), system_restart()]);
    }

    #[test]
    fn hgx_and_gpu_power_cycle_with_the_configured_delay() {
        let settings = ReprovisionSettings { hgx_reboot_delay_secs: 45, ..Default::default() };
        for c in [ComponentType::Hgxbmc, ComponentType::Gpu] {
            let p = activation_plan(c, &FirmwareEntry::new("1"), &settings);
            assert_eq!(p.len(), 3, "{c}");
            assert_eq!(p[0], ActivationAction::Step(ActivationStep::PowerOff));
            assert!(matches!(p[1], ActivationAction::Wait { secs: 45, .. }));
            assert_eq!(p[2], ActivationAction::Step(ActivationStep::PowerOn));
        }
    }

    #[test]
    fn power_drains_replace_the_default_reset() {
        let mut entry = FirmwareEntry::new("1");
        entry.power_drains_needed = Some(2);
        let p = plan(ComponentType::Uefi, &entry);
        let cycles = p.iter().filter(|a| **a == ActivationAction::Step(ActivationStep::AcPowerCycle)).count();
        assert_eq!(cycles, 2);
        assert_eq!(p.len(), 12, "two cycles of off/wait/ac/wait/on/wait, no UEFI restart");
        assert!(!p.contains(&system_restart()));
        let p = plan(ComponentType::Bmc, &entry);
        assert_eq!(p.last(), Some(&manager_reset(3)), "a BMC image still gets its manager reset");
        entry.power_drains_needed = Some(0);
        assert!(plan(ComponentType::Hgxbmc, &entry).is_empty(), "0 drains still suppresses the HGX cycle");
    }

    #[test]
    fn only_plans_of_several_steps_are_checked_first() {
        for c in [ComponentType::Bmc, ComponentType::Uefi, ComponentType::Nic] {
            assert_eq!(preflight_steps(&steps(c)), None, "{c}: one step checks itself");
        }
        let mut entry = FirmwareEntry::new("1");
        entry.power_drains_needed = Some(1);
        let drain = preflight_steps(&plan(ComponentType::Cpldmb, &entry)).expect("a drain is checked");
        assert_eq!(drain, vec![ActivationStep::PowerOff, ActivationStep::AcPowerCycle, ActivationStep::PowerOn]);
        assert!(preflight_steps(&steps(ComponentType::Combinedbmcuefi)).is_some());
        assert!(preflight_steps(&steps(ComponentType::Gpu)).is_some());
        assert!(preflight_steps(&pre_update_plan(&ReprovisionSettings::default())).is_some());
    }

    #[test]
    fn pre_update_resets_end_with_a_wait() {
        let p = pre_update_plan(&ReprovisionSettings { pre_update_wait_secs: 7, ..Default::default() });
        assert_eq!(p.first(), Some(&ActivationAction::Step(ActivationStep::PowerOff)));
        assert!(matches!(p.last(), Some(ActivationAction::Wait { secs: 7, .. })));
    }
}
