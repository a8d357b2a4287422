//! What a scenario is made of: the site when it begins (specs), the events between passes and
//! the steps (generated, shrinkable, printed on failure).

use super::*;

/// Which concept a property looks at: the generator makes that concept's features frequent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Ceiling,
    LabelCaps,
    Waves,
    Brakes,
    Windows,
    Selection,
    Reasons,
    /// Races between a pass's read and its writes (`races`).
    Races,
}

/// One catalog model.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    pub vendor: u8,
    pub explicit_start_needed: bool,
    /// Which of [`COMPONENTS`] it has (bit mask, at least one).
    pub components: u8,
    /// Each component's default version, "1" to "3".
    pub defaults: [u8; 3],
}

/// One host as it is when the scenario begins or when it joins the site.
#[derive(Debug, Clone)]
pub struct HostSpec {
    /// Index into the catalog's models (modulo their number).
    pub model: u8,
    /// It reports a model the catalog does not know instead.
    pub unknown: bool,
    /// 0: not explored yet, 1: its last exploration failed, else explored.
    pub explored: u8,
    /// Reported versions of [`COMPONENTS`], "1" to "3".
    pub versions: [u8; 3],
    /// A component whose matcher finds no inventory member (S54).
    pub missing: Option<u8>,
    /// A component whose inventory member reports no version (`VersionNotReported`).
    pub unreported: Option<u8>,
    pub assigned: bool,
    pub auto_update: Option<bool>,
    /// Window: start offset from now and length, minutes.
    pub window: Option<(i16, u16)>,
    pub rack: u8,
    pub power: u8,
    pub canary: bool,
    pub maintenance: bool,
    /// A request exists already: (approved, exhausted).
    pub request: Option<(bool, bool)>,
    pub health_report: bool,
}

/// A freeze an operator sets.
#[derive(Debug, Clone)]
pub struct FreezeSpec {
    /// 0: site, 1: model, 2: label.
    pub kind: u8,
    pub model: u8,
    pub with_vendor: bool,
    /// Names written in another case (scopes compare names like the catalog).
    pub other_case: bool,
    pub label: u8,
    pub drain: bool,
}

/// The site's policy as configured.
#[derive(Debug, Clone)]
pub struct PolicySpec {
    pub autoupdate: bool,
    pub manual_tagging: bool,
    /// Hosts (by index) on the legacy `host_disable_autoupdate` list.
    pub legacy_disabled: Vec<u8>,
    pub absolute: Option<u8>,
    pub percent: Option<u8>,
    /// `max_concurrent_per_label` for `rack` and `power`.
    pub rack_cap: Option<u8>,
    pub power_cap: Option<u8>,
    pub budget: (u8, u8, u8),
    /// Index into [`WAVE_LISTS`] (0: waves off) and the soak, minutes.
    pub waves: u8,
    pub soak_min: u16,
    pub window_fit_min_samples: u8,
    /// Approval deadline, minutes (0: none), and whether its policy is `skip`.
    pub deadline_min: u16,
    pub deadline_skip: bool,
    pub max_hosts_in_repair: Option<u8>,
}

/// Canary wave lists the generator picks from (index 0: waves off).
pub const WAVE_LISTS: [&[&str]; 6] = [
    &[],
    &["1", "100%"],
    &["1", "10%", "50%", "100%"],
    &["2", "50%", "100%"],
    &["1", "3", "25%", "100%"],
    &["30%", "60%", "100%"],
];

/// The site when the scenario begins.
#[derive(Debug, Clone)]
pub struct SiteSpec {
    pub policy: PolicySpec,
    pub models: Vec<ModelSpec>,
    pub hosts: Vec<HostSpec>,
    /// Past run durations (minutes) per model and component set (bit mask index 1..=7).
    pub durations: Vec<[Vec<u16>; 7]>,
    pub freezes: Vec<FreezeSpec>,
}

/// Something that happens between two passes. Hosts are named by index (modulo the hosts in the
/// site), so a shrunk scenario stays meaningful.
#[derive(Debug, Clone)]
pub enum Event {
    /// A new host is registered.
    AddHost(HostSpec),
    /// `hostfw machine remove` (refused while it has a request, like the store does).
    RemoveHost(u8),
    /// The site explorer's next crawl of the host fails (`false`) or succeeds (`true`).
    Explore(u8, bool),
    /// The host workflow's next step: approval, protect, plan the next component (an attempt on
    /// record), install it, or restore (every open attempt ends, the request goes).
    Progress(u8),
    /// Every host workflow takes one step.
    Tick,
    /// The component being installed fails (`FailedFirmwareUpgrade`): a failure on record, a
    /// retry later, or the retry budget spent (`exhausted`).
    Fail(u8),
    /// `host reprovision abort`, to maintenance (repair) or back to its steady state.
    Abort(u8, bool),
    /// `managed-host reset-host-reprovisioning`.
    Reset(u8),
    /// `host reprovision clear` (only a request that has not started).
    Clear(u8),
    /// `machine maintenance --enter` / `--exit`.
    Maintenance(u8, bool),
    /// `managed-host start-updates` (start offset from now, length, minutes) or `--cancel`.
    Window(u8, Option<(i16, u16)>),
    /// A health report by someone else appears or goes.
    Health(u8, bool),
    /// A tenant instance is allocated on or released from the host.
    Assign(u8, bool),
    /// `machine auto-update --enable` / `--disable` / `--clear`.
    AutoUpdate(u8, Option<bool>),
    /// The catalog's default version of a model's component changes (S5): model, component,
    /// version.
    CatalogDefault(u8, u8, u8),
    /// `hostfw freeze`.
    Freeze(FreezeSpec),
    /// `hostfw unfreeze` of the freezes in force (by index).
    Unfreeze(u8),
    /// `hostfw budget pause` of a target some host would install (by index).
    Pause(u8),
    /// `hostfw budget resume` of a target on record or paused (by index).
    Resume(u8),
    /// `host reprovision set`, held like the CLI holds it (rollout gates, caps, maintenance).
    Direct(u8),
    /// `host reprovision set --ignore-rollout-gates`: only the store's guard holds it (maintenance,
    /// a request already there, failure-domain caps); freezes, pauses, canary waves, the ceiling
    /// and windows do not.
    DirectIgnoringGates(u8),
    /// A whole other pass (view, plan, writes), with no race of its own. Among a step's events it
    /// is one more pass; in a race it is the same activity retried on another worker while the
    /// raced pass still writes: `stale`, it read the fence and the view when the raced pass did
    /// (before either wrote); else it reads them when it runs.
    Pass { stale: bool },
    /// The explorer finds a host's component reporting no version (`false`: its member is
    /// absent, blank or a placeholder) or reporting one again (`true`): host, component.
    VersionReported(u8, u8, bool),
    /// The approval deadline of an assigned host's waiting request passes with policy `skip`:
    /// the request is given up and the host held until its next window.
    DeadlineSkip(u8),
    /// A config reload changes the ceiling's limits.
    Limits(Option<u8>, Option<u8>),
}

impl Event {
    /// The host index it names, if it names one.
    pub fn host_mut(&mut self) -> Option<&mut u8> {
        match self {
            Event::RemoveHost(i)
            | Event::Explore(i, _)
            | Event::Progress(i)
            | Event::Fail(i)
            | Event::Abort(i, _)
            | Event::Reset(i)
            | Event::Clear(i)
            | Event::Maintenance(i, _)
            | Event::Window(i, _)
            | Event::Health(i, _)
            | Event::Assign(i, _)
            | Event::AutoUpdate(i, _)
            | Event::Direct(i)
            | Event::DirectIgnoringGates(i)
            | Event::DeadlineSkip(i)
            | Event::VersionReported(i, _, _) => Some(i),
            Event::AddHost(_)
            | Event::Tick
            | Event::CatalogDefault(..)
            | Event::Freeze(_)
            | Event::Unfreeze(_)
            | Event::Pause(_)
            | Event::Resume(_)
            | Event::Limits(..)
            | Event::Pass { .. } => None,
        }
    }

    /// Whether it is a step of a host workflow or an operator's command on a request, and then
    /// which hosts it acts on: those with a request (for a failure: with an install under way).
    fn on_a_request(&self) -> Option<fn(&Host) -> bool> {
        match self {
            Event::Fail(_) => Some(|h| h.request.as_ref().is_some_and(|r| r.current.is_some())),
            Event::Progress(_) | Event::Abort(..) | Event::Reset(_) | Event::Clear(_) | Event::DeadlineSkip(_) => {
                Some(|h| h.request.is_some())
            }
            _ => None,
        }
    }

    /// The event as it lands in a race on `site` while a pass writes `planned`, aimed at what the
    /// race matters to: a host index below 128 names one of the planned hosts (for an event on a
    /// request: one of the hosts it acts on), a pause or resume index below 128 one of the
    /// planned hosts' targets, each modulo their number; 128 and above names any host or target,
    /// as between passes. A catalog change names the model of one of the planned hosts.
    pub fn aimed(&self, site: &Site, planned: &[String]) -> Event {
        let mut event = self.clone();
        match &mut event {
            Event::CatalogDefault(m, ..) => {
                let models: Vec<usize> = planned.iter().filter_map(|id| site.host(id)?.model).collect();
                aim(m, &models, false);
            }
            Event::Pause(i) | Event::Resume(i) => {
                let choices = if matches!(self, Event::Pause(_)) { site.pausable() } else { site.resumable() };
                let wanted: Vec<Target> =
                    planned.iter().filter_map(|id| site.host(id)).flat_map(|h| site.targets(h)).collect();
                let aims: Vec<usize> = (0..choices.len()).filter(|&c| wanted.contains(&choices[c])).collect();
                aim(i, &aims, true);
            }
            _ => {
                let aims: Vec<usize> = match self.on_a_request() {
                    Some(acts_on) => (0..site.hosts.len()).filter(|&i| acts_on(&site.hosts[i])).collect(),
                    None => planned.iter().filter_map(|id| site.hosts.iter().position(|h| &h.id == id)).collect(),
                };
                if let Some(i) = event.host_mut() {
                    aim(i, &aims, true);
                }
            }
        }
        event
    }
}

/// Points the index `i` at one of `aims` (modulo their number): with `below_128`, only an index
/// below 128 (the others keep naming anything). Nothing to aim at: `i` stays.
fn aim(i: &mut u8, aims: &[usize], below_128: bool) {
    if below_128 && *i >= 128 {
        return;
    }
    if let Some(at) = aims.get(usize::from(*i) % aims.len().max(1)).and_then(|at| u8::try_from(*at).ok()) {
        *i = at;
    }
}

/// The events before one pass, how many steps every host workflow takes after them, how far
/// the clock moves before the pass runs, and what races its writes.
#[derive(Debug, Clone)]
pub struct Step {
    pub events: Vec<Event>,
    pub ticks: u8,
    pub advance_min: u16,
    /// Events that land between the pass's read and its last write (empty: none), aimed at the
    /// hosts it writes ([`Event::aimed`]).
    pub race: Vec<Event>,
    /// Where the race lands, modulo the pass's starts + 2: 0 between its read and its wave marks,
    /// `k + 1` after its marks and its first `k` starts.
    pub race_at: u8,
}

/// A random site and its evolution: a pass after each step.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub site: SiteSpec,
    pub steps: Vec<Step>,
}
