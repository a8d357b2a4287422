//! The scheduler's pass on the simulated site: the view it reads, the records, and its writes
//! (wave marks and fenced requests) under the store's guards.

use super::*;

impl Site {
    /// The scheduler's view of the site (`site_view::assemble` and `Store::target_records`).
    pub fn view(&self) -> PassInput {
        let mut waits = Vec::new();
        let hosts = self
            .hosts
            .iter()
            .map(|h| {
                if let Some(r) = h.request.as_ref().filter(|r| !r.approved && Site::is_assigned(h)) {
                    waits.push(ApprovalWait { machine_id: h.id.clone(), since_ms: r.requested_at_ms });
                }
                HostView {
                    machine_id: h.id.clone(),
                    state: h.state,
                    assigned: Site::is_assigned(h),
                    auto_update: h.auto_update,
                    window: h.window,
                    has_request: h.request.is_some(),
                    exhausted: h.request.as_ref().is_some_and(|r| r.exhausted),
                    repair: h.repair,
                    unhealthy: Site::unhealthy(h),
                    firmware: self.firmware(h),
                    labels: h.labels.clone(),
                    targets: self.targets(h),
                }
            })
            .collect();
        PassInput {
            now_ms: self.now_ms,
            policy: self.policy.clone(),
            hosts,
            targets: self.records(),
            update_durations: self
                .durations
                .iter()
                .map(|((vendor, model, components), runs)| UpdateDurations {
                    vendor: vendor.clone(),
                    model: model.clone(),
                    components: components.clone(),
                    durations_ms: runs.clone(),
                })
                .collect(),
            approvals: ApprovalFacts { waits, holds: self.holds.clone() },
            brakes: self.brakes.clone(),
        }
    }

    /// `Store::target_records`: one record per target with attempts or a wave record, in the
    /// store's key order (vendor, model, component name, version).
    pub fn records(&self) -> Vec<TargetRecord> {
        let mut targets: Vec<&Target> = self.rows.keys().map(|(t, _)| t).chain(self.wave_records.keys()).collect();
        targets.sort_by(|a, b| {
            (&a.vendor, &a.model, a.component.to_string(), &a.version).cmp(&(
                &b.vendor,
                &b.model,
                b.component.to_string(),
                &b.version,
            ))
        });
        targets.dedup();
        targets
            .into_iter()
            .map(|t| {
                let rows: Vec<(&str, &Row)> = self.rows_of(t).collect();
                let mut failures: Vec<TargetFailure> = rows
                    .iter()
                    .filter_map(|(m, r)| {
                        r.failed_at_ms.map(|at_ms| TargetFailure {
                            machine_id: m.to_string(),
                            reason: "task Exception".into(),
                            at_ms,
                        })
                    })
                    .collect();
                failures.sort_by(|a, b| (a.at_ms, &a.machine_id).cmp(&(b.at_ms, &b.machine_id)));
                TargetRecord {
                    target: t.clone(),
                    attempted_hosts: count(rows.len()),
                    failures,
                    open: rows.iter().filter(|(_, r)| r.open()).map(|(m, _)| m.to_string()).collect(),
                    finished: rows.iter().filter(|(_, r)| r.finished_clean()).map(|(m, _)| m.to_string()).collect(),
                    last_done_ms: rows.iter().filter_map(|(_, r)| r.ended_ms()).max(),
                    last_attempt_ms: rows.iter().map(|(_, r)| r.attempted_at_ms).max(),
                    failed_last: count(rows.iter().filter(|(_, r)| r.failed_last()).count()),
                    waves: self.wave_records.get(t).copied(),
                }
            })
            .collect()
    }

    /// A pass's read (`manager_pass.rs`): the gate fence, then the view, then `gates::plan`.
    pub fn read(&self) -> Read {
        let input = self.view();
        let plan = plan(&input);
        Read { epoch: self.epoch, site: self.clone(), input, plan }
    }

    /// The pass's first write: its wave marks (`Store::target_waves_mark`), each only while the
    /// target has at least the attempts the pass read, and only growing what is recorded; all of
    /// them only while the gate fence is where the pass read it (`None`: it moved, nothing is
    /// written and the pass starts no host). Returns the targets whose mark was dropped (resumed
    /// since the read).
    pub fn write_marks(&mut self, read: &Read) -> Option<Vec<Target>> {
        if self.epoch != read.epoch {
            return None;
        }
        let mut dropped = Vec::new();
        for m in hostfw_model::gates::wave_marks(&read.input, &read.plan) {
            let attempts = count(self.rows_of(&m.target).count());
            if attempts < m.attempted_hosts {
                dropped.push(m.target);
                continue;
            }
            let r = self.wave_records.entry(m.target.clone()).or_insert(m.record);
            r.hosts = r.hosts.max(m.record.hosts);
            r.wave = r.wave.max(m.record.wave);
        }
        Some(dropped)
    }

    /// One start of a pass's plan: the request `Store::request_create_guarded` writes with the
    /// pass's `fence` and freezes honoured, checked in the order the store checks (the machine,
    /// maintenance, a request already there, freezes, failure-domain caps, the fence). After the
    /// fence refused once, the pass makes no more requests (`manager_pass.rs` stops there).
    pub fn write_start(&mut self, read: &Read, fence: &mut Fence, dropped: &[Target], id: &str, by: Writer) -> Outcome {
        if fence.moved {
            return Outcome::FenceMoved;
        }
        let resumed =
            read.input.hosts.iter().any(|h| h.machine_id == id && h.targets.iter().any(|t| dropped.contains(t)));
        if resumed {
            return Outcome::Resumed;
        }
        let Some(h) = self.host(id) else { return Outcome::Removed };
        if let Some(refused) = self.guard(h, true) {
            return refused;
        }
        if self.epoch != fence.expected {
            fence.moved = true;
            return Outcome::FenceMoved;
        }
        self.create_request(id, by);
        fence.expected += 1;
        Outcome::Created
    }

    /// A whole pass with nothing racing it: read, then every write.
    pub fn pass(&mut self, by: Writer) {
        let read = self.read();
        let marked = self.write_marks(&read);
        let mut fence = Fence::new(&read);
        fence.moved = marked.is_none();
        let dropped = marked.unwrap_or_default();
        for id in &read.plan.start {
            self.write_start(&read, &mut fence, &dropped, id, by);
        }
    }

    /// A new request (whoever writes it: the guards are the caller's). It ends the host's
    /// approval hold and moves the gate fence, like `request_create_guarded`.
    pub(super) fn create_request(&mut self, id: &str, by: Writer) {
        let now = self.now_ms;
        let Some(h) = self.hosts.iter_mut().find(|h| h.id == id) else { return };
        let assigned = Site::is_assigned(h);
        h.request = Some(Request {
            by,
            requested_at_ms: now,
            approved: !assigned,
            retries: 0,
            exhausted: false,
            current: None,
        });
        self.run_started.insert(id.to_string(), now);
        self.holds.retain(|x| x.machine_id != id);
        self.epoch += 1;
    }

    /// What `Store::request_create_guarded` refuses before it writes, the fence aside: a host in
    /// maintenance, one with a request, one a freeze in force covers (with `honour_freezes`: the
    /// machine's own vendor and model, whatever its targets), one in a failure domain at its cap.
    pub(super) fn guard(&self, h: &Host, honour_freezes: bool) -> Option<Outcome> {
        if h.state == HostState::Maintenance {
            return Some(Outcome::Maintenance);
        }
        if h.request.is_some() {
            return Some(Outcome::Requested);
        }
        let frozen = covering(&self.brakes.freezes, Some(&h.vendor_name), Some(&h.model_name), &h.labels);
        if let Some(f) = frozen.filter(|_| honour_freezes) {
            return Some(Outcome::Frozen(f.id));
        }
        let (key, value) = self.cap_full(h)?;
        Some(Outcome::LabelCap(key, value))
    }

    /// The failure domain of `h` that is at its cap now (`labels::cap_check_in`: the in-flight
    /// hosts sharing the value of a capped key), if any.
    pub fn cap_full(&self, h: &Host) -> Option<(String, String)> {
        self.policy.label_caps.iter().find_map(|(key, limit)| {
            let value = h.labels.get(key)?;
            let held = self.hosts.iter().filter(|o| Site::in_flight(o) && o.labels.get(key) == Some(value)).count();
            (count(held) >= *limit).then(|| (key.clone(), value.clone()))
        })
    }
}
