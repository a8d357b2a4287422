//! The compliance series of a scrape (the numbers of `hostfw compliance`, from
//! `hostfw_activities::compliance_read`), per catalog vendor/model and component:
//! - `hostfw_component_desired_version_info{vendor,model,component,version} 1`: the catalog
//!   default;
//! - `hostfw_component_version_hosts{vendor,model,component,version}`: hosts running each
//!   version (`version="(not reported)"` for members that report none);
//! - `hostfw_component_hosts{vendor,model,component,status}`: hosts per status, every status of
//!   `ComplianceStatus` (compliant, drifted, pending, active, failed, exhausted, not_reported,
//!   unmatched), zeros included, so a panel never loses a series when a count drops to 0.
//!
//! Owns these series' names, help texts, labels and the escaping of label values. Its labels are
//! catalog names and firmware versions only, never a machine id, BMC address or credential. It
//! must stay pure (the view comes in) and must not count anything (`hostfw_model::compliance`).

use std::fmt::Write;

use hostfw_model::{ComplianceStatus, ComplianceView, ComponentCompliance};

use super::render::header;

pub const DESIRED_INFO: &str = "hostfw_component_desired_version_info";
pub const VERSION_HOSTS: &str = "hostfw_component_version_hosts";
pub const COMPONENT_HOSTS: &str = "hostfw_component_hosts";

/// The `version` label of members whose version is not reported.
pub const NOT_REPORTED_VERSION: &str = "(not reported)";

/// Append the compliance series of `view` to `out`.
pub fn write(out: &mut String, view: &ComplianceView) {
    header(out, DESIRED_INFO, "gauge", "The catalog default version of each vendor/model component (value 1).");
    for row in &view.components {
        let _ = writeln!(out, "{DESIRED_INFO}{{{},version=\"{}\"}} 1", row_labels(row), escape(&row.desired));
    }
    let help = "Hosts running each firmware version, per vendor/model component (from the stored inventories).";
    header(out, VERSION_HOSTS, "gauge", help);
    for row in &view.components {
        for v in &row.versions {
            let version = escape(v.version.as_deref().unwrap_or(NOT_REPORTED_VERSION));
            let _ = writeln!(out, "{VERSION_HOSTS}{{{},version=\"{version}\"}} {}", row_labels(row), v.hosts);
        }
    }
    let help = "Hosts per compliance status, per vendor/model component (see hostfw compliance; failed hosts are \
                also active).";
    header(out, COMPONENT_HOSTS, "gauge", help);
    for row in &view.components {
        for &status in ComplianceStatus::ALL {
            let value = row.counts.get(status);
            let _ = writeln!(out, "{COMPONENT_HOSTS}{{{},status=\"{status}\"}} {value}", row_labels(row));
        }
    }
}

fn row_labels(row: &ComponentCompliance) -> String {
    format!(
        "vendor=\"{}\",model=\"{}\",component=\"{}\"",
        escape(&row.vendor),
        escape(&row.model),
        row.component.as_str()
    )
}

/// A label value in the text format: backslash, double quote and line feed escaped.
pub(super) fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use hostfw_model::{ComponentType, HostCounts, RunningVersion};

    use super::*;

    fn view() -> ComplianceView {
        let counts =
            HostCounts { hosts: 3, compliant: 1, drifted: 2, pending: 1, exhausted: 1, ..HostCounts::default() };
        ComplianceView {
            components: vec![ComponentCompliance {
                vendor: "Dell".into(),
                model: "PowerEdge \"R760\"".into(),
                component: ComponentType::Bmc,
                desired: "2.0".into(),
                versions: vec![
                    RunningVersion { version: Some("1.0\\beta".into()), hosts: 2 },
                    RunningVersion { version: Some("2.0".into()), hosts: 1 },
                    RunningVersion { version: None, hosts: 1 },
                ],
                counts,
            }],
            not_explored: 0,
            no_catalog_entry: 0,
        }
    }

    #[test]
    fn every_status_every_version_and_the_desired_one_escaped() {
        let mut page = String::new();
        write(&mut page, &view());
        let labels = r#"vendor="Dell",model="PowerEdge \"R760\"",component="bmc""#;
        for line in [
            format!("{DESIRED_INFO}{{{labels},version=\"2.0\"}} 1"),
            format!("{VERSION_HOSTS}{{{labels},version=\"1.0\\\\beta\"}} 2"),
            format!("{VERSION_HOSTS}{{{labels},version=\"2.0\"}} 1"),
            format!("{VERSION_HOSTS}{{{labels},version=\"(not reported)\"}} 1"),
            format!("{COMPONENT_HOSTS}{{{labels},status=\"compliant\"}} 1"),
            format!("{COMPONENT_HOSTS}{{{labels},status=\"drifted\"}} 2"),
            format!("{COMPONENT_HOSTS}{{{labels},status=\"pending\"}} 1"),
            format!("{COMPONENT_HOSTS}{{{labels},status=\"active\"}} 0"),
            format!("{COMPONENT_HOSTS}{{{labels},status=\"exhausted\"}} 1"),
            format!("{COMPONENT_HOSTS}{{{labels},status=\"unmatched\"}} 0"),
        ] {
            assert_eq!(page.lines().filter(|l| *l == line).count(), 1, "{line} once in\n{page}");
        }
        let samples = page.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(samples, 1 + 3 + ComplianceStatus::ALL.len());
        for name in [DESIRED_INFO, VERSION_HOSTS, COMPONENT_HOSTS] {
            assert!(page.contains(&format!("# TYPE {name} gauge\n")), "{name} typed:\n{page}");
        }
    }

    #[test]
    fn an_empty_catalog_has_the_headers_only() {
        let mut page = String::new();
        write(&mut page, &ComplianceView::default());
        assert!(page.lines().all(|l| l.starts_with('#')), "{page}");
    }
}
