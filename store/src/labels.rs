//! Machine labels (failure domains) in the site database: changing a machine's labels, and the
//! guard that keeps `[machine_updater] max_concurrent_per_label` exact when a request is created.
//!
//! Owns the `labels` column's writes after registration and the `label_locks` table (migration
//! 0011). The guard takes the lock row of every capped (key, value) of the machine, in key order,
//! then counts the other hosts in flight with those labels (a request, or updating / in
//! maintenance: the same "in flight" as the scheduler's) and applies the one rule of
//! `hostfw_model::gates::LabelLoad`. It must not decide which hosts to start (that is the
//! scheduler's `gates::plan`).

use std::collections::BTreeMap;

use hostfw_model::gates::{LabelLoad, SkipReason};
use hostfw_model::{HostState, Labels};
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::machines::{labels_from_db, labels_to_db};
use crate::revisions::next_rev;
use crate::{now_ms, Store};

/// A failure-domain cap a new request would exceed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelCapHit {
    pub key: String,
    pub value: String,
    pub limit: u32,
    /// The hosts in flight with `key=value`.
    pub holders: Vec<String>,
}

impl Store {
    /// Sets the labels in `set` (replacing a key's value) and removes the keys in `remove`;
    /// returns the machine's labels after the change. Every label is checked first: a bad one
    /// changes nothing.
    pub async fn machine_set_labels(&self, id: &str, set: &Labels, remove: &[String]) -> Result<Labels> {
        const OP: &str = "machine_set_labels";
        let invalid = |reason: String| StoreError::Invalid { op: OP, id: id.to_owned(), reason };
        hostfw_model::labels::check_labels(set).map_err(|e| invalid(e.to_string()))?;
        if let Some(key) = remove.iter().find(|k| set.contains_key(*k)) {
            return Err(invalid(format!("label key {key:?} is both set and removed")));
        }
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, id))?;
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(OP, id))?;
        let Some(text) = sqlx::query_scalar::<_, String>("SELECT labels FROM machines WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id))?
        else {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            return Err(StoreError::not_found("machine", id));
        };
        let mut labels =
            labels_from_db(&text).map_err(|detail| StoreError::Corrupt { op: OP, id: id.to_owned(), detail })?;
        for key in remove {
            labels.remove(key);
        }
        labels.extend(set.iter().map(|(k, v)| (k.clone(), v.clone())));
        sqlx::query("UPDATE machines SET labels = $2, updated_at_ms = $3, rev = $4 WHERE id = $1")
            .bind(id)
            .bind(labels_to_db(&labels))
            .bind(now_ms())
            .bind(rev)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id))?;
        tx.commit().await.map_err(StoreError::db(OP, id))?;
        Ok(labels)
    }
}

/// Inside a request's transaction, after the machine's own lock: the cap of `caps` that one more
/// host in flight with `id`'s labels would exceed, if any. Takes each capped label's lock row
/// first, so a concurrent request for the same label value waits for this transaction.
pub(crate) async fn cap_check_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    id: &str,
    caps: &BTreeMap<String, u32>,
) -> std::result::Result<Option<LabelCapHit>, CapCheckError> {
    if caps.is_empty() {
        return Ok(None);
    }
    let text: String =
        sqlx::query_scalar("SELECT labels FROM machines WHERE id = $1").bind(id).fetch_one(&mut **tx).await?;
    let labels = labels_from_db(&text).map_err(CapCheckError::Corrupt)?;
    let capped: Vec<(&String, &String)> = labels.iter().filter(|(k, _)| caps.contains_key(*k)).collect();
    if capped.is_empty() {
        return Ok(None);
    }
    // Key order (a BTreeMap's) everywhere: two transactions never wait for each other's rows.
    for (key, value) in &capped {
        sqlx::query(
            "INSERT INTO label_locks (label_key, label_value, touched) VALUES ($1, $2, 1) \
             ON CONFLICT (label_key, label_value) DO UPDATE SET touched = label_locks.touched + 1",
        )
        .bind(key.as_str())
        .bind(value.as_str())
        .execute(&mut **tx)
        .await?;
    }
    let busy: Vec<&str> = HostState::ALL.iter().filter(|s| s.is_busy()).map(|s| s.as_str()).collect();
    let in_list = busy.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ");
    let rows = sqlx::query(&format!(
        "SELECT m.id, m.labels FROM machines m WHERE m.id <> $1 AND (m.state IN ({in_list}) \
         OR EXISTS (SELECT 1 FROM reprovision_requests r WHERE r.machine_id = m.id)) ORDER BY m.id"
    ))
    .bind(id)
    .fetch_all(&mut **tx)
    .await?;
    let mut others: Vec<(String, Labels)> = Vec::with_capacity(rows.len());
    for row in rows {
        let other: String = row.try_get("id")?;
        let text: String = row.try_get("labels")?;
        others.push((other, labels_from_db(&text).map_err(CapCheckError::Corrupt)?));
    }
    let load = LabelLoad::new(caps, others.iter().map(|(_, l)| l));
    Ok(load.full(&labels).map(|reason| {
        let SkipReason::LabelCapReached { key, value, limit, .. } = reason else {
            unreachable!("LabelLoad::full gives LabelCapReached only")
        };
        let holders =
            others.iter().filter(|(_, l)| l.get(&key) == Some(&value)).map(|(other, _)| other.clone()).collect();
        LabelCapHit { key, value, limit, holders }
    }))
}

/// Why the guard could not be evaluated.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CapCheckError {
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error("{0}")]
    Corrupt(String),
}
