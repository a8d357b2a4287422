//! Processes on this host as `/proc` shows them: the start time of a pid (so a reused pid is not
//! mistaken for the process it once named), its process group, zombies, the boot id; and the
//! SIGKILL of a whole process group.

/// A process as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// Field 22: start time in clock ticks after boot.
    pub start_ticks: u64,
    /// Field 3 is `Z`: exited, not yet reaped.
    pub zombie: bool,
    /// Field 5: process group.
    pub pgrp: u32,
}

/// `/proc/<pid>/stat` of `pid`, if such a process exists.
pub fn proc_stat(pid: u32) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: fields after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state), so field 22 is fields[19].
    Some(ProcStat {
        zombie: fields.first() == Some(&"Z"),
        pgrp: fields.get(2)?.parse().ok()?,
        start_ticks: fields.get(19)?.parse().ok()?,
    })
}

/// True when a live (not zombie) process is in process group `pgid`. Zombies do not count: an
/// orphan's exit is reaped by init, which in a container may never happen.
pub fn group_has_live_members(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(proc_stat)
        .any(|stat| stat.pgrp == pgid && !stat.zombie)
}

/// This host's boot id, `/proc/sys/kernel/random/boot_id` (empty if unreadable).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// SIGKILL process group `pgid`.
pub fn kill_group(pgid: u32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid) {
        // SAFETY: kill(2) with a negative pid signals that process group; it touches no memory.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}
