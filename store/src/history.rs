//! The `state_history` table: every machine state change, numbered per machine from 1.
//!
//! Owns reading history and the one insert used inside `machine_set_state`'s transaction. It must
//! not change machine rows, and nothing else may append history (so state and history never
//! disagree). Numbers are `MAX(seq) + 1` per machine, serialised by the machine row update that
//! precedes the insert in the same transaction.

use hostfw_model::{HostState, HostSubstate};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::error::{Result, StoreError};
use crate::Store;

/// One recorded state change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HistoryEntry {
    /// The machine.
    pub machine_id: String,
    /// Per-machine sequence number, starting at 1.
    pub seq: i64,
    /// The state entered.
    pub state: HostState,
    /// The substate entered.
    pub substate: Option<HostSubstate>,
    /// Why (free text).
    pub message: String,
    /// When, unix ms.
    pub at_ms: i64,
}

/// A stored state or substate name; an unknown one is a decode error naming the value.
fn parse_name<T: std::str::FromStr<Err = hostfw_model::ParseNameError>>(
    text: String,
) -> std::result::Result<T, sqlx::Error> {
    text.parse().map_err(|e: hostfw_model::ParseNameError| sqlx::Error::Decode(Box::new(e)))
}

fn history_from_row(row: &AnyRow) -> std::result::Result<HistoryEntry, sqlx::Error> {
    Ok(HistoryEntry {
        machine_id: row.try_get("machine_id")?,
        seq: row.try_get("seq")?,
        state: parse_name(row.try_get::<String, _>("state")?)?,
        substate: row.try_get::<Option<String>, _>("substate")?.map(parse_name).transpose()?,
        message: row.try_get("message")?,
        at_ms: row.try_get("at_ms")?,
    })
}

/// Appends one history row on `conn` (a transaction that already updated the machine row).
pub(crate) async fn history_append_in(
    conn: &mut AnyConnection,
    machine_id: &str,
    state: HostState,
    substate: Option<HostSubstate>,
    message: &str,
    at_ms: i64,
) -> std::result::Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO state_history (machine_id, seq, state, substate, message, at_ms) \
         SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5 FROM state_history WHERE machine_id = $1",
    )
    .bind(machine_id)
    .bind(state.as_str())
    .bind(substate.map(HostSubstate::as_str))
    .bind(message)
    .bind(at_ms)
    .execute(conn)
    .await?;
    Ok(())
}

impl Store {
    /// Appends a history entry dated `at_ms` without changing the machine row: tests write a
    /// run's past with it (window fit reads the times of a run's entries).
    #[doc(hidden)]
    pub async fn history_append_at(
        &self,
        machine_id: &str,
        state: HostState,
        substate: Option<HostSubstate>,
        message: &str,
        at_ms: i64,
    ) -> Result<()> {
        let mut conn = self.writer.acquire().await.map_err(StoreError::db("history_append_at", machine_id))?;
        history_append_in(&mut conn, machine_id, state, substate, message, at_ms)
            .await
            .map_err(StoreError::db("history_append_at", machine_id))
    }

    /// The machine's latest `limit` state changes, newest first.
    pub async fn history_list(&self, machine_id: &str, limit: u32) -> Result<Vec<HistoryEntry>> {
        sqlx::query(
            "SELECT machine_id, seq, state, substate, message, at_ms FROM state_history \
             WHERE machine_id = $1 ORDER BY seq DESC LIMIT $2",
        )
        .bind(machine_id)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .and_then(|rows| rows.iter().map(history_from_row).collect())
        .map_err(StoreError::db("history_list", machine_id))
    }
}
