//! What makes new firmware run: an image's activation requirement ([`Activation`], the optional
//! `activation=` key of the image header) and the events that can satisfy it
//! ([`ActivationEvent`]). Owns the rule "which event activates which staged version"; never
//! touches host state or time.
//!
//! | activation     | applied at task completion | activated by                                        |
//! |----------------|----------------------------|-----------------------------------------------------|
//! | `immediate`    | yes                        | -                                                   |
//! | `reset`        | no (staged)                | host power-on after a system reset or AC cycle, or the BMC coming back from Manager.Reset |
//! | `ac_cycle`     | no (staged)                | host power-on after a Chassis.Reset PowerCycle only |
//! | `manager_reset`| no (staged)                | the BMC coming back from Manager.Reset only         |

use serde::{Deserialize, Serialize};

use hostfw_fleet::ApplyTime;

/// When a flashed image starts running. In an image header it overrides the apply time the
/// update request asked for (or the host's `apply_time` default) for that image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    /// At task completion.
    Immediate,
    /// After the next host power-on (system reset, AC cycle) or BMC reset: today's `OnReset`.
    Reset,
    /// Only after an AC power cycle (`Chassis.Reset` `PowerCycle`).
    AcCycle,
    /// Only after a BMC reset (`Manager.Reset`).
    ManagerReset,
}

/// Something that happened to the host or the BMC and may activate staged firmware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActivationEvent {
    /// The host powered on after a ComputerSystem.Reset (or an On after a ForceOff).
    HostPowerOn,
    /// The host powered on after an AC power cycle.
    AcCycle,
    /// The BMC is back after a Manager.Reset.
    ManagerReset,
}

impl Activation {
    /// The image-header spelling (`activation=<this>`).
    pub fn as_str(self) -> &'static str {
        match self {
            Activation::Immediate => "immediate",
            Activation::Reset => "reset",
            Activation::AcCycle => "ac_cycle",
            Activation::ManagerReset => "manager_reset",
        }
    }

    /// Parse the image-header spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [Activation::Immediate, Activation::Reset, Activation::AcCycle, Activation::ManagerReset]
            .into_iter()
            .find(|a| a.as_str() == s)
    }

    /// The activation an update gets when its image does not say: from the apply time.
    pub fn from_apply_time(apply_time: ApplyTime) -> Self {
        match apply_time {
            ApplyTime::Immediate => Activation::Immediate,
            ApplyTime::OnReset => Activation::Reset,
        }
    }

    /// Whether a version staged with this requirement runs after `event`.
    pub(crate) fn activated_by(self, event: ActivationEvent) -> bool {
        match self {
            Activation::Immediate | Activation::Reset => true,
            Activation::AcCycle => event == ActivationEvent::AcCycle,
            Activation::ManagerReset => event == ActivationEvent::ManagerReset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_round_trips() {
        for a in [Activation::Immediate, Activation::Reset, Activation::AcCycle, Activation::ManagerReset] {
            assert_eq!(Activation::parse(a.as_str()), Some(a));
        }
        assert_eq!(Activation::parse("AcCycle"), None);
        assert_eq!(Activation::parse(""), None);
    }

    #[test]
    fn which_event_activates_what() {
        use ActivationEvent::*;
        assert!(Activation::Reset.activated_by(HostPowerOn));
        assert!(Activation::Reset.activated_by(AcCycle));
        assert!(Activation::Reset.activated_by(ManagerReset));
        assert!(!Activation::AcCycle.activated_by(HostPowerOn));
        assert!(!Activation::AcCycle.activated_by(ManagerReset));
        assert!(Activation::AcCycle.activated_by(AcCycle));
        assert!(!Activation::ManagerReset.activated_by(HostPowerOn));
        assert!(!Activation::ManagerReset.activated_by(AcCycle));
        assert!(Activation::ManagerReset.activated_by(ManagerReset));
    }
}
