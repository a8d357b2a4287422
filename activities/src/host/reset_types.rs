//! Which ResetTypes each activation kind asks the BMC for, most wanted first.
//!
//! The workflow's activation plan names one ResetType per step (its recorded inputs must not
//! change); real BMCs do not all allow it (Dell iDRAC and Supermicro allow only
//! `GracefulRestart` for `Manager.Reset`). So an activity passes the plan's ResetType first,
//! then the kind's fallbacks, and the Redfish client sends the first the BMC advertises (the
//! first of all when it advertises none). It must not talk to a BMC.

/// A host restart: ForceRestart (what the plan asks for); GracefulRestart where ForceRestart is
/// not offered; PowerCycle (off, then on) still restarts the host and applies OnReset images.
pub const SYSTEM_RESTART: &[&str] = &["ForceRestart", "GracefulRestart", "PowerCycle"];

/// A BMC restart: ForceRestart (DGX allows only that), GracefulRestart (Dell, Supermicro).
pub const BMC_RESTART: &[&str] = &["ForceRestart", "GracefulRestart"];

/// Power off for a drain or an HGX/GPU cycle: a hard off only (every captured BMC allows it;
/// a graceful shutdown may never finish).
pub const POWER_OFF: &[&str] = &["ForceOff"];

/// Power on: On, else ForceOn.
pub const POWER_ON: &[&str] = &["On", "ForceOn"];

/// `asked` (the plan's ResetType) first, then the kind's `fallbacks`, without repeats.
pub fn preferences<'a>(asked: &'a str, fallbacks: &[&'a str]) -> Vec<&'a str> {
    let mut out = vec![asked];
    out.extend(fallbacks.iter().copied().filter(|f| *f != asked));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plans_reset_type_comes_first_then_the_fallbacks() {
        assert_eq!(preferences("ForceRestart", BMC_RESTART), vec!["ForceRestart", "GracefulRestart"]);
        assert_eq!(preferences("ForceRestart", SYSTEM_RESTART), vec!["ForceRestart", "GracefulRestart", "PowerCycle"]);
        assert_eq!(preferences("GracefulRestart", BMC_RESTART), vec!["GracefulRestart", "ForceRestart"]);
        assert_eq!(preferences("PowerCycle", SYSTEM_RESTART), vec!["PowerCycle", "ForceRestart", "GracefulRestart"]);
    }
}
