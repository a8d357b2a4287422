//! Deferred bookkeeping of the host workflow: bookkeeping that needs no retry semantics of its
//! own costs no activity.
//!
//! - A substate change is kept in the workflow state and written to the site database by the
//!   next activity the workflow schedules, which carries it in its input (`records`); before a
//!   timer, a wait or an activity that carries nothing, one local activity writes what is pending.
//! - Search attributes are upserted once, just before the workflow next waits, and only those
//!   whose value changed since the last upsert.
//!
//! This is the one history shape of hostfw 1.0 (the pre-1.0 "classic" shape, an activity per
//! substate and an upsert per change, is gone; see `crate::versions`).
//! Owns what is pending between two waits; it must not decide what a substate is.
//! Deterministic code only (see the crate docs).

use std::collections::BTreeMap;

use temporalio_common::search_attributes::SearchAttributeKey;
use temporalio_workflow::WorkflowResult;

use crate::contracts::{HostActivities, SubstateUpdate};
use crate::host::steps::Ctx;
use crate::names;
use crate::options;

/// What is pending between two waits.
#[derive(Debug, Clone, Default)]
pub(crate) struct Deferred {
    /// Substate records not yet written, oldest first.
    records: Vec<SubstateUpdate>,
    /// Keyword search attributes as last upserted, and as they should be now.
    shown: BTreeMap<&'static str, String>,
    wanted: BTreeMap<&'static str, String>,
}

/// Keep a substate record for the next activity.
pub(crate) fn defer_record(ctx: &Ctx, record: SubstateUpdate) {
    ctx.state_mut(|s| {
        s.deferred.wanted.insert(names::SA_SUBSTATE, record.substate.as_str().to_owned());
        s.deferred.records.push(record);
    });
}

/// Set a keyword search attribute at the next wait, if it changed.
pub(crate) fn want(ctx: &Ctx, name: &'static str, value: String) {
    ctx.state_mut(|s| s.deferred.wanted.insert(name, value));
}

/// Upsert, in one command, the search attributes whose wanted value differs from the one shown.
pub(crate) fn flush_attributes(ctx: &Ctx) {
    let changed: Vec<(&'static str, String)> = ctx.state_mut(|s| {
        let d = &mut s.deferred;
        let changed: Vec<(&'static str, String)> =
            d.wanted.iter().filter(|(k, v)| d.shown.get(*k) != Some(v)).map(|(k, v)| (*k, v.clone())).collect();
        for (k, v) in &changed {
            d.shown.insert(k, v.clone());
        }
        changed
    });
    if !changed.is_empty() {
        ctx.upsert_search_attributes(changed.into_iter().map(|(name, value)| keyword(name).value_set(value)));
    }
}

/// The records an activity about to be scheduled carries (attributes are flushed first, so the
/// Web UI shows the substate the activity works in).
pub(crate) fn take_records(ctx: &Ctx) -> Vec<SubstateUpdate> {
    flush_attributes(ctx);
    ctx.state_mut(|s| std::mem::take(&mut s.deferred.records))
}

/// Before a timer, a wait or an activity that carries no records: upsert changed attributes and
/// write pending records with one local activity.
pub(crate) async fn flush(ctx: &Ctx) -> WorkflowResult<()> {
    let records = take_records(ctx);
    if !records.is_empty() {
        ctx.execute_local_activity(HostActivities::record_substates, records, options::local_bookkeeping()).await?;
    }
    Ok(())
}

fn keyword(name: &'static str) -> SearchAttributeKey<String> {
    SearchAttributeKey::keyword(name)
}
