//! One attempt of the component loop (seed "Update workflow", steps 2–6): refresh inventory, find
//! the catalog entry, pass the manual platform gate, select the next component, hold while a
//! freeze covers the host (`freeze_hold`), install it through its route, and repeat until
//! nothing differs or the attempt fails.

use std::collections::BTreeMap;

use hostfw_model::gates::UnmatchedComponent;
use hostfw_model::{select_with, ComponentType, HostSubstate, Selection, UnmatchedRule};
use temporalio_workflow::WorkflowResult;

use crate::contracts::*;
use crate::host::abort;
use crate::host::activation::pre_update_plan;
use crate::host::deferred;
use crate::host::freeze_hold::hold_while_frozen;
use crate::host::install_agents::{install_scout, install_script};
use crate::host::install_redfish;
use crate::host::settings::HostReprovisionInput;
use crate::host::status::InstalledComponent;
use crate::host::steps::{enter, reason, refresh_inventory, run_plan, wait, ComponentInstall, Ctx, StepEnd};
use crate::options;

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AttemptEnd {
    /// Nothing differs from the catalog any more.
    Compliant,
    /// Nothing to install, but these components do not report their version.
    VersionNotReported(Vec<ComponentType>),
    /// Nothing more can be installed; `unmatched` components find no inventory member.
    NotFullyInstallable { unmatched: Vec<UnmatchedComponent>, not_reported: Vec<ComponentType> },
    /// The catalog has no entry for the host's vendor and model.
    NoCatalogEntry { vendor: String, model: String },
    /// FailedFirmwareUpgrade, for this reason.
    Failed(String),
    /// An abort was signalled; it is taken here, at a safe point (before a component).
    Aborted,
}

/// Backoff before trying an upload again after a transient failure: 30 s, doubling, at most 10 min.
fn upload_backoff_secs(failures: u32) -> u64 {
    (30u64 << failures.saturating_sub(1).min(5)).min(600)
}

/// Run one attempt. `labelled` remembers whether vendor/model search attributes were set.
pub(crate) async fn run_attempt(
    ctx: &Ctx,
    input: &HostReprovisionInput,
    labelled: &mut bool,
) -> WorkflowResult<AttemptEnd> {
    let settings = &input.settings;
    let machine_id = input.machine_id.as_str();
    let mut repeat = false;
    let mut just_installed: Option<ComponentType> = None;
    let mut upload_failures: BTreeMap<ComponentType, u32> = BTreeMap::new();
    loop {
        // Before the next component is chosen is a safe point: an abort is taken here.
        if abort::requested(ctx) {
            return Ok(AttemptEnd::Aborted);
        }
        let substate = if repeat { HostSubstate::CheckingFirmwareRepeatV2 } else { HostSubstate::CheckingFirmwareV2 };
        // Select from the inventory the verification just read, when there is one.
        let fresh = ctx.state_mut(|s| s.fresh_report.take());
        let message = if fresh.is_some() {
            "selecting the next component from the inventory read by the verification"
        } else {
            "refreshing inventory and selecting the next component"
        };
        enter(ctx, substate, message).await?;
        let report = match fresh {
            Some(report) => report,
            None => match refresh_inventory(ctx, machine_id).await? {
                Ok(r) => r,
                Err(e) => return Ok(AttemptEnd::Failed(reason("reading the inventory", &e))),
            },
        };
        if !*labelled {
            deferred::want(ctx, crate::names::SA_VENDOR, report.vendor.clone());
            deferred::want(ctx, crate::names::SA_MODEL, report.model.clone());
            *labelled = true;
        }
        // The catalog entry and the route of the component the selection picks, in one local
        // activity.
        let query = InstallPlanQuery { machine_id: machine_id.to_string(), report: report.clone() };
        let plan =
            ctx.execute_local_activity(HostActivities::plan_install, query, options::local_bookkeeping()).await?;
        let (model, mut planned) = (plan.model, plan.route);
        let Some(model) = model else {
            return Ok(AttemptEnd::NoCatalogEntry { vendor: report.vendor, model: report.model });
        };

        // Manual platform gate (seed): MNNVL-capable models wait for the operator's mark before
        // any component is selected. The mark is not a compliance claim: inventory decides.
        if settings.requires_manual_upgrade && model.mnnvl_capable && !ctx.state(|s| s.manual_upgrade_complete) {
            enter(
                ctx,
                HostSubstate::WaitingForManualUpgrade,
                "waiting for the approved platform procedure (host reprovision mark-manual-upgrade-complete)",
            )
            .await?;
            deferred::flush(ctx).await?;
            ctx.wait_condition(|s| s.manual_upgrade_complete || s.abort.is_some()).await?;
            repeat = true;
            continue;
        }

        let (component, target, entry, current) = match select_with(&model, &report, UnmatchedRule::Skip) {
            Selection::Compliant => return Ok(AttemptEnd::Compliant),
            Selection::NotFullyInstallable { unmatched, not_reported } => {
                return Ok(AttemptEnd::NotFullyInstallable { unmatched, not_reported });
            }
            Selection::VersionNotReported { components } => return Ok(AttemptEnd::VersionNotReported(components)),
            Selection::NoInventoryMatch { component, matcher } => {
                return Ok(AttemptEnd::Failed(format!(
                    "component {component}: no inventory entry matches current_version_reported_as {matcher:?}; \
                     fix the catalog matcher or the BMC inventory"
                )));
            }
            Selection::Install { component, target_version, entry, current } => {
                (component, target_version, entry, current)
            }
        };
        // The failures below are the selected component's: its target's error budget counts them
        // (the retry record names the status's component; issue 26).
        let name_target = |ctx: &Ctx| {
            ctx.state_mut(|s| {
                s.status.component = Some(component);
                s.status.target_version = Some(target.clone());
            })
        };
        if just_installed == Some(component) {
            name_target(ctx);
            return Ok(AttemptEnd::Failed(format!(
                "component {component} still reports {} after its install to {target}",
                current.join(", ")
            )));
        }
        // Issue 27: before the next component (never during one), a freeze covering the host
        // holds it; once lifted, the inventory is read again (and the selection made again,
        // pre-update resets included).
        if hold_while_frozen(ctx, machine_id).await? {
            continue;
        }
        if abort::requested(ctx) {
            return Ok(AttemptEnd::Aborted);
        }
        if !repeat && entry.pre_update_resets {
            enter(ctx, HostSubstate::ResetForNewFirmware, &format!("pre-update resets before installing {component}"))
                .await?;
            if let StepEnd::Failed(r) = run_plan(ctx, machine_id, pre_update_plan(settings)).await? {
                name_target(ctx);
                return Ok(AttemptEnd::Failed(r));
            }
            repeat = true;
            continue;
        }

        name_target(ctx);
        deferred::want(ctx, crate::names::SA_COMPONENT, component.to_string());
        let route = match planned.take() {
            Some(PlannedRoute { component: c, target_version: t, route }) if c == component && t == target => {
                match route {
                    Ok(r) => r,
                    Err(why) => return Ok(AttemptEnd::Failed(format!("choosing the installation route: {why}"))),
                }
            }
            other => {
                return Ok(AttemptEnd::Failed(format!(
                    "choosing the installation route: planned for {:?}, selected {component} {target}",
                    other.map(|p| (p.component, p.target_version))
                )))
            }
        };
        let job = ComponentInstall { settings, model: &model, machine_id, component, target: &target, entry: &entry };
        let end = match route {
            InstallRoute::Scout(task) => install_scout(ctx, &job, task).await?,
            InstallRoute::Script { script } => install_script(ctx, &job, script).await?,
            InstallRoute::Redfish => install_redfish::install(ctx, &job).await?,
        };
        match end {
            StepEnd::Done => {
                ctx.state_mut(|s| {
                    s.status.installed.push(InstalledComponent { component, from: current, to: target.clone() });
                    s.status.component = None;
                    s.status.target_version = None;
                });
                just_installed = Some(component);
            }
            StepEnd::Retry(why) => {
                let failures = upload_failures.entry(component).or_insert(0);
                *failures += 1;
                if *failures > settings.max_upload_retries {
                    return Ok(AttemptEnd::Failed(format!("{why} ({} tries)", *failures)));
                }
                let secs = upload_backoff_secs(*failures);
                wait(ctx, secs, &format!("{why}; checking firmware again in {secs} s")).await?;
            }
            StepEnd::Failed(why) => return Ok(AttemptEnd::Failed(why)),
        }
        repeat = true;
    }
}

#[cfg(test)]
mod tests {
    use super::upload_backoff_secs;

    #[test]
    fn upload_backoff_doubles_up_to_ten_minutes() {
        let b: Vec<u64> = (1..=8).map(upload_backoff_secs).collect();
        assert_eq!(b, vec![30, 60, 120, 240, 480, 600, 600, 600]);
    }
}
