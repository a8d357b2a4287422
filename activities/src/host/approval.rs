//! An assigned host's wait for approval, in the site database: what the wait reads each time it
//! wakes (the stored approval, or a request already started, which was approved; the current
//! autoreboot period and the request's approval deadline)
//! and what the deadline's policy records when it passes: `skip` holds the host until its next
//! window (`gates::hold_until`), `escalate` writes one overdue entry in its state history.
//!
//! Owns those reads and records. It must not give the request up (the workflow's restore does,
//! after the hold is stored, so a pass never sees the host free and unheld) nor decide the
//! deadline's arithmetic (`hostfw_model::gates::approval`).

use hostfw_model::gates::{hold_until, ApprovalDeadline, ApprovalHold, DeadlinePolicy};
use hostfw_model::time_text::rfc3339_utc;
use hostfw_store::now_ms;
use hostfw_workflows::{ApprovalDeadlineNow, ApprovalDeadlinePassed, ApprovalDeadlineRecord, ApprovalInputs};
use temporalio_common::ActivityError;

use crate::error;
use crate::Deps;

/// The actor of the audit entries the deadline writes.
const ACTOR: &str = "hostfw (approval deadline)";

/// What the wait for approval reads when it wakes.
pub async fn approval_inputs(deps: &Deps, machine_id: &str) -> Result<ApprovalInputs, ActivityError> {
    let request = deps.store.request_get(machine_id).await.map_err(error::store)?;
    let site = deps.site.current();
    let settings = hostfw_workflows::host_reprovision::ReprovisionSettings::from_site(&site);
    let deadline = ApprovalDeadline::from_config(&site);
    Ok(ApprovalInputs {
        // A started request was approved: protect marks it started only after the approval (the
        // tenant's, or the autoreboot period's, which is stored nowhere else). A run that adopts
        // it (the manager or `doctor --fix` restarting a failed or terminated workflow
        // mid-update) goes on instead of asking again for an approval the host already had.
        approved: request.as_ref().is_some_and(|r| r.user_approval || r.started_at_ms.is_some()),
        autoreboot_period: settings.autoreboot_period,
        deadline: request
            .and_then(|r| deadline.deadline_ms(r.requested_at_ms))
            .map(|at_ms| ApprovalDeadlineNow { at_ms, policy: deadline.policy }),
    })
}

/// The deadline passed: hold the host (`skip`) or record it as overdue (`escalate`). Idempotent:
/// a retry replaces the hold with the same one, and finds its overdue entry on top.
pub async fn approval_deadline(
    deps: &Deps,
    input: ApprovalDeadlinePassed,
) -> Result<ApprovalDeadlineRecord, ActivityError> {
    let store = &deps.store;
    let machine_id = input.machine_id.as_str();
    let deadline = rfc3339_utc(input.deadline.at_ms);
    let now = now_ms();
    match input.deadline.policy {
        DeadlinePolicy::Skip => {
            // Decided once: the tenant's approval, if it is on record first, wins over the skip;
            // so does a started update (the host may be out of lockdown and in discovery: only the
            // update's own restore gives it back to its tenant, issue 26 item 6).
            if !store.request_skip_at_deadline(machine_id).await.map_err(error::store)? {
                let started = store
                    .request_get(machine_id)
                    .await
                    .map_err(error::store)?
                    .is_some_and(|r| r.started_at_ms.is_some() && !r.user_approval);
                let message = if started {
                    format!(
                        "the update had already started when its approval deadline ({deadline}) passed: it is \
                         not given up, and goes on to its own restore"
                    )
                } else {
                    format!(
                        "the tenant approved the request before its approval deadline ({deadline}) was applied: \
                         the update goes on"
                    )
                };
                tracing::info!(machine_id, deadline, started, "approval deadline reached, but the request goes on");
                return Ok(ApprovalDeadlineRecord { message, held_until_ms: None, approved_first: true });
            }
            let machine = crate::bmc::machine(deps, machine_id).await?;
            let site = deps.site.current();
            let after_ms = ApprovalDeadline::from_config(&site).after_ms;
            let autoreboot = site.machine_updater.instance_autoreboot_period;
            let until_ms = hold_until(now, machine.window, autoreboot, after_ms);
            let hold = ApprovalHold { machine_id: machine_id.to_string(), skipped_at_ms: now, until_ms };
            store.approval_hold_put(&hold).await.map_err(error::store)?;
            let message = format!(
                "the tenant did not approve before the approval deadline ({deadline}); policy skip: the \
                 request is given up and the host is held until {}, its next window",
                rfc3339_utc(until_ms)
            );
            store.audit_append(ACTOR, "approval deadline skip", machine_id, &message).await.map_err(error::store)?;
            tracing::warn!(
                machine_id,
                deadline,
                held_until = rfc3339_utc(until_ms),
                "approval deadline passed: skipped"
            );
            Ok(ApprovalDeadlineRecord { message, held_until_ms: Some(until_ms), approved_first: false })
        }
        DeadlinePolicy::Escalate => {
            let message = format!(
                "approval overdue: the tenant did not approve before the approval deadline ({deadline}); \
                 policy escalate: still waiting (`hostfw instance reboot --instance <id> --apply-updates-on-reboot` \
                 approves it)"
            );
            let last = store.history_list(machine_id, 1).await.map_err(error::store)?;
            if last.first().is_none_or(|h| h.message != message) {
                store
                    .machine_set_approval_overdue(machine_id, &message, input.deadline.at_ms)
                    .await
                    .map_err(error::store)?;
                store
                    .audit_append(ACTOR, "approval deadline escalate", machine_id, &message)
                    .await
                    .map_err(error::store)?;
                tracing::warn!(machine_id, deadline, "approval deadline passed: escalated");
            }
            Ok(ApprovalDeadlineRecord { message, held_until_ms: None, approved_first: false })
        }
    }
}
