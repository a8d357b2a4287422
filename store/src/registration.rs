//! Registering machines: inserting or refreshing machine rows (and their BMC logins) all or
//! nothing, under the rule "one BMC is one machine".
//!
//! Owns `Registration`, `machine_upsert` and `machines_register`. A BMC address already held by
//! another machine — the same canonical address, or the same `host:port[/prefix]` over the other
//! scheme (one listener speaks one scheme) — is `StoreError::BmcAddressTaken` naming the owner,
//! whether the owner is stored or earlier in the same batch, and nothing of the batch is written.
//! Registering a machine again with its own address refreshes it (idempotent). A machine being
//! updated (a reprovisioning request, or state HostReprovision) keeps its state, instance and BMC
//! address: a registration that would change any of them is `StoreError::MachineBusy`, decided in
//! the same statement as the write, so no concurrent request slips between check and write.
//! `keep_state` registrations (a fleet import) never set the state or instance of a machine that
//! exists. It must not parse addresses (they arrive as `BmcAddress`) nor write history.

use std::collections::HashMap;

use hostfw_model::{BmcAddress, Scheme};
use sqlx::{AnyConnection, Row};

use crate::credentials::{credentials_fence_in, credentials_put_in, Credentials};
use crate::error::{is_unique_violation, Result, StoreError};
use crate::machines::{labels_to_db, NewMachine};
use crate::revisions::next_rev;
use crate::{now_ms, Store};

/// One machine to register, with the BMC login to store beside it (`None` keeps the stored one).
#[derive(Debug, Clone)]
pub struct Registration {
    pub machine: NewMachine,
    pub login: Option<Credentials>,
    /// A machine that exists keeps its state and instance (`machine.state` and
    /// `machine.instance_id` apply to a new machine only): a fleet import registers BMCs and
    /// logins, it does not say what the hosts are doing.
    pub keep_state: bool,
}

type Item<'a> = (&'a NewMachine, Option<&'a Credentials>, bool);

impl Store {
    /// Inserts the machine, or updates its BMC address, vendor/model (when given), state (a
    /// changed state clears the substate) and instance. Overrides and windows are untouched.
    /// Does not write history: state changes worth recording go through `machine_set_state`.
    /// A BMC another machine has is `BmcAddressTaken` (see the module doc), and nothing is written.
    pub async fn machine_upsert(&self, m: &NewMachine) -> Result<()> {
        self.register("machine_upsert", &[(m, None, false)]).await
    }

    /// `machine_upsert` of every machine plus its login, in one transaction: either all are
    /// registered or (on any refusal or failure) nothing is written.
    pub async fn machines_register(&self, batch: &[Registration]) -> Result<()> {
        let items: Vec<Item<'_>> = batch.iter().map(|r| (&r.machine, r.login.as_ref(), r.keep_state)).collect();
        self.register("machines_register", &items).await
    }

    async fn register(&self, op: &'static str, items: &[Item<'_>]) -> Result<()> {
        check_batch(items)?;
        if let Some((m, _, _)) = items.iter().find(|(_, login, _)| login.is_some()) {
            self.key_for_write(&m.id)?;
        }
        let first = items.first().map(|(m, _, _)| m.id.as_str()).unwrap_or_default();
        let mut tx = self.begin_write().await.map_err(StoreError::db(op, first))?;
        let now = now_ms();
        // The view revision comes first (`revisions`): it takes the write lock (SQLite) before
        // anything is read, and no machine row lock is held before it (PostgreSQL).
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(op, first))?;
        for (m, login, keep_state) in items {
            match upsert_in(&mut tx, m, *keep_state, now, rev).await {
                Ok(true) => {}
                Ok(false) => {
                    tx.rollback().await.map_err(StoreError::db(op, m.id.as_str()))?;
                    return Err(StoreError::MachineBusy { machine: m.id.clone() });
                }
                Err(e) => {
                    tx.rollback().await.map_err(StoreError::db(op, m.id.as_str()))?;
                    return Err(if is_unique_violation(&e) {
                        self.taken_or_conflict(op, m).await
                    } else {
                        StoreError::db(op, m.id.as_str())(e)
                    });
                }
            }
            let other = m.bmc_address.with_scheme(match m.bmc_address.scheme() {
                Scheme::Http => Scheme::Https,
                Scheme::Https => Scheme::Http,
            });
            let owner = owner_of(&mut tx, &other, &m.id).await.map_err(StoreError::db(op, m.id.as_str()))?;
            if let Some((owner, owned)) = owner {
                tx.rollback().await.map_err(StoreError::db(op, m.id.as_str()))?;
                return Err(taken(m, owner, owned));
            }
            if let Some(c) = login {
                let key = self.key_for_write(&m.id)?;
                credentials_fence_in(&mut tx, self.backend, key, &m.id).await?;
                credentials_put_in(&mut tx, key, &m.id, &c.username, &c.password)
                    .await
                    .map_err(StoreError::db(op, m.id.as_str()))?;
            }
        }
        tx.commit().await.map_err(StoreError::db(op, first))
    }

    /// The error for a unique violation on `m`'s address: who has it, or a plain `Conflict` if
    /// the owner is gone again (a concurrent change).
    async fn taken_or_conflict(&self, op: &'static str, m: &NewMachine) -> StoreError {
        let mut conn = match self.pool.acquire().await {
            Ok(conn) => conn,
            Err(e) => return StoreError::db(op, m.id.as_str())(e),
        };
        match owner_of(&mut conn, &m.bmc_address, &m.id).await {
            Ok(Some((owner, owned))) => taken(m, owner, owned),
            Ok(None) => StoreError::Conflict {
                op,
                id: m.id.clone(),
                detail: format!("BMC address {} already belongs to another machine", m.bmc_address),
            },
            Err(e) => StoreError::db(op, m.id.as_str())(e),
        }
    }
}

/// Two machines of one batch with one BMC (the same listener over either scheme).
fn check_batch(items: &[Item<'_>]) -> Result<()> {
    let mut seen: HashMap<BmcAddress, &NewMachine> = HashMap::new();
    for (m, _, _) in items {
        if let Some(labels) = &m.labels {
            hostfw_model::labels::check_labels(labels).map_err(|e| StoreError::Invalid {
                op: "machine_upsert",
                id: m.id.clone(),
                reason: e.to_string(),
            })?;
        }
        let listener = m.bmc_address.with_scheme(Scheme::Https);
        match seen.get(&listener) {
            Some(owner) if owner.id != m.id => {
                return Err(taken(m, owner.id.clone(), owner.bmc_address.to_string()));
            }
            _ => {
                seen.insert(listener, m);
            }
        }
    }
    Ok(())
}

fn taken(m: &NewMachine, owner: String, owned: String) -> StoreError {
    StoreError::BmcAddressTaken { machine: m.id.clone(), address: m.bmc_address.to_string(), owner, owned }
}

/// The machine other than `id` stored with exactly `address`, and its stored text.
async fn owner_of(
    conn: &mut AnyConnection,
    address: &BmcAddress,
    id: &str,
) -> std::result::Result<Option<(String, String)>, sqlx::Error> {
    let row =
        sqlx::query("SELECT id, bmc_address FROM machines WHERE bmc_address = $1 AND id <> $2 ORDER BY id LIMIT 1")
            .bind(address.to_string())
            .bind(id)
            .fetch_optional(conn)
            .await?;
    row.map(|r| Ok((r.try_get("id")?, r.try_get("bmc_address")?))).transpose()
}

/// Insert or refresh `m`; false when refused because the machine is being updated and the
/// registration would change its state, instance or BMC address (see the module doc).
async fn upsert_in(
    conn: &mut AnyConnection,
    m: &NewMachine,
    keep_state: bool,
    now: i64,
    rev: i64,
) -> std::result::Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO machines (id, bmc_address, vendor, model, state, instance_id, created_at_ms, updated_at_ms, rev, labels) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $9, COALESCE($10, '{}')) \
         ON CONFLICT (id) DO UPDATE SET \
           rev = excluded.rev, \
           labels = CASE WHEN $11 = 1 THEN excluded.labels ELSE machines.labels END, \
           bmc_address = excluded.bmc_address, \
           vendor = COALESCE(excluded.vendor, machines.vendor), \
           model = COALESCE(excluded.model, machines.model), \
           substate = CASE WHEN $8 = 1 OR machines.state = excluded.state THEN machines.substate ELSE NULL END, \
           state = CASE WHEN $8 = 1 THEN machines.state ELSE excluded.state END, \
           instance_id = CASE WHEN $8 = 1 THEN machines.instance_id ELSE excluded.instance_id END, \
           updated_at_ms = excluded.updated_at_ms \
         WHERE NOT ( \
           (machines.state = 'HostReprovision' \
             OR EXISTS (SELECT 1 FROM reprovision_requests r WHERE r.machine_id = machines.id)) \
           AND (machines.bmc_address <> excluded.bmc_address \
             OR ($8 = 0 AND (machines.state <> excluded.state \
               OR COALESCE(machines.instance_id, '') <> COALESCE(excluded.instance_id, '')))))",
    )
    .bind(&m.id)
    .bind(m.bmc_address.to_string())
    .bind(&m.vendor)
    .bind(&m.model)
    .bind(m.state.as_str())
    .bind(&m.instance_id)
    .bind(now)
    .bind(i64::from(keep_state))
    .bind(rev)
    .bind(m.labels.as_ref().map(labels_to_db))
    .bind(i64::from(m.labels.is_some()))
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}
