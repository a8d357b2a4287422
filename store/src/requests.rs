//! The `reprovision_requests` table: at most one host reprovision (firmware update) request per
//! machine, with its approval, start, retry count and workflow id.
//!
//! Owns creating, reading, updating and clearing requests. Creation never overwrites an existing
//! request (NICo's bug), and "clear if not started" is one conditional DELETE, so it can never
//! remove a request a workflow already started. It must not start or signal workflows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::gate_fence::{advance_in, bump_in, GateFence};
use crate::tuning::REQUEST_CREATE_ATTEMPTS;
use crate::{bool_from_db, bool_to_db, now_ms, Store};

/// What a caller supplies to request a reprovision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRequest {
    /// The machine to update (must exist).
    pub machine_id: String,
    /// Who asked: "Automated", "AdminCli", ...
    pub initiator: String,
    /// Optional message shown to operators / tenants.
    pub update_message: Option<String>,
    /// The workflow that will carry it out, when already known.
    pub workflow_id: Option<String>,
}

/// A stored reprovision request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Request {
    /// The machine.
    pub machine_id: String,
    /// Who asked.
    pub initiator: String,
    /// Optional message.
    pub update_message: Option<String>,
    /// When requested, unix ms.
    pub requested_at_ms: i64,
    /// When the update started, unix ms (first start wins).
    pub started_at_ms: Option<i64>,
    /// Tenant approval received (assigned hosts).
    pub user_approval: bool,
    /// Failed attempts so far.
    pub retry_count: u32,
    /// The retry budget is spent: the host waits for `managed-host reset-host-reprovisioning`.
    pub exhausted: bool,
    /// The workflow carrying it out.
    pub workflow_id: Option<String>,
    /// When an operator declared a manual upgrade complete, unix ms.
    pub manual_upgrade_completed_ms: Option<i64>,
    /// A reset of the host was requested.
    pub reset_requested: bool,
}

/// Result of `request_create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RequestCreate {
    /// A new request was stored.
    Created(Request),
    /// A request already existed; it was left untouched and is returned.
    Exists(Request),
}

/// Result of `request_delete_if_not_started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClearOutcome {
    /// The unstarted request was removed.
    Cleared,
    /// There was no request.
    NotFound,
    /// The request has started and was kept.
    AlreadyStarted(Request),
}

macro_rules! request_columns {
    () => {
        "machine_id, initiator, update_message, requested_at_ms, started_at_ms, user_approval, \
         retry_count, exhausted, workflow_id, manual_upgrade_completed_ms, reset_requested"
    };
}

fn request_from_row(row: &AnyRow) -> Result<Request> {
    let machine_id: String = row.try_get("machine_id").map_err(StoreError::db("request_decode", ""))?;
    let decode = || -> std::result::Result<(Request, i64), sqlx::Error> {
        let request = Request {
            machine_id: machine_id.clone(),
            initiator: row.try_get("initiator")?,
            update_message: row.try_get("update_message")?,
            requested_at_ms: row.try_get("requested_at_ms")?,
            started_at_ms: row.try_get("started_at_ms")?,
            user_approval: bool_from_db(row.try_get("user_approval")?),
            retry_count: 0, // range-checked below
            exhausted: bool_from_db(row.try_get("exhausted")?),
            workflow_id: row.try_get("workflow_id")?,
            manual_upgrade_completed_ms: row.try_get("manual_upgrade_completed_ms")?,
            reset_requested: bool_from_db(row.try_get("reset_requested")?),
        };
        Ok((request, row.try_get("retry_count")?))
    };
    let (mut request, retry_count) = decode().map_err(StoreError::db("request_decode", &machine_id))?;
    request.retry_count = u32::try_from(retry_count).map_err(|_| StoreError::Corrupt {
        op: "request_decode",
        id: machine_id.clone(),
        detail: format!("retry_count {retry_count} is out of range"),
    })?;
    Ok(request)
}

impl Store {
    /// Stores a new request for an existing machine, or returns the existing one untouched.
    /// Unknown machine: `NotFound { what: "machine" }`; a machine in maintenance: `Conflict`.
    pub async fn request_create(&self, new: &NewRequest) -> Result<RequestCreate> {
        self.request_create_capped(new, &BTreeMap::new()).await
    }

    /// [`Store::request_create`] under failure-domain caps (`[machine_updater]
    /// max_concurrent_per_label`): refused with `LabelCapReached` when the machine carries a capped
    /// label whose value already has `limit` hosts in flight. Exact under concurrency: requests for
    /// one label value serialise on its lock row (`labels`), so no interleaving of callers
    /// overshoots a cap.
    pub async fn request_create_capped(&self, new: &NewRequest, caps: &BTreeMap<String, u32>) -> Result<RequestCreate> {
        self.request_create_guarded(new, caps, false, None).await
    }

    /// [`Store::request_create_capped`], and with `honour_freezes` refused (`Frozen`) when a
    /// freeze in force covers the machine: checked in the request's own transaction, so a request
    /// from a plan read before the freeze committed does not start (the scheduler's path; an
    /// operator's `--ignore-rollout-gates` request passes `false`).
    ///
    /// With a `fence` (read before the view the decision to request came from,
    /// `Store::gate_fence`), the request is written only while no other write has moved the fence
    /// since: else `GateMoved` and nothing is written. Every request moves the fence by one
    /// (`gate_fence`), so a caller making several requests from one view passes the same fence to
    /// each.
    pub async fn request_create_guarded(
        &self,
        new: &NewRequest,
        caps: &BTreeMap<String, u32>,
        honour_freezes: bool,
        mut fence: Option<&mut GateFence>,
    ) -> Result<RequestCreate> {
        const OP: &str = "request_create";
        let id = new.machine_id.as_str();
        // A request deleted between our INSERT and our read makes us go round once more.
        for _ in 0..REQUEST_CREATE_ATTEMPTS {
            let mut tx = self.begin_write().await.map_err(StoreError::db(OP, id))?;
            // The machine's write lock first (its row on PostgreSQL, the database on SQLite), as
            // `machine_maintenance` takes it: the two are serialised per machine, and the state
            // read below is what committed before us.
            if !crate::maintenance::lock_machine(&mut tx, id).await.map_err(StoreError::db(OP, id))? {
                tx.rollback().await.map_err(StoreError::db(OP, id))?;
                return Err(StoreError::not_found("machine", id));
            }
            let state: String = sqlx::query_scalar("SELECT state FROM machines WHERE id = $1")
                .bind(id)
                .fetch_one(&mut *tx)
                .await
                .map_err(StoreError::db(OP, id))?;
            if state == hostfw_model::HostState::Maintenance.as_str() {
                tx.rollback().await.map_err(StoreError::db(OP, id))?;
                return Err(StoreError::Conflict {
                    op: OP,
                    id: id.to_owned(),
                    detail: format!(
                        "machine {id} is in maintenance: no update starts until `hostfw machine maintenance \
                         --machine {id} --exit`"
                    ),
                });
            }
            let has_request: bool =
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM reprovision_requests WHERE machine_id = $1")
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(StoreError::db(OP, id))?
                    > 0;
            if !has_request && honour_freezes {
                if let Some(freeze) = crate::brakes::freeze_covering_in(&mut tx, id).await? {
                    tx.rollback().await.map_err(StoreError::db(OP, id))?;
                    return Err(StoreError::Frozen {
                        machine: id.to_owned(),
                        freeze_id: freeze.id,
                        scope: freeze.scope.key(),
                        by: freeze.by,
                        reason: freeze.reason,
                    });
                }
            }
            if !has_request {
                let hit = crate::labels::cap_check_in(&mut tx, id, caps).await.map_err(|e| match e {
                    crate::labels::CapCheckError::Db(e) => StoreError::db(OP, id)(e),
                    crate::labels::CapCheckError::Corrupt(detail) => {
                        StoreError::Corrupt { op: OP, id: id.to_owned(), detail }
                    }
                })?;
                if let Some(hit) = hit {
                    tx.rollback().await.map_err(StoreError::db(OP, id))?;
                    return Err(StoreError::LabelCapReached {
                        machine: id.to_owned(),
                        key: hit.key,
                        value: hit.value,
                        limit: hit.limit,
                        holders: hit.holders,
                    });
                }
            }
            // Insert unless a request exists, returning the new row. (SQLite wants a WHERE on
            // INSERT … SELECT … ON CONFLICT; EXISTS is it.)
            let created = sqlx::query(concat!(
                "INSERT INTO reprovision_requests (machine_id, initiator, update_message, requested_at_ms, \
                   started_at_ms, user_approval, retry_count, workflow_id, manual_upgrade_completed_ms, reset_requested) \
                 SELECT $1, $2, $3, $4, NULL, 0, 0, $5, NULL, 0 \
                 WHERE EXISTS (SELECT 1 FROM machines WHERE id = $1) \
                 ON CONFLICT (machine_id) DO NOTHING \
                 RETURNING ",
                request_columns!()
            ))
            .bind(id)
            .bind(new.initiator.as_str())
            .bind(new.update_message.as_deref())
            .bind(now_ms())
            .bind(new.workflow_id.as_deref())
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id))?;
            if created.is_some() {
                // A new request ends the host's approval hold (the scheduler does not select a
                // held host; an operator's direct request does, and its approval starts anew).
                sqlx::query("DELETE FROM approval_holds WHERE machine_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::db(OP, id))?;
                // The fence last: every lock of this transaction is taken before it.
                match fence.as_deref_mut() {
                    Some(f) => {
                        let read = f.epoch();
                        if !advance_in(&mut tx, f).await.map_err(StoreError::db(OP, id))? {
                            tx.rollback().await.map_err(StoreError::db(OP, id))?;
                            return Err(StoreError::GateMoved { decision: format!("start {id}"), read });
                        }
                    }
                    None => bump_in(&mut tx).await.map_err(StoreError::db(OP, id))?,
                }
            }
            tx.commit().await.map_err(StoreError::db(OP, id))?;
            if let Some(row) = created {
                return request_from_row(&row).map(RequestCreate::Created);
            }
            if let Some(existing) = self.request_get(id).await? {
                return Ok(RequestCreate::Exists(existing));
            }
        }
        Err(StoreError::Conflict {
            op: OP,
            id: id.to_owned(),
            detail: "the request kept being deleted while it was being created".to_owned(),
        })
    }

    /// The request of `machine_id`.
    pub async fn request_get(&self, machine_id: &str) -> Result<Option<Request>> {
        sqlx::query(concat!("SELECT ", request_columns!(), " FROM reprovision_requests WHERE machine_id = $1"))
            .bind(machine_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("request_get", machine_id))?
            .as_ref()
            .map(request_from_row)
            .transpose()
    }

    /// Every request, oldest first.
    pub async fn request_list(&self) -> Result<Vec<Request>> {
        sqlx::query(concat!(
            "SELECT ",
            request_columns!(),
            " FROM reprovision_requests ORDER BY requested_at_ms, machine_id"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("request_list", ""))?
        .iter()
        .map(request_from_row)
        .collect()
    }

    /// Records that the update started at `at_ms`; a request already started keeps its first
    /// start time (replays are no-ops). Unknown request: `NotFound { what: "request" }`.
    pub async fn request_mark_started(&self, machine_id: &str, at_ms: i64) -> Result<()> {
        self.request_update(
            "request_mark_started",
            "UPDATE reprovision_requests SET started_at_ms = COALESCE(started_at_ms, $2) WHERE machine_id = $1",
            machine_id,
            at_ms,
        )
        .await
    }

    /// Records whether the tenant approved. Unknown request: `NotFound`.
    pub async fn request_set_approval(&self, machine_id: &str, approved: bool) -> Result<()> {
        self.request_update(
            "request_set_approval",
            "UPDATE reprovision_requests SET user_approval = $2 WHERE machine_id = $1",
            machine_id,
            bool_to_db(approved),
        )
        .await
    }

    /// Sets the retry count (and clears `exhausted`: a count is set by a reset or a new retry).
    /// Unknown request: `NotFound`.
    pub async fn request_set_retry_count(&self, machine_id: &str, n: u32) -> Result<()> {
        self.request_update(
            "request_set_retry_count",
            "UPDATE reprovision_requests SET retry_count = $2, exhausted = 0 WHERE machine_id = $1",
            machine_id,
            i64::from(n),
        )
        .await
    }

    /// Sets the retry count and whether the budget is spent. Unknown request: `NotFound`.
    /// A request that turns exhausted records its `host_exhausted` webhook event in the same
    /// transaction (once: recording it exhausted again adds none).
    pub async fn request_record_retry(&self, machine_id: &str, n: u32, exhausted: bool) -> Result<()> {
        const OP: &str = "request_record_retry";
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, machine_id))?;
        let was: Option<i64> = sqlx::query_scalar("SELECT exhausted FROM reprovision_requests WHERE machine_id = $1")
            .bind(machine_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        let Some(was) = was else {
            tx.rollback().await.map_err(StoreError::db(OP, machine_id))?;
            return Err(StoreError::not_found("request", machine_id));
        };
        sqlx::query("UPDATE reprovision_requests SET retry_count = $2, exhausted = $3 WHERE machine_id = $1")
            .bind(machine_id)
            .bind(i64::from(n))
            .bind(bool_to_db(exhausted))
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        if exhausted && was == 0 {
            let data = serde_json::json!({ "machine_id": machine_id, "retry_count": n });
            crate::notifications::notify_in(
                &mut tx,
                hostfw_model::NotificationKind::HostExhausted,
                machine_id,
                data,
                now_ms(),
            )
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        }
        tx.commit().await.map_err(StoreError::db(OP, machine_id))
    }

    /// Records whether a host reset was requested. Unknown request: `NotFound` (NICo silently
    /// did nothing here).
    pub async fn request_set_reset_requested(&self, machine_id: &str, requested: bool) -> Result<()> {
        self.request_update(
            "request_set_reset_requested",
            "UPDATE reprovision_requests SET reset_requested = $2 WHERE machine_id = $1",
            machine_id,
            bool_to_db(requested),
        )
        .await
    }

    /// Records that an operator finished a manual upgrade at `at_ms`. Unknown request: `NotFound`.
    pub async fn request_mark_manual_upgrade_completed(&self, machine_id: &str, at_ms: i64) -> Result<()> {
        self.request_update(
            "request_mark_manual_upgrade_completed",
            "UPDATE reprovision_requests SET manual_upgrade_completed_ms = $2 WHERE machine_id = $1",
            machine_id,
            at_ms,
        )
        .await
    }

    /// Sets the workflow id carrying the request out. Unknown request: `NotFound`.
    pub async fn request_set_workflow_id(&self, machine_id: &str, workflow_id: &str) -> Result<()> {
        const OP: &str = "request_set_workflow_id";
        let done = sqlx::query("UPDATE reprovision_requests SET workflow_id = $2 WHERE machine_id = $1")
            .bind(machine_id)
            .bind(workflow_id)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::not_found("request", machine_id));
        }
        Ok(())
    }

    /// Removes the request of `machine_id`; true if there was one.
    pub async fn request_delete(&self, machine_id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM reprovision_requests WHERE machine_id = $1")
            .bind(machine_id)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db("request_delete", machine_id))?;
        Ok(done.rows_affected() > 0)
    }

    /// Removes the request only if it has not started, atomically (one conditional DELETE); if
    /// nothing was removed, says why.
    pub async fn request_delete_if_not_started(&self, machine_id: &str) -> Result<ClearOutcome> {
        let done = sqlx::query("DELETE FROM reprovision_requests WHERE machine_id = $1 AND started_at_ms IS NULL")
            .bind(machine_id)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db("request_delete_if_not_started", machine_id))?;
        if done.rows_affected() > 0 {
            return Ok(ClearOutcome::Cleared);
        }
        Ok(match self.request_get(machine_id).await? {
            Some(request) if request.started_at_ms.is_some() => ClearOutcome::AlreadyStarted(request),
            // Deleted by someone else in between, or (impossible after the DELETE) unstarted.
            _ => ClearOutcome::NotFound,
        })
    }

    /// Runs `sql` (`$1` = machine id, `$2` = value) and maps "no row" to `NotFound`.
    async fn request_update(&self, op: &'static str, sql: &'static str, machine_id: &str, value: i64) -> Result<()> {
        let done = sqlx::query(sql)
            .bind(machine_id)
            .bind(value)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db(op, machine_id))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::not_found("request", machine_id));
        }
        Ok(())
    }
}
