//! The `machines` table: managed hosts, their BMC address, state/substate and per-host overrides
//! (auto-update, update window).
//!
//! Owns machine rows, their lookup by BMC address and the state change that also appends to the
//! state history (one transaction). Every write stamps the row with a new view revision (`rev`,
//! see `revisions`). Registering (insert or refresh, one BMC = one machine) is
//! `registration`. It must not decide anything about firmware (that is `hostfw-model`), and it must
//! not write history rows other than through `machine_set_state`'s transaction (which also
//! records the `approval_needed` and `approval_overdue` webhook events, `notifications`).

use hostfw_model::{BmcAddress, BmcLookup, HostState, HostSubstate, Labels, TimeWindow};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::address::find_by_bmc;
use crate::error::{Result, StoreError};
pub use crate::repair::RepairMark;
use crate::revisions::next_rev;
use crate::{bool_from_db, bool_to_db, history, now_ms, Store};

/// What a caller knows when registering or refreshing a machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewMachine {
    /// Stable machine id (`machine_id` in JSON, like everywhere else).
    #[serde(rename = "machine_id", alias = "id")]
    pub id: String,
    /// BMC address (one BMC is one machine: no other machine may have it, over either scheme).
    pub bmc_address: BmcAddress,
    /// Vendor; `None` keeps the stored value.
    pub vendor: Option<String>,
    /// Model; `None` keeps the stored value.
    pub model: Option<String>,
    /// Host state (`Ready`, `Assigned`, ...). Changing it clears the substate.
    pub state: HostState,
    /// Tenant instance; always written (`None` = not assigned).
    pub instance_id: Option<String>,
    /// Labels (failure domains); `None` keeps the stored ones (none for a new machine), `Some`
    /// replaces them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Labels>,
}

/// One managed host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Machine {
    /// Stable machine id (`machine_id` in JSON, like everywhere else).
    #[serde(rename = "machine_id", alias = "id")]
    pub id: String,
    /// BMC address, canonical.
    pub bmc_address: BmcAddress,
    /// Vendor, when known.
    pub vendor: Option<String>,
    /// Model, when known.
    pub model: Option<String>,
    /// Host state (`Ready`, `Assigned`, `HostReprovision`, `Maintenance`).
    pub state: HostState,
    /// Substate within the state (e.g. `WaitingForFirmwareUpgrade`).
    pub substate: Option<HostSubstate>,
    /// Tenant instance when assigned.
    pub instance_id: Option<String>,
    /// Per-host auto-update override; `None` = site default.
    pub auto_update: Option<bool>,
    /// The host's update window (`managed-host start-updates`); `None` = no window.
    pub window: Option<TimeWindow>,
    /// Labels (`machine add --label rack=r12`), by key.
    #[serde(default)]
    pub labels: Labels,
    /// In repair: aborted to maintenance for hands-on work (`store::repair`); cleared when it
    /// leaves maintenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairMark>,
    /// When the row was first inserted, unix ms.
    pub created_at_ms: i64,
    /// When the row last changed, unix ms.
    pub updated_at_ms: i64,
}

macro_rules! machine_columns {
    () => {
        "id, bmc_address, vendor, model, state, substate, instance_id, auto_update, \
         window_start_ms, window_end_ms, labels, repair_reason, repair_by, repair_at_ms, created_at_ms, updated_at_ms"
    };
}

pub(crate) use machine_columns;

/// The columns `machine_from_row` decodes.
pub(crate) const MACHINE_COLUMNS: &str = machine_columns!();

pub(crate) fn machine_from_row(row: &AnyRow) -> Result<Machine> {
    let id = || row.try_get::<String, _>("id").unwrap_or_default();
    let address: String = row.try_get("bmc_address").map_err(StoreError::db("machine_decode", id()))?;
    let bmc_address = address.parse::<BmcAddress>().map_err(|e| StoreError::Corrupt {
        op: "machine_decode",
        id: id(),
        detail: e.to_string(),
    })?;
    let corrupt = |detail: String| StoreError::Corrupt { op: "machine_decode", id: id(), detail };
    let state: String = row.try_get("state").map_err(StoreError::db("machine_decode", id()))?;
    let state = state.parse::<HostState>().map_err(|e| corrupt(e.to_string()))?;
    let substate: Option<String> = row.try_get("substate").map_err(StoreError::db("machine_decode", id()))?;
    let substate = substate.map(|s| s.parse::<HostSubstate>()).transpose().map_err(|e| corrupt(e.to_string()))?;
    let labels: String = row.try_get("labels").map_err(StoreError::db("machine_decode", id()))?;
    let labels = labels_from_db(&labels).map_err(corrupt)?;
    let decode = || -> std::result::Result<Machine, sqlx::Error> {
        let window_start: Option<i64> = row.try_get("window_start_ms")?;
        let window_end: Option<i64> = row.try_get("window_end_ms")?;
        let repair_reason: Option<String> = row.try_get("repair_reason")?;
        let repair_by: Option<String> = row.try_get("repair_by")?;
        let repair_at: Option<i64> = row.try_get("repair_at_ms")?;
        Ok(Machine {
            id: row.try_get("id")?,
            bmc_address,
            vendor: row.try_get("vendor")?,
            model: row.try_get("model")?,
            state,
            substate,
            instance_id: row.try_get("instance_id")?,
            auto_update: row.try_get::<Option<i64>, _>("auto_update")?.map(bool_from_db),
            window: window_start.zip(window_end).map(|(start_ms, end_ms)| TimeWindow { start_ms, end_ms }),
            labels,
            repair: repair_reason.map(|reason| RepairMark {
                reason,
                by: repair_by.unwrap_or_default(),
                at_ms: repair_at.unwrap_or_default(),
            }),
            created_at_ms: row.try_get("created_at_ms")?,
            updated_at_ms: row.try_get("updated_at_ms")?,
        })
    };
    decode().map_err(|e| StoreError::Database {
        op: "machine_decode",
        id: row.try_get::<String, _>("id").unwrap_or_default(),
        source: e,
    })
}

/// A `labels` column value: a JSON object of valid label strings.
pub(crate) fn labels_from_db(text: &str) -> std::result::Result<Labels, String> {
    let labels: Labels =
        serde_json::from_str(text).map_err(|e| format!("labels {text:?} are not a JSON object of strings: {e}"))?;
    hostfw_model::labels::check_labels(&labels).map_err(|e| e.to_string())?;
    Ok(labels)
}

/// The `labels` column value of `labels`.
pub(crate) fn labels_to_db(labels: &Labels) -> String {
    serde_json::to_string(labels).unwrap_or_else(|_| "{}".to_string())
}

impl Store {
    /// The machine with this id.
    pub async fn machine_get(&self, id: &str) -> Result<Option<Machine>> {
        sqlx::query(concat!("SELECT ", machine_columns!(), " FROM machines WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("machine_get", id))?
            .as_ref()
            .map(machine_from_row)
            .transpose()
    }

    /// The machine whose BMC `bmc` names, by `BmcLookup`'s rule (any written form of the address;
    /// a bare host finds the only machine on that host).
    pub async fn machine_by_bmc(&self, bmc: &BmcLookup) -> Result<Option<Machine>> {
        find_by_bmc(
            &self.pool,
            "machine_by_bmc",
            bmc,
            concat!("SELECT ", machine_columns!(), " FROM machines WHERE bmc_address = $1"),
            concat!(
                "SELECT ",
                machine_columns!(),
                " FROM machines WHERE substr(bmc_address, 1, length($1)) = $1 ORDER BY bmc_address LIMIT 2"
            ),
            machine_from_row,
        )
        .await
    }

    /// Every machine, ordered by id.
    pub async fn machine_list(&self) -> Result<Vec<Machine>> {
        sqlx::query(concat!("SELECT ", machine_columns!(), " FROM machines ORDER BY id"))
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("machine_list", ""))?
            .iter()
            .map(machine_from_row)
            .collect()
    }

    /// How many machines there are.
    pub async fn machine_count(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM machines")
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("machine_count", ""))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Sets state and substate and appends a history row with `message`, in one transaction.
    /// Unknown id: `NotFound { what: "machine" }` and nothing is written. A host that enters
    /// WaitingForApproval records its `approval_needed` webhook event in the same transaction.
    pub async fn machine_set_state(
        &self,
        id: &str,
        state: HostState,
        substate: Option<HostSubstate>,
        message: &str,
    ) -> Result<()> {
        self.machine_set_state_noting(id, state, substate, message, None).await
    }

    /// `machine_set_state` to Assigned / WaitingForApproval for an approval whose deadline
    /// (`deadline_ms`) passed under policy `escalate`, with its `approval_overdue` webhook event,
    /// in one transaction.
    pub async fn machine_set_approval_overdue(&self, id: &str, message: &str, deadline_ms: i64) -> Result<()> {
        let data = serde_json::json!({ "machine_id": id, "deadline_ms": deadline_ms, "message": message });
        let notice = Some((hostfw_model::NotificationKind::ApprovalOverdue, data));
        self.machine_set_state_noting(id, HostState::Assigned, Some(HostSubstate::WaitingForApproval), message, notice)
            .await
    }

    async fn machine_set_state_noting(
        &self,
        id: &str,
        state: HostState,
        substate: Option<HostSubstate>,
        message: &str,
        notice: Option<(hostfw_model::NotificationKind, serde_json::Value)>,
    ) -> Result<()> {
        const OP: &str = "machine_set_state";
        let now = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, id))?;
        // The view revision comes first (`revisions`): it serialises every writer of machines,
        // concurrent state changes of this machine and their history numbering included.
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(OP, id))?;
        let before: Option<Option<String>> = sqlx::query_scalar("SELECT substate FROM machines WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id))?;
        let updated =
            sqlx::query("UPDATE machines SET state = $2, substate = $3, updated_at_ms = $4, rev = $5 WHERE id = $1")
                .bind(id)
                .bind(state.as_str())
                .bind(substate.map(HostSubstate::as_str))
                .bind(now)
                .bind(rev)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(OP, id))?;
        if updated.rows_affected() == 0 {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            return Err(StoreError::not_found("machine", id));
        }
        history::history_append_in(&mut tx, id, state, substate, message, now).await.map_err(StoreError::db(OP, id))?;
        let waiting = HostSubstate::WaitingForApproval;
        let entered_approval = substate == Some(waiting) && before.flatten().as_deref() != Some(waiting.as_str());
        let mut notices = Vec::new();
        if entered_approval {
            let data = serde_json::json!({ "machine_id": id, "message": message });
            notices.push((hostfw_model::NotificationKind::ApprovalNeeded, data));
        }
        notices.extend(notice);
        for (kind, data) in notices {
            crate::notifications::notify_in(&mut tx, kind, id, data, now).await.map_err(StoreError::db(OP, id))?;
        }
        tx.commit().await.map_err(StoreError::db(OP, id))?;
        Ok(())
    }

    /// Sets (`Some`) or clears (`None` = site default) the per-host auto-update override.
    pub async fn machine_set_auto_update(&self, id: &str, auto_update: Option<bool>) -> Result<()> {
        self.machine_set_auto_update_many(&[id.to_string()], auto_update).await
    }

    /// [`Store::machine_set_auto_update`] for several machines in one transaction: all of them or,
    /// when one is not registered (`NotFound` naming it), none.
    pub async fn machine_set_auto_update_many(&self, ids: &[String], auto_update: Option<bool>) -> Result<()> {
        const OP: &str = "machine_set_auto_update";
        let first = ids.first().map(String::as_str).unwrap_or_default();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, first))?;
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(OP, first))?;
        let now = now_ms();
        for id in ids {
            let done = sqlx::query("UPDATE machines SET auto_update = $2, updated_at_ms = $3, rev = $4 WHERE id = $1")
                .bind(id)
                .bind(auto_update.map(bool_to_db))
                .bind(now)
                .bind(rev)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(OP, id.as_str()))?;
            if done.rows_affected() == 0 {
                tx.rollback().await.map_err(StoreError::db(OP, id.as_str()))?;
                return Err(StoreError::not_found("machine", id.as_str()));
            }
        }
        tx.commit().await.map_err(StoreError::db(OP, first))
    }
}
