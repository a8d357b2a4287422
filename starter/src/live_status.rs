//! A host workflow's live status as `managed-host show` reads it: its `status` query, and when
//! that cannot be answered, why, in the words an operator acts on: Temporal unreachable, or the
//! server up but no worker polling the site's task queue (a query needs a worker to run it).
//!
//! Owns the query, its timeout and the explanation. It must not read the site database.

use std::time::Duration;

use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow, HostStatus};
use temporalio_client::WorkflowQueryOptions;

use crate::context::Context;

/// How long the status query may take before its silence is explained.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// A poller last seen longer ago than this is gone: a worker's long poll lasts at most about 70 s
/// before it polls again.
const POLLER_GONE_AFTER: Duration = Duration::from_secs(150);

/// The workflow's status: `Ok(None)` when the host has no workflow, `Err` with the reason when
/// it could not be read.
pub async fn query_status(ctx: &Context, machine_id: &str) -> Result<Option<HostStatus>, String> {
    let address = &ctx.site.temporal.address;
    let client = ctx.temporal().await.map_err(|e| format!("Temporal at {address}: {e:#}"))?;
    let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
    let query = handle.query(HostReprovisionWorkflow::status, (), WorkflowQueryOptions::default());
    match tokio::time::timeout(QUERY_TIMEOUT, query).await {
        Err(_) => Err(why_unanswered(ctx, client).await),
        Ok(Ok(status)) => Ok(Some(status)),
        Ok(Err(temporalio_client::errors::WorkflowQueryError::NotFound(_))) => Ok(None),
        Ok(Err(e)) => Err(format!("the status query failed: {e}")),
    }
}

/// Why a query got no answer in time: the site's task queue has no live poller (no worker runs),
/// or the server itself did not answer.
async fn why_unanswered(ctx: &Context, client: temporalio_client::Client) -> String {
    let t = &ctx.site.temporal;
    match pollers(client, &t.namespace, &t.task_queue).await {
        Ok(0) => format!(
            "no worker polls the task queue `{}` (the Temporal server at {} is up; start hostfw-worker, \
             or check its log)",
            t.task_queue, t.address
        ),
        Ok(n) => format!(
            "the workflow did not answer in {} s although {n} worker poller(s) serve the task queue `{}` \
             (the worker may be overloaded or stuck; check its log)",
            QUERY_TIMEOUT.as_secs(),
            t.task_queue
        ),
        Err(e) => format!("Temporal at {} did not answer in {} s ({e})", t.address, QUERY_TIMEOUT.as_secs()),
    }
}

/// How many workflow pollers of `task_queue` the server saw recently.
async fn pollers(client: temporalio_client::Client, namespace: &str, task_queue: &str) -> Result<usize, String> {
    use temporalio_client::grpc::WorkflowService;
    use temporalio_client::tonic::Request;
    use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
    use temporalio_common::protos::temporal::api::workflowservice::v1::DescribeTaskQueueRequest;

    let request = DescribeTaskQueueRequest {
        namespace: namespace.to_string(),
        task_queue: Some(TaskQueue { name: task_queue.to_string(), ..Default::default() }),
        ..Default::default()
    };
    let mut client = client;
    let reply = match tokio::time::timeout(QUERY_TIMEOUT, client.describe_task_queue(Request::new(request))).await {
        Ok(Ok(reply)) => reply.into_inner(),
        Ok(Err(status)) => return Err(format!("describing the task queue: {}", status.message())),
        Err(_) => return Err("no answer to DescribeTaskQueue either".to_string()),
    };
    let now = std::time::SystemTime::now();
    let live = reply
        .pollers
        .iter()
        .filter(|p| {
            let Some(seen) = &p.last_access_time else { return true };
            let seen = std::time::UNIX_EPOCH
                + Duration::from_secs(u64::try_from(seen.seconds).unwrap_or(0))
                + Duration::from_nanos(u64::try_from(seen.nanos).unwrap_or(0));
            now.duration_since(seen).map_or(true, |ago| ago < POLLER_GONE_AFTER)
        })
        .count();
    Ok(live)
}
