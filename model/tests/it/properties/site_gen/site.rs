//! The simulated site: its catalog, hosts, requests and records, how it is built from a
//! [`SiteSpec`], and the facts the site database and the explorer give about it.

use super::*;

/// One catalog model as the catalog holds it now.
#[derive(Debug, Clone)]
pub struct CatalogModel {
    pub vendor: String,
    pub model: String,
    pub explicit_start_needed: bool,
    /// Default version of each of its components.
    pub defaults: BTreeMap<ComponentType, String>,
}

/// What the site explorer last found on a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explored {
    Not,
    Failed,
    Ok,
}

/// Who wrote a request: the invariants tell the pass's starts from the operator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// On record when the scenario began.
    Before,
    /// A pass of the scheduler (the one checked, or one among a step's events).
    Pass,
    /// A pass that ran during another pass's writes (`Event::Pass` in a race).
    RacingPass,
    /// `host reprovision set`, the rollout gates honoured.
    Direct,
    /// `host reprovision set --ignore-rollout-gates`.
    DirectIgnoringGates,
}

/// A host's reprovisioning request (the `reprovision_requests` row and its workflow's state).
#[derive(Debug, Clone)]
pub struct Request {
    pub by: Writer,
    pub requested_at_ms: i64,
    /// An assigned host's request starts once its tenant approves; others at once.
    pub approved: bool,
    pub retries: u32,
    pub exhausted: bool,
    /// The component the workflow is installing (its attempt is on record).
    pub current: Option<Target>,
}

/// One machine of the site.
#[derive(Debug, Clone)]
pub struct Host {
    pub id: String,
    /// The catalog model it reports, if the catalog knows it.
    pub model: Option<usize>,
    pub vendor_name: String,
    pub model_name: String,
    pub explored: Explored,
    /// Reported version per component.
    pub versions: BTreeMap<ComponentType, String>,
    /// A component no inventory member matches.
    pub missing: Option<ComponentType>,
    /// Components whose inventory member reports no version.
    pub unreported: BTreeSet<ComponentType>,
    /// A tenant instance runs on it.
    pub instance: bool,
    pub state: HostState,
    pub auto_update: Option<bool>,
    pub window: Option<TimeWindow>,
    pub labels: Labels,
    pub request: Option<Request>,
    /// Someone else's health report is on it.
    pub health_report: bool,
    /// Marked for hands-on repair (an abort to maintenance) until it leaves maintenance.
    pub repair: bool,
}

/// One `target_hosts` row: a host's attempt of a target.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub attempted_at_ms: i64,
    pub failed_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
}

impl Row {
    /// Not failed nor finished since it was (last) attempted.
    pub fn open(&self) -> bool {
        self.failed_at_ms.is_none_or(|f| f < self.attempted_at_ms)
            && self.finished_at_ms.is_none_or(|f| f < self.attempted_at_ms)
    }

    /// Its latest attempt failed.
    pub fn failed_last(&self) -> bool {
        self.failed_at_ms.is_some_and(|f| f >= self.attempted_at_ms)
    }

    /// Its latest attempt finished and it never failed the target (`Store::target_records`'
    /// `finished`).
    pub fn finished_clean(&self) -> bool {
        self.failed_at_ms.is_none() && self.finished_at_ms.is_some_and(|f| f >= self.attempted_at_ms)
    }

    /// When its latest attempt ended, if it did.
    pub fn ended_ms(&self) -> Option<i64> {
        self.finished_at_ms.max(self.failed_at_ms)
    }
}

/// The whole simulated site between two passes.
#[derive(Debug, Clone)]
pub struct Site {
    pub now_ms: i64,
    pub policy: SchedulingPolicy,
    pub catalog: Vec<CatalogModel>,
    /// In machine id order.
    pub hosts: Vec<Host>,
    /// `target_hosts`: (target, machine id) → the attempt.
    pub rows: BTreeMap<(Target, String), Row>,
    /// `target_waves`.
    pub wave_records: BTreeMap<Target, WaveRecord>,
    /// Past runs per (vendor, model, component set), ms.
    pub durations: BTreeMap<(String, String, Vec<ComponentType>), Vec<i64>>,
    pub holds: Vec<ApprovalHold>,
    pub brakes: Brakes,
    /// How often each target was resumed (`hostfw budget resume` clears its record).
    pub resumes: BTreeMap<Target, u32>,
    /// When each host's current run began (its request's creation), for the durations.
    pub run_started: BTreeMap<String, i64>,
    /// The gate fence (`gate_fence.epoch`): moved by every write that can tighten a gate for a
    /// host not yet started.
    pub epoch: u64,
    next_host: u32,
    pub(super) next_freeze: i64,
    /// What happened since the last pass, for failure messages.
    pub log: Vec<String>,
}

/// What a pass read: the gate fence first, then the site, its view and the plan made from it.
#[derive(Debug, Clone)]
pub struct Read {
    pub epoch: u64,
    pub site: Site,
    pub input: PassInput,
    pub plan: Plan,
}

/// Where a pass's requests stand against the gate fence (`GateFence`).
#[derive(Debug, Clone, Copy)]
pub struct Fence {
    /// The epoch the pass's next request expects: the one it read, plus one per request it made.
    pub expected: u64,
    /// The fence refused a request: the rest of the plan waits for the next pass.
    pub moved: bool,
}

impl Fence {
    pub fn new(read: &Read) -> Fence {
        Fence { expected: read.epoch, moved: false }
    }
}

/// What became of one start of a pass's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The request was written (and the fence moved).
    Created,
    /// Another write moved the fence since the pass read it (or refused an earlier start).
    FenceMoved,
    /// A target it would install was resumed since the read: its wave mark was dropped.
    Resumed,
    /// The host left the site.
    Removed,
    Maintenance,
    /// It has a request already.
    Requested,
    /// A freeze in force covers it (its id).
    Frozen(i64),
    /// Its failure domain is at its cap (key, value).
    LabelCap(String, String),
}

pub(super) fn component(i: u8) -> ComponentType {
    COMPONENTS[usize::from(i) % COMPONENTS.len()]
}

pub(super) fn window_at(now_ms: i64, (offset, len): (i16, u16)) -> TimeWindow {
    let start_ms = now_ms + i64::from(offset) * MIN;
    TimeWindow { start_ms, end_ms: start_ms + i64::from(len.max(1)) * MIN }
}

pub(super) fn wave_policy(index: u8, soak_min: u16) -> WavePolicy {
    let list = WAVE_LISTS[usize::from(index) % WAVE_LISTS.len()];
    WavePolicy {
        waves: list.iter().map(|s| s.parse::<WaveSize>().expect("a valid wave")).collect(),
        soak_ms: i64::from(soak_min) * MIN,
    }
}

pub(super) fn limits(absolute: Option<u8>, percent: Option<u8>) -> CeilingLimits {
    CeilingLimits { absolute: absolute.map(u32::from), percent: percent.map(|p| u32::from(p.clamp(1, 100))) }
}

impl Site {
    /// The site a scenario begins with.
    pub fn new(spec: &SiteSpec) -> Site {
        let p = &spec.policy;
        let mut label_caps = BTreeMap::new();
        if let Some(n) = p.rack_cap {
            label_caps.insert("rack".to_string(), u32::from(n));
        }
        if let Some(n) = p.power_cap {
            label_caps.insert("power".to_string(), u32::from(n));
        }
        let policy = SchedulingPolicy {
            autoupdate: p.autoupdate,
            instance_updates_manual_tagging: p.manual_tagging,
            host_disable_autoupdate: Vec::new(),
            limits: limits(p.absolute, p.percent),
            label_caps,
            error_budget: ErrorBudget {
                failed_hosts: u32::from(p.budget.0),
                failed_percent: u32::from(p.budget.1),
                min_hosts: u32::from(p.budget.2),
            },
            waves: wave_policy(p.waves, p.soak_min),
            window_fit_min_samples: u32::from(p.window_fit_min_samples),
            approval_deadline: hostfw_model::gates::ApprovalDeadline {
                after_ms: i64::from(p.deadline_min) * MIN,
                policy: if p.deadline_skip { DeadlinePolicy::Skip } else { DeadlinePolicy::Escalate },
            },
            max_hosts_in_repair: p.max_hosts_in_repair.map(u32::from),
        };
        let catalog: Vec<CatalogModel> = spec
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| CatalogModel {
                vendor: VENDORS[usize::from(m.vendor) % VENDORS.len()].to_string(),
                model: format!("M{i}"),
                explicit_start_needed: m.explicit_start_needed,
                defaults: (0..3u8)
                    .filter(|c| m.components & (1 << c) != 0)
                    .map(|c| (component(c), m.defaults[usize::from(c)].to_string()))
                    .collect(),
            })
            .collect();
        let mut durations = BTreeMap::new();
        for (m, per_set) in catalog.iter().zip(&spec.durations) {
            for (mask, runs) in per_set.iter().enumerate() {
                let set: Vec<ComponentType> = (0..3u8).filter(|c| (mask + 1) & (1 << c) != 0).map(component).collect();
                let mut set = set;
                set.sort_by_key(|c| c.to_string());
                if !runs.is_empty() {
                    durations.insert(
                        (m.vendor.clone(), m.model.clone(), set),
                        runs.iter().map(|r| i64::from(*r) * MIN).collect(),
                    );
                }
            }
        }
        let mut site = Site {
            now_ms: START_MS,
            policy,
            catalog,
            hosts: Vec::new(),
            rows: BTreeMap::new(),
            wave_records: BTreeMap::new(),
            durations,
            holds: Vec::new(),
            brakes: Brakes::default(),
            resumes: BTreeMap::new(),
            run_started: BTreeMap::new(),
            epoch: 0,
            next_host: 0,
            next_freeze: 1,
            log: Vec::new(),
        };
        for h in &spec.hosts {
            site.add_host(h);
        }
        let n = site.hosts.len();
        site.policy.host_disable_autoupdate = match n {
            0 => Vec::new(),
            _ => p.legacy_disabled.iter().map(|i| site.hosts[usize::from(*i) % n].id.clone()).collect(),
        };
        for f in &spec.freezes {
            site.freeze(f);
        }
        site.log.clear();
        site
    }

    pub(super) fn add_host(&mut self, spec: &HostSpec) {
        let id = format!("h{:03}", self.next_host);
        self.next_host += 1;
        let model = usize::from(spec.model) % self.catalog.len();
        let (model, vendor_name, model_name) = match self.catalog.get(model).filter(|_| !spec.unknown) {
            Some(m) => (Some(model), m.vendor.clone(), m.model.clone()),
            None => (None, VENDORS[0].to_string(), "X9".to_string()),
        };
        let mut labels = Labels::new();
        labels.insert("rack".into(), RACKS[usize::from(spec.rack) % RACKS.len()].into());
        labels.insert("power".into(), POWER[usize::from(spec.power) % POWER.len()].into());
        if spec.canary {
            labels.insert("canary".into(), "true".into());
        }
        let steady = if spec.assigned { HostState::Assigned } else { HostState::Ready };
        let request = spec.request.map(|(approved, exhausted)| Request {
            by: Writer::Before,
            requested_at_ms: self.now_ms,
            approved: approved || !spec.assigned,
            retries: if exhausted { RETRIES } else { 0 },
            exhausted,
            current: None,
        });
        let state = match (&request, spec.maintenance) {
            (Some(r), _) if r.approved => HostState::HostReprovision,
            (Some(_), _) => steady,
            (None, true) => HostState::Maintenance,
            (None, false) => steady,
        };
        if request.is_some() {
            self.run_started.insert(id.clone(), self.now_ms);
        }
        let host = Host {
            id: id.clone(),
            model,
            vendor_name,
            model_name,
            explored: match spec.explored {
                0 => Explored::Not,
                1 => Explored::Failed,
                _ => Explored::Ok,
            },
            versions: (0..3u8).map(|c| (component(c), spec.versions[usize::from(c)].to_string())).collect(),
            missing: spec.missing.map(component),
            unreported: spec.unreported.map(component).into_iter().collect(),
            instance: spec.assigned,
            state,
            auto_update: spec.auto_update,
            window: spec.window.map(|w| window_at(self.now_ms, w)),
            labels,
            request,
            health_report: spec.health_report,
            repair: false,
        };
        self.log.push(format!("add {id}"));
        self.hosts.push(host);
    }

    // -----------------------------------------------------------------------------------------
    // Facts (what the site database and the explorer say).

    pub fn host(&self, id: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.id == id)
    }

    /// The host's firmware status, as `gates::firmware_status` gives it for its report.
    pub fn firmware(&self, h: &Host) -> FirmwareStatus {
        match h.explored {
            Explored::Not => return FirmwareStatus::NotExplored,
            Explored::Failed => return FirmwareStatus::ExploreFailed { error: "BMC unreachable".into() },
            Explored::Ok => {}
        }
        let Some(m) = h.model.map(|m| &self.catalog[m]) else {
            return FirmwareStatus::NoCatalogEntry { vendor: h.vendor_name.clone(), model: h.model_name.clone() };
        };
        // One inventory member per component: unmatched, its version unknown, or compared.
        let matched = |c: &ComponentType| h.missing != Some(*c);
        let reported = |c: &ComponentType| !h.unreported.contains(c);
        let differing: Vec<ComponentType> = m
            .defaults
            .iter()
            .filter(|(c, v)| matched(c) && reported(c) && h.versions.get(*c) != Some(*v))
            .map(|(c, _)| *c)
            .collect();
        let unmatched: Vec<UnmatchedComponent> = h
            .missing
            .filter(|c| m.defaults.contains_key(c))
            .map(|c| UnmatchedComponent { component: c, matcher: format!("^{c}") })
            .into_iter()
            .collect();
        let not_reported: Vec<NotReportedComponent> = m
            .defaults
            .iter()
            .filter(|(c, _)| matched(c) && !reported(c))
            .map(|(c, v)| NotReportedComponent {
                component: *c,
                desired: v.clone(),
                members: vec![UnknownMember {
                    id: format!("{c}_0").to_uppercase(),
                    raw_version: String::new(),
                    reason: UnknownVersion::Missing,
                }],
            })
            .collect();
        match (differing.is_empty() && unmatched.is_empty(), not_reported.is_empty()) {
            (true, true) => FirmwareStatus::Compliant,
            (true, false) => FirmwareStatus::VersionNotReported { not_reported },
            (false, _) => FirmwareStatus::Drifted {
                explicit_start_needed: m.explicit_start_needed,
                differing,
                unmatched,
                not_reported,
            },
        }
    }

    /// The rollout targets the host would install (its differing components at their defaults).
    pub fn targets(&self, h: &Host) -> Vec<Target> {
        let (FirmwareStatus::Drifted { differing, .. }, Some(m)) =
            (self.firmware(h), h.model.map(|m| &self.catalog[m]))
        else {
            return Vec::new();
        };
        differing
            .iter()
            .map(|c| Target {
                vendor: m.vendor.clone(),
                model: m.model.clone(),
                component: *c,
                version: m.defaults[c].clone(),
            })
            .collect()
    }

    pub fn is_assigned(h: &Host) -> bool {
        h.state.is_assigned(h.instance)
    }

    pub fn unhealthy(h: &Host) -> bool {
        h.explored == Explored::Failed || h.health_report
    }

    /// Out of service for the fleet (S9): a request, or updating / in maintenance.
    pub fn in_flight(h: &Host) -> bool {
        h.request.is_some() || matches!(h.state, HostState::HostReprovision | HostState::Maintenance)
    }

    /// Needs hands-on repair: its retry budget is spent, or it was aborted to maintenance.
    pub fn in_repair(h: &Host) -> bool {
        h.request.as_ref().is_some_and(|r| r.exhausted) || h.repair
    }

    /// The attempts on record of `target`, by machine id.
    pub fn rows_of<'a>(&'a self, target: &'a Target) -> impl Iterator<Item = (&'a str, &'a Row)> + 'a {
        self.rows.iter().filter(move |((t, _), _)| t == target).map(|((_, m), r)| (m.as_str(), r))
    }

    /// Every target some host would install, on record, or paused, in target order.
    pub fn known_targets(&self) -> Vec<Target> {
        let mut all: BTreeSet<Target> = self.hosts.iter().flat_map(|h| self.targets(h)).collect();
        all.extend(self.rows.keys().map(|(t, _)| t.clone()));
        all.extend(self.wave_records.keys().cloned());
        all.extend(self.brakes.pauses.iter().map(|p| p.target.clone()));
        all.into_iter().collect()
    }
}
