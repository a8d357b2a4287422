//! End-to-end, issue 31 item 3: random sequences of what operators, tenants and hardware do to a
//! host's update (request, approve, clear, abort, abort to maintenance, reset, mark the manual
//! procedure complete, freeze and unfreeze, a flash that fails, a flash held open) never leave a
//! host unsafe, on a real Temporal dev server, bmc-sim and the real worker.
//!
//! Each host of the site (`s1`, `s2`, ..., assigned to its own instance, lockdown on, two
//! components by a Core-local script) gets its own seeded sequence; the sequences interleave, so
//! signals race the workflow's own progress as they would at a site. Then the brakes are lifted,
//! every flash is let through and the site is awaited until nothing moves without an operator. Then,
//! for every host:
//! - **lockdown**: lockdown is off only while the host has a request its workflow works on, or
//!   when the host is marked for repair (a restore the BMC refused; the mark says why);
//! - **never flashed twice**: no flash started on a component already at its target version (the
//!   flash script reads the BMC's version before it pushes the image);
//! - **never stranded**: no update health report (the host "protected") and no HostReprovision
//!   state without a running workflow, unless the host is marked for repair;
//! - **never left off**: the host is powered on (unless marked for repair).
//!
//! Between operations a host may wait for its workflow to move on (`AwaitProgress`: until its
//! substate changes, a few seconds at most). That is pacing, not an assertion: the invariants must
//! hold whatever the timing, which is the point.
//!
//! `HOSTFW_SIGNAL_SEED=<n>` replays a run's sequences; `HOSTFW_SIGNAL_HOSTS=<n>` sets how many hosts
//! (sequences) run at once (3 by default; `make chaos` runs more, on a new seed each time). The
//! seed and every host's sequence are printed.

use std::fmt::Write as _;
use std::time::Duration;

use hostfw_tests::fixtures::{multipart_flash_script, sim_lockdown};
use hostfw_tests::{Catalog, Firmware, HostModel, Site, SiteSpec, SiteToml};

/// The default seed of `make test` (a fixed sequence of operations; their timing still varies).
const DEFAULT_SEED: u64 = 20_261_204;
/// Operations per host.
const STEPS: usize = 8;

/// What happens to a host's update, in the order drawn.
#[derive(Debug, Clone, Copy)]
enum Op {
    Request,
    Approve,
    Clear,
    Abort,
    AbortToMaintenance,
    Reset,
    MarkManualComplete,
    Freeze,
    Unfreeze,
    /// The next flash of any host fails (the script exits 1).
    FailNextFlash,
    /// BIOS flashes wait (a BIOS flash started keeps the host mid-flash).
    HoldFlashes,
    /// BIOS flashes run through.
    ReleaseFlashes,
    /// Let the host's workflow move on: until its substate changes (at most a few seconds), so
    /// the next operations land later in the update (mid-flash, at verification, in a retry wait).
    AwaitProgress,
}

const OPS: [Op; 13] = [
    Op::Request,
    Op::Approve,
    Op::Clear,
    Op::Abort,
    Op::AbortToMaintenance,
    Op::Reset,
    Op::MarkManualComplete,
    Op::Freeze,
    Op::Unfreeze,
    Op::FailNextFlash,
    Op::HoldFlashes,
    Op::ReleaseFlashes,
    Op::AwaitProgress,
];

/// SplitMix64: a small seeded generator, enough to draw operations reproducibly.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A host's sequence: a request, then (one time in two) its tenant's approval, so most sequences
/// reach a flash; the rest drawn evenly.
fn sequence(draw: &mut Draw) -> Vec<Op> {
    let mut ops = vec![Op::Request];
    if draw.below(2) == 0 {
        ops.push(Op::Approve);
    }
    while ops.len() < STEPS {
        ops.push(OPS[draw.below(OPS.len())]);
    }
    ops
}

/// The Core-local flash script: logs `start <component> from <version now>` (the BMC's version
/// of the member before the push), fails once when `<site>/fail-next` exists (taking it), and
/// holds a BIOS flash while `<site>/hold` exists.
fn flash_script() -> String {
    multipart_flash_script(
        "finish() { echo \"end $COMPONENT_TYPE $1\" >>\"$site/flashes.log\"; exit \"$1\"; }\n\
         case \"$COMPONENT_TYPE\" in uefi) member=BIOS ;; *) member=NIC ;; esac\n\
         now=$(printf 'user = \"%s:%s\"\\n' \"$BMC_USERNAME\" \"$BMC_PASSWORD\" | curl -sS -K - \"$BMC_URL/redfish/v1/UpdateService/FirmwareInventory/$member\" | tr -d ' \\n' | sed -n 's/.*\"Version\":\"\\([^\"]*\\)\".*/\\1/p')\n\
         echo \"start $COMPONENT_TYPE from $now to $TARGET_VERSION\" >>\"$site/flashes.log\"\n\
         if mv \"$site/fail-next\" \"$site/fail-taken.$$\" 2>/dev/null; then finish 1; fi\n\
         if [ \"$COMPONENT_TYPE\" = uefi ]; then while [ -e \"$site/hold\" ]; do sleep 0.1; done; fi",
        200,
    )
}

fn model() -> HostModel {
    HostModel::new("r760", "Dell", "PowerEdge R760")
        .ordering(&["uefi", "nic"])
        .component("uefi", "^BIOS$", [Firmware::script("3.0", "scripts/flash.sh")])
        .component("nic", "^NIC$", [Firmware::script("2.0", "scripts/flash.sh")])
        .set("lockdown", sim_lockdown())
}

fn fleet(hosts: &[String]) -> String {
    let mut text = String::from(
        "[defaults]\ntask_seconds = 0.2\nreset_seconds = 0.1\nupload_style = \"multipart\"\ntask_style = \"spec\"\n",
    );
    for id in hosts {
        write!(
            text,
            "\n[[host]]\nid = \"{id}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BIOS\", version = \"1.0\" }}, {{ id = \"NIC\", version = \"1.0\" }} ]\n"
        )
        .unwrap();
    }
    text
}

/// Apply one operation to host `id` (of instance `inst-<id>`). A refusal is an answer like any
/// other (e.g. clearing a request that has started): it is printed, not a failure.
async fn apply(site: &Site, id: &str, op: Op) -> String {
    let dir = site.dir.path();
    let instance = format!("inst-{id}");
    let args: Vec<&str> = match op {
        Op::Request => vec!["host", "reprovision", "set", "--id", id],
        Op::Approve => vec!["instance", "reboot", "--instance", &instance, "--apply-updates-on-reboot"],
        Op::Clear => vec!["host", "reprovision", "clear", "--id", id],
        Op::Abort => vec!["host", "reprovision", "abort", "--id", id, "--reason", "sequence"],
        Op::AbortToMaintenance => {
            vec!["host", "reprovision", "abort", "--id", id, "--reason", "sequence", "--to-maintenance"]
        }
        Op::Reset => vec!["managed-host", "reset-host-reprovisioning", "--id", id],
        Op::MarkManualComplete => vec!["host", "reprovision", "mark-manual-upgrade-complete", "--id", id],
        Op::Freeze => vec!["freeze", "--reason", "sequence"],
        Op::Unfreeze => vec!["unfreeze"],
        Op::FailNextFlash => {
            std::fs::write(dir.join("fail-next"), "").unwrap();
            return "armed".into();
        }
        Op::HoldFlashes => {
            std::fs::write(dir.join("hold"), "").unwrap();
            return "held".into();
        }
        Op::ReleaseFlashes => {
            let _ = std::fs::remove_file(dir.join("hold"));
            return "released".into();
        }
        Op::AwaitProgress => {
            // Pacing only: the invariants must hold whether or not the substate moved in time.
            let before = site.substate(id).await;
            let moved = tokio::time::timeout(Duration::from_secs(5), async {
                loop {
                    let now = site.substate(id).await;
                    if now != before {
                        return now;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
            .await;
            return match moved {
                Ok(now) => format!("{before:?} -> {now:?}"),
                Err(_) => format!("still {before:?}"),
            };
        }
    };
    match site.cli(&args).await {
        Ok(out) => out.lines().next().unwrap_or_default().to_string(),
        Err(e) => format!("refused: {}", e.to_string().lines().next().unwrap_or_default()),
    }
}

/// Nothing moves for `id` any more without an operator: no request and no workflow, or a
/// workflow waiting for its tenant's approval or exhausted, or the host marked for repair.
async fn settled(site: &Site, id: &str) -> bool {
    let Ok(Some(machine)) = site.store.machine_get(id).await else { return false };
    if machine.repair.is_some() {
        return !site.workflow_running(id).await;
    }
    let request = site.store.request_get(id).await.ok().flatten();
    if !site.workflow_running(id).await {
        return request.is_none();
    }
    site.status(id).await.is_some_and(|s| s.substate.as_str() == "WaitingForApproval" || s.exhausted)
}

/// The four invariants of the module doc, for host `id`; each violation as a sentence.
async fn violations(site: &Site, id: &str, flashes: &str) -> Vec<String> {
    let mut found = Vec::new();
    let machine = site.store.machine_get(id).await.unwrap().expect("the host is registered");
    let in_repair = machine.repair.is_some();
    let running = site.workflow_running(id).await;
    let request = site.store.request_get(id).await.unwrap();
    let status = site.status(id).await;
    let waiting_for_approval = status.as_ref().is_some_and(|s| s.substate.as_str() == "WaitingForApproval");
    // The BMC's port names the host in the script's log only through its versions: the flash
    // log is site-wide, so "flashed twice" is checked for every host at once (below).
    if site.fleet.lockdown(id) == Some(false) && !in_repair && !(running && request.is_some() && !waiting_for_approval)
    {
        found.push(format!(
            "{id}: lockdown is off with no update working on it (request {:?}, workflow running {running}, {:?})",
            request.is_some(),
            status.map(|s| s.substate)
        ));
    }
    let protected = site.store.health_reports_for(id).await.unwrap();
    if !protected.is_empty() && !running && !in_repair {
        found.push(format!("{id}: protected (health report {:?}) with no workflow", protected[0].alert_id));
    }
    if machine.state.as_str() == "HostReprovision" && !running && !in_repair {
        found.push(format!("{id}: in HostReprovision with no workflow"));
    }
    if !in_repair && site.fleet.power_state(id).as_deref() != Some("On") {
        found.push(format!("{id}: left powered {:?}", site.fleet.power_state(id)));
    }
    for line in flashes.lines().filter(|l| l.starts_with("start ")) {
        // start <component> from <now> to <target>
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() == 6 && words[3] == words[5] {
            found.push(format!("a component was flashed again at its target version: {line}"));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_signal_sequences_never_leave_a_host_unlocked_stranded_powered_off_or_flashed_twice() {
    let seed = std::env::var("HOSTFW_SIGNAL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SEED);
    let count: usize = std::env::var("HOSTFW_SIGNAL_HOSTS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let hosts: Vec<String> = (1..=count).map(|n| format!("s{n}")).collect();
    let mut draw = Draw(seed);
    let plans: Vec<Vec<Op>> = hosts.iter().map(|_| sequence(&mut draw)).collect();
    eprintln!("signal sequences, seed {seed} (HOSTFW_SIGNAL_SEED replays it):");
    for (id, ops) in hosts.iter().zip(&plans) {
        eprintln!("  {id}: {ops:?}");
    }

    let script = flash_script();
    let files = [("firmware/scripts/flash.sh", script.as_str())];
    let fleet = fleet(&hosts);
    let instances: Vec<(String, String)> = hosts.iter().map(|h| (h.clone(), format!("inst-{h}"))).collect();
    let assigned: Vec<(&str, &str)> = instances.iter().map(|(h, i)| (h.as_str(), i.as_str())).collect();
    let config = SiteToml::default()
        .catalog(&Catalog::of([model()]))
        .manager(i64::try_from(count).unwrap(), "1s")
        .site_workflows(true)
        .explorer_interval("1h")
        .firmware_global("autoupdate", false)
        .firmware_global("instance_updates_manual_tagging", false)
        .firmware_global("host_firmware_upgrade_retry_interval", "1s")
        .max_retries(2)
        .short_host_polls()
        // Every host may start at once, and a failed flash pauses no target: the sequences, not
        // the rollout gates, decide what happens.
        .canary_waves(&[], "0s")
        .machine_updater("error_budget_failed_hosts", 0)
        .machine_updater("error_budget_failed_percent", 0);
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config,
        images: &[("lenovo/uefi-3.0.bin", "^BIOS$", "3.0"), ("lenovo/nic-2.0.bin", "^NIC$", "2.0")],
        files: &files,
        assigned: &assigned,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    site.cli(&["site-explorer", "explore"]).await.unwrap();

    // The sequences interleave: each round applies the next operation of every host, in a drawn
    // order of hosts.
    let mut transcript = String::new();
    let mut next: Vec<std::slice::Iter<Op>> = plans.iter().map(|ops| ops.iter()).collect();
    for _ in 0..STEPS {
        let mut order: Vec<usize> = (0..count).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, draw.below(i + 1));
        }
        for h in order {
            let op = *next[h].next().expect("every sequence has STEPS operations");
            let answer = apply(&site, &hosts[h], op).await;
            writeln!(transcript, "{} {op:?}: {answer}", hosts[h]).unwrap();
        }
    }
    eprintln!("{transcript}");

    // Lift every brake and let every flash through; then wait until nothing moves.
    let _ = std::fs::remove_file(site.dir.path().join("hold"));
    let _ = std::fs::remove_file(site.dir.path().join("fail-next"));
    site.cli(&["unfreeze"]).await.ok();
    site.wait_for("every host to settle", Duration::from_secs(240), || async {
        for id in &hosts {
            if !settled(&site, id).await {
                return None;
            }
        }
        Some(())
    })
    .await;

    let flashes = std::fs::read_to_string(site.dir.path().join("flashes.log")).unwrap_or_default();
    let mut found = Vec::new();
    for id in &hosts {
        found.extend(violations(&site, id, "").await);
    }
    found.extend(violations(&site, &hosts[0], &flashes).await.into_iter().filter(|v| v.starts_with("a component")));
    if !found.is_empty() {
        eprintln!("flashes:\n{flashes}");
        for id in &hosts {
            for h in site.store.history_list(id, 30).await.unwrap().iter().rev() {
                eprintln!("{id} history: {} {:?} {}", h.state, h.substate, h.message);
            }
        }
    }
    assert!(found.is_empty(), "seed {seed}: {found:#?}");
    site.shutdown().await;
}
