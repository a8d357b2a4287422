//! What happens between passes ([`Event`]): operators, tenants, host workflows and the explorer
//! changing the simulated site, each refused the way the real command refuses it.

use super::*;

impl Site {
    fn pick(&self, i: u8) -> Option<usize> {
        (!self.hosts.is_empty()).then(|| usize::from(i) % self.hosts.len())
    }

    /// Applies one event (refused ones change nothing, as the real commands refuse them). Those
    /// that can tighten a gate for a host not yet started move the gate fence when they change
    /// something. `Event::Pass` runs a whole pass here (`properties::evolve` runs it itself, to
    /// check it).
    pub fn apply(&mut self, event: &Event) {
        self.log.push(format!("{event:?}"));
        match event {
            Event::AddHost(spec) => {
                let spec = HostSpec { request: None, ..spec.clone() };
                self.add_host(&spec);
            }
            Event::RemoveHost(i) => {
                if let Some(i) = self.pick(*i).filter(|&i| self.hosts[i].request.is_none()) {
                    let id = self.hosts.remove(i).id;
                    self.holds.retain(|h| h.machine_id != id);
                }
            }
            Event::Explore(i, ok) => {
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].explored = if *ok { Explored::Ok } else { Explored::Failed };
                }
            }
            Event::Progress(i) => {
                if let Some(i) = self.pick(*i) {
                    self.progress(i);
                }
            }
            Event::Tick => {
                for i in 0..self.hosts.len() {
                    self.progress(i);
                }
            }
            Event::Fail(i) => {
                if let Some(i) = self.pick(*i) {
                    self.fail(i);
                }
            }
            Event::Abort(i, to_maintenance) => {
                if let Some(i) = self.pick(*i).filter(|&i| self.hosts[i].request.is_some()) {
                    self.end_run(i, *to_maintenance);
                }
            }
            Event::Reset(i) => {
                if let Some(r) = self.pick(*i).and_then(|i| self.hosts[i].request.as_mut()) {
                    r.retries = 0;
                    r.exhausted = false;
                    r.current = None;
                }
            }
            Event::Clear(i) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    if h.request.as_ref().is_some_and(|r| !r.approved) {
                        h.request = None;
                        self.run_started.remove(&h.id);
                    }
                }
            }
            Event::Maintenance(i, enter) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    match (enter, h.state) {
                        (true, HostState::Ready | HostState::Assigned) if h.request.is_none() => {
                            h.state = HostState::Maintenance;
                            self.epoch += 1;
                        }
                        (false, HostState::Maintenance) => {
                            h.state = if h.instance { HostState::Assigned } else { HostState::Ready };
                            h.repair = false;
                        }
                        _ => {}
                    }
                }
            }
            Event::Window(i, w) => {
                let now = self.now_ms;
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].window = w.map(|w| window_at(now, w));
                    self.epoch += 1;
                }
            }
            Event::Health(i, on) => {
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].health_report = *on;
                }
            }
            Event::Assign(i, on) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    if h.request.is_none() && matches!(h.state, HostState::Ready | HostState::Assigned) {
                        h.instance = *on;
                        h.state = if *on { HostState::Assigned } else { HostState::Ready };
                    }
                }
            }
            Event::AutoUpdate(i, o) => {
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].auto_update = *o;
                }
            }
            Event::CatalogDefault(m, c, v) => {
                if let Some(m) = self.catalog.get_mut(usize::from(*m)) {
                    if let Some(d) = m.defaults.get_mut(&component(*c)) {
                        // A new catalog version (`firmware_config`), whatever it changed.
                        *d = v.to_string();
                        self.epoch += 1;
                    }
                }
            }
            Event::Freeze(f) => self.freeze(f),
            Event::Unfreeze(i) => {
                if !self.brakes.freezes.is_empty() {
                    let i = usize::from(*i) % self.brakes.freezes.len();
                    self.brakes.freezes.remove(i);
                }
            }
            Event::Pause(i) => {
                let targets = self.pausable();
                if let Some(t) = targets.get(usize::from(*i) % targets.len().max(1)) {
                    if !self.brakes.pauses.iter().any(|p| &p.target == t) {
                        self.brakes.pauses.push(OperatorPause {
                            target: t.clone(),
                            by: "olga".into(),
                            reason: "watching".into(),
                            at_ms: self.now_ms,
                        });
                        self.brakes.pauses.sort_by(|a, b| a.target.cmp(&b.target));
                        self.epoch += 1;
                    }
                }
            }
            Event::Resume(i) => {
                let targets = self.resumable();
                if let Some(t) = targets.get(usize::from(*i) % targets.len().max(1)).cloned() {
                    self.rows.retain(|(rt, _), _| rt != &t);
                    self.wave_records.remove(&t);
                    self.brakes.pauses.retain(|p| p.target != t);
                    *self.resumes.entry(t).or_default() += 1;
                    self.epoch += 1;
                }
            }
            Event::Direct(i) => {
                if let Some(i) = self.pick(*i) {
                    self.direct(i);
                }
            }
            Event::DirectIgnoringGates(i) => {
                if let Some(i) = self.pick(*i) {
                    self.direct_ignoring_gates(i);
                }
            }
            Event::Pass { .. } => self.pass(Writer::Pass),
            Event::VersionReported(i, c, reported) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    if *reported {
                        h.unreported.remove(&component(*c));
                    } else {
                        h.unreported.insert(component(*c));
                    }
                }
            }
            Event::DeadlineSkip(i) => {
                if let Some(i) = self.pick(*i) {
                    self.deadline_skip(i);
                }
            }
            Event::Limits(a, p) => self.policy.limits = limits(*a, *p),
        }
    }

    /// The targets `Event::Pause` picks from: those some host would install, in target order.
    pub fn pausable(&self) -> Vec<Target> {
        let targets: BTreeSet<Target> = self.hosts.iter().flat_map(|h| self.targets(h)).collect();
        targets.into_iter().collect()
    }

    /// The targets `Event::Resume` picks from: on record or paused, in target order.
    pub fn resumable(&self) -> Vec<Target> {
        let mut targets: BTreeSet<Target> = self.rows.keys().map(|(t, _)| t.clone()).collect();
        targets.extend(self.wave_records.keys().cloned());
        targets.extend(self.brakes.pauses.iter().map(|p| p.target.clone()));
        targets.into_iter().collect()
    }

    /// Minutes since the scenario began.
    pub fn minutes(&self) -> i64 {
        (self.now_ms - START_MS) / MIN
    }

    /// Moves the clock.
    pub fn advance(&mut self, minutes: u16) {
        self.now_ms += i64::from(minutes) * MIN;
    }

    pub(super) fn freeze(&mut self, f: &FreezeSpec) {
        let case = |s: &str| if f.other_case { s.to_uppercase() } else { s.to_string() };
        let scope = match f.kind % 3 {
            0 => FreezeScope::Site,
            1 => {
                let Some(m) = self.catalog.get(usize::from(f.model) % self.catalog.len().max(1)) else { return };
                FreezeScope::Model { vendor: f.with_vendor.then(|| case(&m.vendor)), model: case(&m.model) }
            }
            _ => {
                let l = usize::from(f.label);
                let (key, value) = if l < RACKS.len() {
                    ("rack", RACKS[l])
                } else if l < RACKS.len() + POWER.len() {
                    ("power", POWER[l - RACKS.len()])
                } else {
                    ("canary", "true")
                };
                FreezeScope::Label { key: key.into(), value: value.into() }
            }
        };
        self.brakes.freezes.push(Freeze {
            id: self.next_freeze,
            scope,
            reason: "change freeze".into(),
            drain: f.drain,
            by: "alice".into(),
            at_ms: self.now_ms,
        });
        self.next_freeze += 1;
        self.epoch += 1;
    }

    /// The host workflow's next step.
    fn progress(&mut self, i: usize) {
        let now = self.now_ms;
        let next = self.targets(&self.hosts[i]).into_iter().next();
        let h = &mut self.hosts[i];
        let Some(r) = h.request.as_mut() else { return };
        if r.exhausted {
            return;
        }
        match h.explored {
            // The workflow's inventory refresh fails: it waits and tries again.
            Explored::Failed => return,
            // Its first inventory read explores the host.
            Explored::Not => {
                h.explored = Explored::Ok;
                return;
            }
            Explored::Ok => {}
        }
        if !r.approved {
            // The tenant approves (or the autoreboot period begins).
            r.approved = true;
            h.state = HostState::HostReprovision;
            return;
        }
        if h.state != HostState::HostReprovision {
            // Protect: the health marker and the update state.
            h.state = HostState::HostReprovision;
            return;
        }
        match (r.current.take(), next) {
            // Installed and verified.
            (Some(t), _) => {
                h.versions.insert(t.component, t.version.clone());
            }
            // Plan the next component: its attempt goes on record.
            (None, Some(t)) => {
                r.current = Some(t.clone());
                let key = (t, h.id.clone());
                if !self.rows.contains_key(&key) {
                    // One more attempted host: it may spend the target's error budget.
                    self.epoch += 1;
                }
                let row = self.rows.entry(key).or_insert(Row {
                    attempted_at_ms: now,
                    failed_at_ms: None,
                    finished_at_ms: None,
                });
                // After the restore that ended the last attempt (an abort, then a new request in
                // the same step): the database's clock has moved on since, so the row reads open.
                row.attempted_at_ms = if row.finished_at_ms == Some(now) { now + 1 } else { now };
            }
            // Nothing left to install: restore.
            (None, None) => self.end_run(i, false),
        }
    }

    fn fail(&mut self, i: usize) {
        let now = self.now_ms;
        let h = &mut self.hosts[i];
        let Some(r) = h.request.as_mut() else { return };
        let Some(t) = r.current.take().filter(|_| !r.exhausted) else { return };
        if let Some(row) = self.rows.get_mut(&(t, h.id.clone())) {
            if row.failed_at_ms.is_none_or(|f| f < row.attempted_at_ms) {
                // A failure on record may spend the target's budget or hold its wave.
                row.failed_at_ms = Some(now);
                self.epoch += 1;
            }
        }
        r.retries += 1;
        r.exhausted = r.retries >= RETRIES;
    }

    /// The run ends: restore (or an abort, to maintenance for repair). Every open attempt ends
    /// first, then the request goes; a run that ended well is a duration for window fit.
    fn end_run(&mut self, i: usize, to_maintenance: bool) {
        let now = self.now_ms;
        let id = self.hosts[i].id.clone();
        // `Store::target_finish` moves the gate fence: a run that ended moves window fit's past
        // durations.
        self.epoch += 1;
        let mut components = Vec::new();
        let started = self.run_started.remove(&id);
        for ((t, m), row) in self.rows.iter_mut() {
            if *m == id && row.finished_at_ms.is_none_or(|f| f < row.attempted_at_ms) {
                row.finished_at_ms = Some(now);
                if started.is_some_and(|s| row.attempted_at_ms >= s) && !row.failed_last() {
                    components.push(t.component);
                }
            }
        }
        let h = &mut self.hosts[i];
        let steady = if h.instance { HostState::Assigned } else { HostState::Ready };
        if to_maintenance {
            h.state = HostState::Maintenance;
            h.repair = true;
        } else {
            h.state = steady;
        }
        h.request = None;
        if let (Some(start), false, Some(m)) = (started, to_maintenance || components.is_empty(), h.model) {
            components.sort_by_key(|c| c.to_string());
            components.dedup();
            let m = &self.catalog[m];
            let runs = self.durations.entry((m.vendor.clone(), m.model.clone(), components)).or_default();
            runs.push(now - start);
            if runs.len() > 100 {
                runs.remove(0);
            }
        }
    }

    /// `host reprovision set`, refused the way the CLI (the rollout gates from a fresh plan) and
    /// the store (its guard, freezes honoured) refuse it. Its check and its write are one step
    /// here: it never races itself.
    fn direct(&mut self, i: usize) {
        let h = &self.hosts[i];
        if self.guard(h, true).is_some() {
            return;
        }
        // The rollout gates (freezes, pauses, full waves) from a fresh plan.
        let input = self.view();
        let p = plan(&input);
        if !rollout_holds(&p, &input.hosts[i]).is_empty() {
            return;
        }
        let id = h.id.clone();
        self.create_request(&id, Writer::Direct);
    }

    /// `host reprovision set --ignore-rollout-gates`: the store's guard only (maintenance, a
    /// request already there, failure-domain caps; freezes not honoured).
    fn direct_ignoring_gates(&mut self, i: usize) {
        let h = &self.hosts[i];
        if self.guard(h, false).is_some() {
            return;
        }
        let id = h.id.clone();
        self.create_request(&id, Writer::DirectIgnoringGates);
    }

    /// The approval deadline of a waiting request passed under `skip`: given up, and the host is
    /// held until its next window (`gates::hold_until`).
    fn deadline_skip(&mut self, i: usize) {
        let deadline: ApprovalDeadline = self.policy.approval_deadline;
        let now = self.now_ms;
        let h = &mut self.hosts[i];
        let Some(r) = h.request.as_ref() else { return };
        let due = deadline.deadline_ms(r.requested_at_ms).is_some_and(|d| d <= now);
        if r.approved || deadline.policy != DeadlinePolicy::Skip || !due {
            return;
        }
        h.request = None;
        self.run_started.remove(&h.id);
        let until_ms = hold_until(now, h.window, None, deadline.after_ms);
        self.holds.retain(|x| x.machine_id != h.id);
        self.holds.push(ApprovalHold { machine_id: h.id.clone(), skipped_at_ms: now, until_ms });
    }
}
