//! `hostfw_build_info{version="…",git_commit="…"} 1`: which build a worker runs, for dashboards
//! and for spotting mixed versions during a rolling upgrade.
//!
//! Owns the version (`CARGO_PKG_VERSION`), the commit (`HOSTFW_GIT_COMMIT`, set by `build.rs`,
//! "unknown" outside git), the newest workflow change the build has (`workflow_changes`, the
//! number `[worker] workflow_changes_through` pins during a rolling upgrade) and the series' text.
//! It must stay pure.

use std::fmt::Write;

pub const BUILD_INFO: &str = "hostfw_build_info";

/// The crate version the worker was built as.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit the worker was built from, or "unknown".
pub const GIT_COMMIT: &str = env!("HOSTFW_GIT_COMMIT");

/// The series with its HELP and TYPE lines.
pub fn render() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP {BUILD_INFO} The running worker's version, git commit and newest workflow change (always 1)."
    );
    let _ = writeln!(out, "# TYPE {BUILD_INFO} gauge");
    let _ = writeln!(
        out,
        "{BUILD_INFO}{{version=\"{}\",git_commit=\"{}\",workflow_changes=\"{}\"}} 1",
        label(VERSION),
        label(GIT_COMMIT),
        hostfw_workflows::versions::newest()
    );
    out
}

/// A label value escaped as the text format requires.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_with_version_and_commit() {
        let page = render();
        let changes = hostfw_workflows::versions::newest();
        let sample = format!(
            "hostfw_build_info{{version=\"{VERSION}\",git_commit=\"{GIT_COMMIT}\",workflow_changes=\"{changes}\"}} 1\n"
        );
        assert!(page.ends_with(&sample), "{page}");
        assert!(!GIT_COMMIT.is_empty() && !VERSION.is_empty());
        assert_eq!(label("a\"b\\c"), "a\\\"b\\\\c");
    }
}
