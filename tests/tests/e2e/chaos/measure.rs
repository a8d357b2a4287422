//! What the chaos suite measures after a scenario: each host compliant, failed with its expected
//! reason, or lost; components installed more than once (bmc-sim's per-member install counts);
//! and hosts stuck: a request whose workflow is not running (`repair::requests_without_workflow`,
//! settle 0) or an upload slot whose live lease belongs to a workflow that is not running.
//! Owns no scenario: only the judging, the seeded random moments and the table row.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hostfw_store::now_ms;
use hostfw_workflows::HostReprovisionWorkflow;
use temporalio_client::{WorkflowDescribeOptions, WorkflowExecutionStatus};

use hostfw_tests::Site;

/// A small deterministic generator (64-bit LCG): the seed reproduces a run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.next() % (to - from))
    }
}

/// What a scenario expects of each host: the versions it ends with (members not listed are not
/// judged); for the few hosts meant to fail, a text their last recorded reason contains (they end
/// FailedFirmwareUpgrade with their retries spent); for hosts that cannot be fully installed (a
/// component matches no inventory entry), the text of their last reason (they end released, the
/// other components at target).
#[derive(Default)]
pub struct Expect {
    pub targets: BTreeMap<String, Vec<(String, String)>>,
    pub failures: BTreeMap<String, &'static str>,
    pub partial: BTreeMap<String, &'static str>,
    pub max_retries: u32,
}

impl Expect {
    fn at_target(&self, site: &Site, id: &str) -> bool {
        let now = site.fleet.versions(id);
        let want = self.targets.get(id).cloned().unwrap_or_default();
        !want.is_empty() && want.iter().all(|w| now.contains(w))
    }
}

/// One row of the chaos table.
#[derive(Debug, Default)]
pub struct Row {
    pub scenario: String,
    pub hosts: usize,
    pub compliant: usize,
    pub expected_compliant: usize,
    /// Failed with the expected reason, or not fully installable as expected.
    pub failed_as_expected: usize,
    pub expected_failures: usize,
    pub lost: Vec<(String, String)>,
    pub stuck: Vec<(String, String)>,
    pub twice: Vec<(String, String, u64)>,
    pub seconds: f64,
    /// What else the scenario saw (e.g. the most uploads in flight at once).
    pub notes: Vec<String>,
    /// Other broken promises the scenario checked (e.g. more BMC tasks at once than max_uploads).
    pub violations: Vec<String>,
    /// Set when the scenario could not run: the row prints `skipped: <why>`.
    pub skipped: Option<String>,
}

impl Row {
    pub fn skipped(scenario: &str, why: String) -> Row {
        Row { scenario: scenario.to_string(), skipped: Some(why), ..Row::default() }
    }

    pub fn ok(&self) -> bool {
        self.skipped.is_some()
            || (self.lost.is_empty()
                && self.stuck.is_empty()
                && self.twice.is_empty()
                && self.violations.is_empty()
                && self.compliant == self.expected_compliant
                && self.failed_as_expected == self.expected_failures)
    }
}

/// Every host compliant, or failed with its retry budget spent.
pub async fn settled(site: &Site, expect: &Expect) -> bool {
    let Ok(machines) = site.store.machine_list().await else { return false };
    for m in machines {
        let Ok(request) = site.store.request_get(&m.id).await else { return false };
        let done = match request {
            None => expect.at_target(site, &m.id),
            Some(r) => {
                r.retry_count >= expect.max_retries
                    && m.substate == Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade)
            }
        };
        if !done {
            return false;
        }
    }
    true
}

/// Wait (polling, up to `within`) until the scenario settles; false if it never did.
pub async fn wait_settled(site: &Site, expect: &Expect, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if settled(site, expect).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    false
}

/// Judge every host of `site`.
pub async fn judge(site: &Site, expect: &Expect, scenario: &str, started: Instant) -> Row {
    let mut row = Row {
        scenario: scenario.to_string(),
        expected_failures: expect.failures.len() + expect.partial.len(),
        seconds: started.elapsed().as_secs_f64(),
        ..Row::default()
    };
    let machines = site.store.machine_list().await.expect("machines listed");
    row.hosts = machines.len();
    row.expected_compliant = row.hosts - row.expected_failures;
    for m in machines {
        let request = site.store.request_get(&m.id).await.expect("request read");
        let history = site.store.history_list(&m.id, 5).await.expect("history read");
        let last = history.first().map(|h| h.message.clone()).unwrap_or_default();
        let partial = expect.partial.get(&m.id).copied();
        match expect.failures.get(&m.id).copied() {
            None if partial.is_none() && request.is_none() && expect.at_target(site, &m.id) => row.compliant += 1,
            None if partial.is_some_and(|why| last.contains(why))
                && request.is_none()
                && expect.at_target(site, &m.id) =>
            {
                row.failed_as_expected += 1
            }
            Some(reason)
                if request.as_ref().is_some_and(|r| r.retry_count >= expect.max_retries)
                    && m.substate == Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade)
                    && history.iter().any(|h| h.message.contains(reason)) =>
            {
                row.failed_as_expected += 1
            }
            _ => row.lost.push((
                m.id.clone(),
                format!("{}/{}: {last}", m.state, m.substate.map(|s| s.to_string()).unwrap_or_default()),
            )),
        }
    }
    for (host, stats) in site.fleet.stats().per_host {
        for (member, n) in stats.installs {
            if n > 1 {
                row.twice.push((host.clone(), member, n));
            }
        }
    }
    let (stuck, notes) = stuck(site).await;
    row.stuck = stuck;
    row.notes.extend(notes);
    row
}

/// Hosts stuck for good: a request whose workflow is not running, or an upload slot whose live
/// lease belongs to a workflow that is not running. Also returns notes on expired leases left by
/// closed workflows (free for the next taker: not stuck).
pub async fn stuck(site: &Site) -> (Vec<(String, String)>, Vec<String>) {
    let mut found = Vec::new();
    let mut notes = Vec::new();
    match hostfw_activities::repair::requests_without_workflow(&site.store, &site.client, now_ms(), 0).await {
        Ok(findings) => found.extend(findings.iter().map(|f| (f.machine_id().to_string(), f.problem()))),
        Err(e) => found.push((
            "(site)".to_string(),
            format!("requests_without_workflow failed: {}", hostfw_model::error_chain(&e)),
        )),
    }
    let held = site.store.upload_slots_held().await.expect("upload slots read");
    let now = now_ms();
    for slot in held {
        // The holder is `<workflow id>/<component>/<artifact index>`.
        let workflow_id = slot.holder.rsplitn(3, '/').last().unwrap_or_default().to_string();
        let handle = site.client.get_workflow_handle::<HostReprovisionWorkflow>(workflow_id.clone());
        let status = match handle.describe(WorkflowDescribeOptions::default()).await {
            Ok(d) => Some(d.status()),
            Err(_) => None,
        };
        if status == Some(WorkflowExecutionStatus::Running) {
            continue;
        }
        let what = format!("upload slot {} held by {} whose workflow is {status:?}", slot.slot, slot.holder);
        if slot.expires_at_ms >= now {
            found.push((workflow_id, what));
        } else {
            notes.push(format!("{what} (lease expired: free)"));
        }
    }
    (found, notes)
}
