//! Process identity on this host: a pid together with its start time (clock ticks after boot,
//! `/proc/<pid>/stat` field 22) and the boot id, so a pid reused by another process, or a record
//! from before a reboot, is never mistaken for the process it names; and whether such a process,
//! or a live member of its process group, still runs. (The worker's Core-local script lock,
//! `hostfw_activities::script_lock`, applies the same rules; both read `/proc` through
//! `hostfw_script_runner::process`.)

use hostfw_script_runner::process::{group_has_live_members, proc_stat};
use serde::{Deserialize, Serialize};

/// One process, identified for as long as the host runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`.
    pub start_ticks: u64,
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
}

/// This host's boot id (empty if unreadable).
pub fn boot_id() -> String {
    hostfw_script_runner::process::boot_id()
}

impl ProcessId {
    /// The identity of running process `pid`, if it runs.
    pub fn of(pid: u32) -> Option<ProcessId> {
        Some(ProcessId { pid, start_ticks: proc_stat(pid)?.start_ticks, boot_id: boot_id() })
    }

    /// This process.
    pub fn current() -> Option<ProcessId> {
        ProcessId::of(std::process::id())
    }

    /// True while this very process, or a live member of the process group it leads, runs.
    /// Zombies count as ended (an orphan's exit may never be reaped in a container).
    pub fn group_alive(&self) -> bool {
        if self.boot_id != boot_id() {
            return false;
        }
        match proc_stat(self.pid) {
            Some(s) if !s.zombie && s.start_ticks == self.start_ticks => true,
            // The pid runs another process: the number was free, so the group is gone.
            Some(s) if !s.zombie => false,
            _ => group_has_live_members(self.pid),
        }
    }
}
