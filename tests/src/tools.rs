//! Where the tools the kit runs are: the pinned Temporal CLI (installed by `scripts/tools.sh`) and
//! the `hostfw-worker` binary; and free local ports.

use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `<root>/tests`).
pub fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

/// The pinned Temporal CLI: `$HOSTFW_TEMPORAL_CLI`, else `<root>/.tools/bin/temporal` (which
/// `make test` installs). Panics when neither exists.
pub fn temporal_cli() -> PathBuf {
    if let Ok(p) = std::env::var("HOSTFW_TEMPORAL_CLI") {
        return PathBuf::from(p);
    }
    let p = workspace_root().join(".tools/bin/temporal");
    assert!(
        p.exists(),
        "the Temporal CLI is missing at {}: run `make test` (it installs it) or set HOSTFW_TEMPORAL_CLI",
        p.display()
    );
    p
}

/// The `hostfw-worker` binary of the debug build: `$HOSTFW_WORKER_BIN`, else
/// `target/debug/hostfw-worker` (`cargo build --workspace --bins`). Panics when it is missing.
pub fn worker_bin() -> PathBuf {
    worker_bin_of("debug")
}

/// The `hostfw-worker` binary: `$HOSTFW_WORKER_BIN`, else `target/<profile>/hostfw-worker`.
/// Panics when it is missing.
pub fn worker_bin_of(profile: &str) -> PathBuf {
    find_worker_bin(profile).unwrap_or_else(|e| panic!("{e}"))
}

/// Like [`worker_bin_of`], an error when the binary is missing.
pub fn find_worker_bin(profile: &str) -> anyhow::Result<PathBuf> {
    if let Ok(p) = std::env::var("HOSTFW_WORKER_BIN") {
        let p = PathBuf::from(p);
        anyhow::ensure!(p.is_file(), "HOSTFW_WORKER_BIN={} is not a file", p.display());
        return Ok(p);
    }
    let p = workspace_root().join("target").join(profile).join("hostfw-worker");
    anyhow::ensure!(
        p.is_file(),
        "the hostfw-worker binary is missing at {}: run `cargo build{} --workspace --bins` or set HOSTFW_WORKER_BIN",
        p.display(),
        if profile == "release" { " --release" } else { "" }
    );
    Ok(p)
}

/// A local TCP port nobody listens on right now.
///
/// The port is free when asked, not reserved: it is only bound later by whoever uses it. So that
/// two callers in one process (an artifact server and a metrics listener set up one after the
/// other) never get the same port, a port is handed out at most once per process.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let port =
            TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port");
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The process holding a listening TCP socket on `port` (from /proc/net/tcp{,6} and /proc/*/fd).
pub fn listener_pid(port: u16) -> Option<u32> {
    let local = format!(":{port:04X}");
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() > 9 && cols[1].ends_with(&local) && cols[3] == "0A" {
                inodes.push(format!("socket:[{}]", cols[9]));
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if inodes.iter().any(|i| target.as_os_str() == i.as_str()) {
                    return Some(pid);
                }
            }
        }
    }
    None
}
