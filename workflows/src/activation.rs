//! Which resets activate a freshly installed component (nico-study §4.6), as pure decisions.
//!
//! Owns the mapping component → activation steps. It must not perform them: the workflow turns
//! each step into an activity.

use hostfw_model::{ComponentType, FirmwareEntry};

use crate::contracts::ActivationStep;

/// The steps that activate `component` after its image was accepted.
///
/// - BMC images (`bmc`, `combinedbmcuefi`): a manager reset, then several healthy reads;
///   `combinedbmcuefi` also restarts the system, since it carries the UEFI image too.
/// - UEFI: a system restart.
/// - Everything else (NIC, CPLD, CEC, HGX BMC, GPU): a system restart, so that an image applied
///   on reset takes effect; power drains and HGX off/on cycles come with the complete
///   activation rules.
/// `healthy_reads` is how many consecutive good reads a BMC reset needs before the workflow goes on.
pub fn activation_steps(component: ComponentType, _entry: &FirmwareEntry, healthy_reads: u32) -> Vec<ActivationStep> {
    let system = ActivationStep::SystemReset { reset_type: "ForceRestart".to_string() };
    let manager = ActivationStep::ManagerReset {
        reset_type: "ForceRestart".to_string(),
        healthy_reads: healthy_reads.max(1),
    };
    match (component.is_bmc(), component.is_uefi()) {
        (true, true) => vec![manager, system],
        (true, false) => vec![manager],
        _ => vec![system],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(c: ComponentType) -> Vec<ActivationStep> {
        activation_steps(c, &FirmwareEntry::new("1.0"), 3)
    }

    #[test]
    fn bmc_images_reset_the_manager() {
        assert_eq!(
            steps(ComponentType::Bmc),
            vec![ActivationStep::ManagerReset { reset_type: "ForceRestart".into(), healthy_reads: 3 }]
        );
    }

    #[test]
    fn uefi_restarts_the_system() {
        assert_eq!(steps(ComponentType::Uefi), vec![ActivationStep::SystemReset { reset_type: "ForceRestart".into() }]);
    }

    #[test]
    fn combined_images_reset_both() {
        let s = steps(ComponentType::Combinedbmcuefi);
        assert_eq!(s.len(), 2);
        assert!(matches!(s[0], ActivationStep::ManagerReset { .. }));
        assert!(matches!(s[1], ActivationStep::SystemReset { .. }));
    }
}
