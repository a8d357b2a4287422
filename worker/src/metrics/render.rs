//! The Prometheus text exposition (format 0.0.4) of hostfw's own series: `# HELP`, `# TYPE` and
//! samples for every gauge and counter, plus `hostfw_metrics_scrape_error`.
//!
//! Owns series names, help texts, label sets and the text format, and puts the page together
//! (the compliance series are written by `compliance`). It must stay pure (no I/O, no clock): the
//! numbers come in. Labels here are fixed strings only (`target`, `phase`, `result`); the
//! compliance series add catalog names and firmware versions: no machine id, BMC address or
//! credential ever becomes a label.

use std::fmt::Write;

use hostfw_model::ComplianceView;
use hostfw_store::{
    FIRMWARE_UPDATES_TOTAL, HOST_REPROVISION_RETRIES_TOTAL, MANAGER_PASSES_TOTAL, PASS_FAILED, PASS_SUCCEEDED,
    PHASE_COMPLETED, PHASE_FAILED, PHASE_STARTED,
};

/// The scheduler gauges of one scrape, computed from the site database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Drifted hosts without a request.
    pub pending: u32,
    /// Started requests whose retry budget is not spent.
    pub active: u32,
    /// Requests whose retry budget is spent.
    pub exhausted: u32,
    /// Machines consuming the shared budget (`Plan::in_flight`).
    pub in_maintenance: u32,
    /// The site ceiling (`Plan::ceiling.limit`).
    pub ceiling: u32,
    /// Free slots of the ceiling (`Plan::available`).
    pub slots_free: u32,
}

/// The site-wide counters of the `counters` table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub started: i64,
    pub completed: i64,
    pub failed: i64,
    pub retries: i64,
    /// Scheduler passes that ran to their end.
    pub passes_succeeded: i64,
    /// Scheduler passes that returned an error (and were retried).
    pub passes_failed: i64,
}

impl Counters {
    /// Pick hostfw's counters out of `Store::counter_list` rows; absent ones are 0, unknown rows
    /// are ignored.
    pub fn from_rows(rows: &[(String, String, i64)]) -> Counters {
        let get =
            |name: &str, label: &str| rows.iter().find(|(n, l, _)| n == name && l == label).map_or(0, |(_, _, v)| *v);
        Counters {
            started: get(FIRMWARE_UPDATES_TOTAL, PHASE_STARTED),
            completed: get(FIRMWARE_UPDATES_TOTAL, PHASE_COMPLETED),
            failed: get(FIRMWARE_UPDATES_TOTAL, PHASE_FAILED),
            retries: get(HOST_REPROVISION_RETRIES_TOTAL, ""),
            passes_succeeded: get(MANAGER_PASSES_TOTAL, PASS_SUCCEEDED),
            passes_failed: get(MANAGER_PASSES_TOTAL, PASS_FAILED),
        }
    }
}

pub const PENDING: &str = "carbide_pending_host_firmware_update_count";
pub const ACTIVE: &str = "carbide_active_host_firmware_update_count";
pub const EXHAUSTED: &str = "carbide_exhausted_reprovision_retry_count";
pub const IN_MAINTENANCE: &str = "carbide_machines_in_maintenance_count";
pub const CEILING: &str = "carbide_concurrent_machine_updates_available";
pub const SLOTS_FREE: &str = "hostfw_machine_update_slots_free";
pub const UPDATES_TOTAL: &str = "carbide_firmware_updates_total";
pub const RETRIES_TOTAL: &str = "carbide_host_reprovision_retries_total";
pub const PASSES_TOTAL: &str = "hostfw_manager_passes_total";
pub const SCRAPE_ERROR: &str = "hostfw_metrics_scrape_error";

/// The `Content-Type` of the page.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

pub(super) fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn gauge(out: &mut String, name: &str, help: &str, value: u32) {
    header(out, name, "gauge", help);
    let _ = writeln!(out, "{name} {value}");
}

/// The page for one scrape. `None` means that part could not be read: its series are left out
/// (never a made-up 0) and `hostfw_metrics_scrape_error` is 1.
pub fn render(gauges: Option<&Gauges>, counters: Option<&Counters>, compliance: Option<&ComplianceView>) -> String {
    let mut out = String::new();
    if let Some(g) = gauges {
        for (name, help, value) in [
            (PENDING, "Hosts selected as needing firmware work: started by the next pass, or held only by the ceiling or their update window.", g.pending),
            (ACTIVE, "Hosts whose update has started and whose retry budget is not spent (assigned too).", g.active),
            (EXHAUSTED, "Hosts whose retry budget (host_reprovision.max_retries) is spent; they wait for reset-host-reprovisioning (assigned too).", g.exhausted),
            (IN_MAINTENANCE, "Machines consuming the shared maintenance budget.", g.in_maintenance),
            (CEILING, "The computed site-wide concurrency ceiling for machine updates (not what remains).", g.ceiling),
            (SLOTS_FREE, "Slots of the site-wide ceiling not taken by machines in maintenance.", g.slots_free),
        ] {
            gauge(&mut out, name, help, value);
        }
    }
    if let Some(c) = counters {
        let help = "Host firmware updates started, completed and failed, by phase (site-wide).";
        header(&mut out, UPDATES_TOTAL, "counter", help);
        for (phase, value) in [(PHASE_STARTED, c.started), (PHASE_COMPLETED, c.completed), (PHASE_FAILED, c.failed)] {
            let _ = writeln!(out, "{UPDATES_TOTAL}{{target=\"host\",phase=\"{phase}\"}} {value}");
        }
        let help = "Automatic retries of failed host firmware reprovisioning (site-wide).";
        header(&mut out, RETRIES_TOTAL, "counter", help);
        let _ = writeln!(out, "{RETRIES_TOTAL} {}", c.retries);
        let help = "Scheduler (machine update manager) pass attempts by result; failed ones are retried.";
        header(&mut out, PASSES_TOTAL, "counter", help);
        for (result, value) in [(PASS_SUCCEEDED, c.passes_succeeded), (PASS_FAILED, c.passes_failed)] {
            let _ = writeln!(out, "{PASSES_TOTAL}{{result=\"{result}\"}} {value}");
        }
    }
    if let Some(view) = compliance {
        super::compliance::write(&mut out, view);
    }
    let failed = u32::from(gauges.is_none() || counters.is_none() || compliance.is_none());
    let help = "1 when this scrape could not read the site database; some of its hostfw series are then missing.";
    gauge(&mut out, SCRAPE_ERROR, help, failed);
    out
}

#[cfg(test)]
mod tests {
    use super::super::compliance;
    use super::*;

    /// A page split into its parts.
    struct Parsed {
        /// `(name with labels, value)` of every sample.
        samples: Vec<(String, String)>,
        /// Series names of the HELP lines.
        helps: Vec<String>,
        /// `(series name, kind)` of the TYPE lines.
        types: Vec<(String, String)>,
    }

    fn parse(page: &str) -> Parsed {
        let mut p = Parsed { samples: Vec::new(), helps: Vec::new(), types: Vec::new() };
        for line in page.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                p.helps.push(rest.split_once(' ').expect("HELP has text").0.to_string());
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("TYPE has a kind");
                p.types.push((name.to_string(), kind.to_string()));
            } else {
                let (series, value) = line.rsplit_once(' ').expect("sample has a value");
                p.samples.push((series.to_string(), value.to_string()));
            }
        }
        p
    }

    fn value<'a>(samples: &'a [(String, String)], series: &str) -> &'a str {
        let found: Vec<_> = samples.iter().filter(|(s, _)| s == series).collect();
        assert_eq!(found.len(), 1, "{series} appears once");
        &found[0].1
    }

    const GAUGES: Gauges = Gauges { pending: 3, active: 1, exhausted: 2, in_maintenance: 4, ceiling: 5, slots_free: 1 };
    const COUNTERS: Counters =
        Counters { started: 7, completed: 5, failed: 0, retries: 9, passes_succeeded: 12, passes_failed: 3 };

    #[test]
    fn every_series_once_with_help_type_and_its_value() {
        let page = render(Some(&GAUGES), Some(&COUNTERS), Some(&ComplianceView::default()));
        let Parsed { samples, helps, types } = parse(&page);
        let kinds = [
            (PENDING, "gauge"),
            (ACTIVE, "gauge"),
            (EXHAUSTED, "gauge"),
            (IN_MAINTENANCE, "gauge"),
            (CEILING, "gauge"),
            (SLOTS_FREE, "gauge"),
            (UPDATES_TOTAL, "counter"),
            (RETRIES_TOTAL, "counter"),
            (PASSES_TOTAL, "counter"),
            (compliance::DESIRED_INFO, "gauge"),
            (compliance::VERSION_HOSTS, "gauge"),
            (compliance::COMPONENT_HOSTS, "gauge"),
            (SCRAPE_ERROR, "gauge"),
        ];
        for (name, kind) in kinds {
            assert_eq!(helps.iter().filter(|h| *h == name).count(), 1, "one HELP for {name}");
            let typed = types.iter().filter(|(n, k)| n == name && k == kind).count();
            assert_eq!(typed, 1, "one TYPE {kind} for {name}");
        }
        assert_eq!(helps.len(), kinds.len());
        for (series, want) in [
            (PENDING, "3"),
            (ACTIVE, "1"),
            (EXHAUSTED, "2"),
            (IN_MAINTENANCE, "4"),
            (CEILING, "5"),
            (SLOTS_FREE, "1"),
            (RETRIES_TOTAL, "9"),
            (SCRAPE_ERROR, "0"),
            (r#"carbide_firmware_updates_total{target="host",phase="started"}"#, "7"),
            (r#"carbide_firmware_updates_total{target="host",phase="completed"}"#, "5"),
            (r#"carbide_firmware_updates_total{target="host",phase="failed"}"#, "0"),
            (r#"hostfw_manager_passes_total{result="succeeded"}"#, "12"),
            (r#"hostfw_manager_passes_total{result="failed"}"#, "3"),
        ] {
            assert_eq!(value(&samples, series), want, "{series}");
        }
        assert_eq!(samples.len(), 13);
        assert!(page.ends_with('\n'));
    }

    #[test]
    fn a_failed_read_leaves_its_series_out_and_says_so() {
        let page = render(None, Some(&COUNTERS), Some(&ComplianceView::default()));
        let samples = parse(&page).samples;
        assert_eq!(value(&samples, SCRAPE_ERROR), "1");
        assert!(!page.contains(PENDING) && !page.contains(CEILING), "no made-up gauges:\n{page}");
        assert_eq!(value(&samples, RETRIES_TOTAL), "9");
        let page = render(None, None, None);
        assert_eq!(parse(&page).samples, vec![(SCRAPE_ERROR.to_string(), "1".to_string())]);
        // A failed compliance read alone is a scrape error too, and leaves only its series out.
        let page = render(Some(&GAUGES), Some(&COUNTERS), None);
        assert_eq!(value(&parse(&page).samples, SCRAPE_ERROR), "1");
        assert_eq!(value(&parse(&page).samples, PENDING), "3");
        assert!(!page.contains(compliance::COMPONENT_HOSTS), "no made-up compliance series:\n{page}");
    }

    #[test]
    fn counters_come_from_their_rows_and_default_to_zero() {
        let rows = vec![
            (FIRMWARE_UPDATES_TOTAL.to_string(), PHASE_STARTED.to_string(), 4),
            (HOST_REPROVISION_RETRIES_TOTAL.to_string(), String::new(), 2),
            (MANAGER_PASSES_TOTAL.to_string(), PASS_FAILED.to_string(), 5),
            ("something_else".to_string(), PHASE_STARTED.to_string(), 99),
        ];
        assert_eq!(
            Counters::from_rows(&rows),
            Counters { started: 4, completed: 0, failed: 0, retries: 2, passes_succeeded: 0, passes_failed: 5 }
        );
    }
}
