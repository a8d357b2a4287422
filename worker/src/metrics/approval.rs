//! The approval-deadline series of a scrape (`[machine_updater] approval_deadline`):
//! - `hostfw_approval_overdue_hosts`: assigned hosts still waiting for their tenant's approval
//!   after the deadline (the `escalate` policy keeps them waiting; `plan` lists them);
//! - `hostfw_approval_skipped_hosts`: hosts whose request was given up at the deadline (`skip`)
//!   and that are held until their next window now.
//!
//! Owns these series' names and help texts. It must stay pure and must not decide what is overdue
//! or held (`gates::approval`, through the scheduler's view and plan).

use hostfw_model::gates::{PassInput, Plan};

use super::render::header;

pub const APPROVAL_OVERDUE_HOSTS: &str = "hostfw_approval_overdue_hosts";
pub const APPROVAL_SKIPPED_HOSTS: &str = "hostfw_approval_skipped_hosts";

/// What a scrape shows of the approval deadlines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApprovalSeries {
    pub overdue: usize,
    pub held: usize,
}

impl ApprovalSeries {
    /// The counts of a pass's input and plan.
    pub fn of(input: &PassInput, plan: &Plan) -> ApprovalSeries {
        ApprovalSeries {
            overdue: plan.approval_overdue.len(),
            held: input.approvals.holds.iter().filter(|h| h.until_ms > input.now_ms).count(),
        }
    }
}

/// Append the approval-deadline series to `out`.
pub fn write(out: &mut String, a: ApprovalSeries) {
    use std::fmt::Write;
    let help = "Assigned hosts still waiting for their tenant's approval after the approval deadline.";
    header(out, APPROVAL_OVERDUE_HOSTS, "gauge", help);
    let _ = writeln!(out, "{APPROVAL_OVERDUE_HOSTS} {}", a.overdue);
    let help = "Hosts whose request was given up at the approval deadline (policy skip), held until their next window.";
    header(out, APPROVAL_SKIPPED_HOSTS, "gauge", help);
    let _ = writeln!(out, "{APPROVAL_SKIPPED_HOSTS} {}", a.held);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_gauges_are_written_with_their_counts() {
        let mut out = String::new();
        write(&mut out, ApprovalSeries { overdue: 2, held: 1 });
        assert!(out.contains("# TYPE hostfw_approval_overdue_hosts gauge\nhostfw_approval_overdue_hosts 2\n"), "{out}");
        assert!(out.contains("hostfw_approval_skipped_hosts 1\n"), "{out}");
    }
}
