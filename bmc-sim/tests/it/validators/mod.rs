//! Shared by the DMTF validator tests (`conformance.rs`, `protocol_conformance.rs`): where the
//! workspace, `../shared/redfish` and the project's tools venv are, and the "skipped: ..." rule.
//! A missing validator is a skip, unless `HOSTFW_CONFORMANCE_REQUIRED` is set (`make test` sets
//! it, since it installs the validators first): then it is a failure.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::process::Command;

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `../shared/redfish` (CSDL and the captured trees), or `None` (and a "skipped" line).
pub fn shared() -> Option<PathBuf> {
    let dir = workspace().join("../shared/redfish");
    if dir.join("csdl").is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.join("csdl").display());
        None
    }
}

/// The captured tree `name` (the folder holding `redfish/v1`), or `None` (and a "skipped" line).
pub fn tree(shared: &std::path::Path, name: &str) -> Option<PathBuf> {
    let dir = shared.join("vendor-mockups").join(name);
    if dir.join("redfish/v1/index.json").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

/// The tools venv's Python when it can import `module`, or `None` (and a "skipped" line).
/// `HOSTFW_TOOLS_PYTHON` overrides `<workspace>/.tools/bin/python`.
pub fn tools_python(module: &str) -> Option<PathBuf> {
    let python = std::env::var_os("HOSTFW_TOOLS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".tools/bin/python"));
    let found =
        Command::new(&python).args(["-c", &format!("import {module}")]).output().is_ok_and(|o| o.status.success());
    if found {
        return Some(python);
    }
    let why =
        format!("the validator is absent ({} cannot import {module}; scripts/tools.sh installs it)", python.display());
    assert!(std::env::var_os("HOSTFW_CONFORMANCE_REQUIRED").is_none(), "HOSTFW_CONFORMANCE_REQUIRED is set but {why}");
    eprintln!("skipped: {why}");
    None
}
