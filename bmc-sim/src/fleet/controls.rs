//! What tests may change or look at on a running BMC beyond versions and counters: its fault
//! set ([`RunningFleet::set_fault`] / [`RunningFleet::fault`]) and the host state NICo-style
//! flows assert on (lockdown, booted image, power state). Extends [`RunningFleet`]; no HTTP.

use std::time::Duration;

use crate::faults::inject::replace_faults;
use crate::fleet::error::SimError;
use crate::fleet::running::RunningFleet;
use hostfw_fleet::Fault;

impl RunningFleet {
    /// Replace a host's fault set (`Fault::default()` clears every fault). A positive
    /// `unreachable_for_secs` takes the BMC off the network at once; clearing it brings the
    /// BMC back at once. Fails for an unknown host or an invalid fault set.
    pub fn set_fault(&self, host_id: &str, fault: Fault) -> Result<(), SimError> {
        let host = self.find(host_id).ok_or_else(|| SimError::UnknownHost { host: host_id.to_string() })?;
        let checked = {
            let d = host.data();
            fault.check(d.members.iter().map(|m| m.id.as_str()))
        };
        checked.map_err(|(key, message)| SimError::InvalidFault { host: host_id.to_string(), key, message })?;
        tracing::info!(host = host_id, ?fault, "faults replaced");
        replace_faults(host, fault, Duration::ZERO);
        Ok(())
    }

    /// The fault set in force (counters as consumed so far); `None` for an unknown host.
    pub fn fault(&self, host_id: &str) -> Option<Fault> {
        self.find(host_id).map(|h| h.data().faults.clone())
    }

    /// Whether platform lockdown is enabled; `None` for an unknown host.
    pub fn lockdown(&self, host_id: &str) -> Option<bool> {
        self.find(host_id).map(|h| h.data().lockdown)
    }

    /// The image the host booted at its last power-on: `"os"` or `"discovery"`.
    pub fn booted_image(&self, host_id: &str) -> Option<String> {
        self.find(host_id).map(|h| h.data().booted_image.as_str().to_string())
    }

    /// The System's `PowerState`: `"On"`, `"Off"`, `"PoweringOn"` or `"PoweringOff"`.
    pub fn power_state(&self, host_id: &str) -> Option<String> {
        self.find(host_id).map(|h| h.data().power.as_str().to_string())
    }
}
