//! The proptest strategies that build a scenario, each concept made frequent by the property's
//! [`Focus`].

use super::*;

fn model_spec(focus: Focus) -> impl Strategy<Value = ModelSpec> {
    let explicit = match focus {
        Focus::Windows => 0.7,
        Focus::Races => 0.4,
        _ => 0.2,
    };
    (0..2u8, prop::bool::weighted(explicit), 1..8u8, [1..4u8, 1..4u8, 1..4u8]).prop_map(
        |(vendor, explicit_start_needed, components, defaults)| ModelSpec {
            vendor,
            explicit_start_needed,
            components,
            defaults,
        },
    )
}

fn window_spec() -> impl Strategy<Value = (i16, u16)> {
    (-600i16..600, 20u16..600)
}

/// One host (of a model the catalog does not know with a small chance).
pub fn host_spec(focus: Focus) -> impl Strategy<Value = HostSpec> {
    let window = match focus {
        Focus::Windows => 0.8,
        Focus::Races => 0.5,
        _ => 0.3,
    };
    let assigned = if focus == Focus::Selection { 0.4 } else { 0.2 };
    let unreported = if matches!(focus, Focus::Races | Focus::Reasons) { 0.15 } else { 0.04 };
    (
        (any::<u8>(), prop::bool::weighted(0.04), prop_oneof![1 => Just(0u8), 1 => Just(1u8), 20 => Just(2u8)]),
        [1..4u8, 1..4u8, 1..4u8],
        (prop::option::weighted(0.05, 0..3u8), prop::option::weighted(unreported, 0..3u8)),
        (prop::bool::weighted(assigned), prop::option::weighted(0.1, any::<bool>())),
        prop::option::weighted(window, window_spec()),
        (0..4u8, 0..2u8, prop::bool::weighted(0.15)),
        prop::bool::weighted(0.05),
        prop::option::weighted(0.1, (prop::bool::weighted(0.5), prop::bool::weighted(0.2))),
        prop::bool::weighted(0.08),
    )
        .prop_map(
            |(
                (model, unknown, explored),
                versions,
                (missing, unreported),
                (assigned, auto_update),
                window,
                (rack, power, canary),
                maintenance,
                request,
                health_report,
            )| HostSpec {
                model,
                unknown,
                explored,
                versions,
                missing,
                unreported,
                assigned,
                auto_update,
                window,
                rack,
                power,
                canary,
                maintenance,
                request,
                health_report,
            },
        )
}

fn freeze_spec() -> impl Strategy<Value = FreezeSpec> {
    (0..3u8, 0..3u8, any::<bool>(), any::<bool>(), 0..6u8, any::<bool>()).prop_map(
        |(kind, model, with_vendor, other_case, label, drain)| FreezeSpec {
            kind,
            model,
            with_vendor,
            other_case,
            label,
            drain,
        },
    )
}

fn policy_spec(focus: Focus) -> impl Strategy<Value = PolicySpec> {
    let percent = if focus == Focus::Ceiling { 0.6 } else { 0.25 };
    let caps = if focus == Focus::LabelCaps { 0.9 } else { 0.3 };
    let waves = match focus {
        Focus::Waves => prop_oneof![1 => Just(0u8), 9 => 1..6u8].boxed(),
        _ => prop_oneof![1 => Just(0u8), 1 => 1..6u8].boxed(),
    };
    let fit = if focus == Focus::Windows { (1, 3) } else { (3, 1) };
    (
        (prop::bool::weighted(0.95), prop::bool::weighted(0.3), prop::collection::vec(any::<u8>(), 0..2)),
        (
            prop_oneof![1 => Just(None), 1 => Just(Some(0u8)), 18 => (1..9u8).prop_map(Some)],
            prop::option::weighted(percent, 1..101u8),
        ),
        (prop::option::weighted(caps, 1..4u8), prop::option::weighted(caps, 1..5u8)),
        (0..5u8, prop_oneof![Just(0u8), Just(20), Just(50)], 0..6u8),
        (waves, prop_oneof![Just(0u16), Just(10), Just(30), Just(120)]),
        prop_oneof![fit.0 => Just(0u8), fit.1 => 1..4u8],
        (prop_oneof![Just(0u16), Just(60), Just(240)], any::<bool>()),
        prop::option::weighted(0.3, 0..3u8),
    )
        .prop_map(
            |(
                (autoupdate, manual_tagging, legacy_disabled),
                (absolute, percent),
                (rack_cap, power_cap),
                budget,
                (waves, soak_min),
                window_fit_min_samples,
                (deadline_min, deadline_skip),
                max_hosts_in_repair,
            )| PolicySpec {
                autoupdate,
                manual_tagging,
                legacy_disabled,
                absolute,
                percent,
                rack_cap,
                power_cap,
                budget,
                waves,
                soak_min,
                window_fit_min_samples,
                deadline_min,
                deadline_skip,
                max_hosts_in_repair,
            },
        )
}

fn durations() -> impl Strategy<Value = [Vec<u16>; 7]> {
    let runs = || prop::collection::vec(10u16..400, 0..5);
    [runs(), runs(), runs(), runs(), runs(), runs(), runs()]
}

fn host_ix() -> impl Strategy<Value = u8> {
    any::<u8>()
}

/// One event, weighted so that evolutions make progress (host workflows step and finish) while
/// the site changes under them.
pub fn event(focus: Focus) -> impl Strategy<Value = Event> {
    let brakes = if focus == Focus::Brakes { 4 } else { 1 };
    let unreported = if matches!(focus, Focus::Races | Focus::Reasons) { 2 } else { 1 };
    prop_oneof![
        8 => host_ix().prop_map(Event::Progress),
        4 => Just(Event::Tick),
        3 => host_ix().prop_map(Event::Fail),
        2 => host_spec(focus).prop_map(Event::AddHost),
        2 => host_ix().prop_map(Event::RemoveHost),
        3 => (host_ix(), prop::bool::weighted(0.7)).prop_map(|(h, ok)| Event::Explore(h, ok)),
        1 => (host_ix(), any::<bool>()).prop_map(|(h, m)| Event::Abort(h, m)),
        1 => host_ix().prop_map(Event::Reset),
        1 => host_ix().prop_map(Event::Clear),
        2 => (host_ix(), any::<bool>()).prop_map(|(h, on)| Event::Maintenance(h, on)),
        2 => (host_ix(), prop::option::weighted(0.8, window_spec())).prop_map(|(h, w)| Event::Window(h, w)),
        1 => (host_ix(), any::<bool>()).prop_map(|(h, on)| Event::Health(h, on)),
        1 => (host_ix(), any::<bool>()).prop_map(|(h, on)| Event::Assign(h, on)),
        1 => (host_ix(), prop::option::of(any::<bool>())).prop_map(|(h, o)| Event::AutoUpdate(h, o)),
        2 => (0..3u8, 0..3u8, 1..4u8).prop_map(|(m, c, v)| Event::CatalogDefault(m, c, v)),
        brakes => freeze_spec().prop_map(Event::Freeze),
        brakes => any::<u8>().prop_map(Event::Unfreeze),
        brakes => any::<u8>().prop_map(Event::Pause),
        (brakes + 1) => any::<u8>().prop_map(Event::Resume),
        2 => host_ix().prop_map(Event::Direct),
        1 => host_ix().prop_map(Event::DirectIgnoringGates),
        1 => host_ix().prop_map(Event::DeadlineSkip),
        1 => (prop::option::weighted(0.9, 0..9u8), prop::option::weighted(0.3, 1..101u8))
            .prop_map(|(a, p)| Event::Limits(a, p)),
        unreported => (host_ix(), 0..3u8, any::<bool>()).prop_map(|(h, c, on)| Event::VersionReported(h, c, on)),
        // Rarely one more pass between two (the manager woken twice).
        1 => Just(Event::Pass { stale: false }),
    ]
}

/// A change the gate fence does not see that takes a host out of a pass's candidates: its
/// exploration fails, its automatic updates are turned off, a tenant takes it, or its drifted
/// component stops reporting a version. A pass that read the site before it may still write the
/// host's request; one that reads after it picks another host.
fn unfenced_change() -> impl Strategy<Value = Event> {
    prop_oneof![
        host_ix().prop_map(|h| Event::Explore(h, false)),
        host_ix().prop_map(|h| Event::AutoUpdate(h, Some(false))),
        host_ix().prop_map(|h| Event::Assign(h, true)),
        (host_ix(), 0..3u8).prop_map(|(h, c)| Event::VersionReported(h, c, false)),
    ]
}

/// One event of a race: often another pass, and the acts that race a pass the most (direct
/// requests with or without the rollout gates, maintenance, changes the fence does not see)
/// more often than between passes.
pub fn race_event(focus: Focus) -> impl Strategy<Value = Event> {
    prop_oneof![
        5 => any::<bool>().prop_map(|stale| Event::Pass { stale }),
        2 => host_ix().prop_map(Event::Direct),
        2 => host_ix().prop_map(Event::DirectIgnoringGates),
        1 => (host_ix(), Just(true)).prop_map(|(h, on)| Event::Maintenance(h, on)),
        3 => unfenced_change(),
        // The host workflows go on meanwhile: attempts, installs, restores.
        2 => Just(Event::Tick),
        10 => event(focus),
    ]
}

/// A race: none in most steps (70 %; 30 % with `Focus::Races`), else one to three events.
fn race(focus: Focus) -> impl Strategy<Value = Vec<Event>> {
    let (calm, raced) = if focus == Focus::Races { (3, 7) } else { (7, 3) };
    prop_oneof![calm => Just(Vec::new()), raced => prop::collection::vec(race_event(focus), 1..4)]
}

fn step(focus: Focus) -> impl Strategy<Value = Step> {
    // Races need passes that start hosts: with `Focus::Races` the workflows step faster, so the
    // hosts they hold free their slots sooner.
    let ticks = match focus {
        Focus::Races => prop_oneof![1 => Just(1u8), 2 => Just(3u8), 2 => Just(5u8)].boxed(),
        _ => prop_oneof![2 => Just(0u8), 4 => Just(1u8), 3 => Just(2u8), 2 => Just(3u8)].boxed(),
    };
    (
        prop::collection::vec(event(focus), 0..6),
        ticks,
        prop_oneof![3 => Just(1u16), 3 => Just(5u16), 2 => Just(30u16), 2 => Just(120u16), 1 => Just(480u16)],
        race(focus),
        any::<u8>(),
    )
        .prop_map(|(events, ticks, advance_min, race, race_at)| Step { events, ticks, advance_min, race, race_at })
}

/// A random site and the steps it evolves through (a pass after each).
pub fn scenario(focus: Focus) -> impl Strategy<Value = Scenario> {
    let site = (
        policy_spec(focus),
        prop_oneof![3 => prop::collection::vec(model_spec(focus), 1..3), 1 => prop::collection::vec(model_spec(focus), 3..4)],
        prop::collection::vec(host_spec(focus), 1..22),
        prop::collection::vec(durations(), 3),
        prop::collection::vec(freeze_spec(), 0..if focus == Focus::Brakes { 3 } else { 1 }),
    )
        .prop_map(|(policy, models, hosts, durations, freezes)| SiteSpec { policy, models, hosts, durations, freezes });
    (site, prop::collection::vec(step(focus), 3..14)).prop_map(|(site, steps)| Scenario { site, steps })
}
