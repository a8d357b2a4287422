//! The `upload_slots` table: the site-wide limit on concurrent Redfish uploads
//! (`firmware_global.max_uploads`), honoured across every worker because the slots live in the
//! site database, not in one process (NICo's in-process semaphore bounded only initiations).
//!
//! A slot is a lease: the holder renews it while its upload runs and releases it at the end; a
//! holder that died loses it when the lease expires. Only slots `0..max` count, so lowering
//! `max_uploads` takes effect as soon as higher slots are released.
//!
//! Every grant carries a fencing token, the slot's `generation`, bumped by each grant. The same
//! holder (one upload of one workflow) may take its own slot over at once, live lease or not: that
//! is its retried attempt after the server timed the previous one out. Renewal ([`Store::upload_slot_renew`],
//! also the check right before the irreversible POST) and release name the generation they were
//! granted, so the superseded attempt learns it lost the slot and can neither renew nor release
//! the new grant. A lease, once expired, cannot be renewed; renewal never shortens a lease.
//!
//! Lease times are the database's clock (`db_clock`), never a worker's: a worker whose clock runs
//! ahead would otherwise see a live lease as expired and take the slot while its holder uploads.

use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::Store;

/// One grant of an upload slot: the slot and its fencing token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlotGrant {
    pub slot: u32,
    /// Bumped by every grant of this slot; renewals and the release must name it.
    pub generation: i64,
}

/// One held slot as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldSlotRow {
    pub slot: u32,
    pub holder: String,
    pub generation: i64,
    /// When the lease ends (unix ms); a past value means expired, free for anyone.
    pub expires_at_ms: i64,
}

impl Store {
    /// Try to take one of `max` upload slots for `holder` for `lease_ms`. Returns the grant, or
    /// `None` when all `max` slots are held by live leases of other holders. A slot `holder`
    /// already holds is granted again with a new generation (its earlier grant is fenced off).
    pub async fn upload_slot_acquire(&self, holder: &str, max: u32, lease_ms: i64) -> Result<Option<SlotGrant>> {
        const OP: &str = "upload_slot_acquire";
        let now = self.db_now_ms().await?;
        let max = i64::from(max);
        // The slot rows exist once `max` was seen: only a first call (or a raised `max`) writes them.
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM upload_slots WHERE slot < $1")
            .bind(max)
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db(OP, holder))?;
        if rows < max {
            for slot in 0..max {
                sqlx::query(
                    "INSERT INTO upload_slots (slot, holder, expires_at_ms) VALUES ($1, NULL, 0) ON CONFLICT (slot) DO NOTHING",
                )
                .bind(slot)
                .execute(&self.writer)
                .await
                .map_err(StoreError::db(OP, holder))?;
            }
        }
        // Read which slots could be granted (this holder's own first: its takeover, then free or
        // expired ones), so a waiter that finds every slot held writes nothing.
        let candidates = sqlx::query(
            "SELECT slot, holder FROM upload_slots \
             WHERE slot < $1 AND (holder IS NULL OR holder = $2 OR expires_at_ms < $3) ORDER BY slot",
        )
        .bind(max)
        .bind(holder)
        .bind(now)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, holder))?;
        let mut order: Vec<(bool, i64)> = Vec::with_capacity(candidates.len());
        for row in candidates {
            let slot: i64 = row.try_get("slot").map_err(StoreError::db(OP, holder))?;
            let held_by: Option<String> = row.try_get("holder").map_err(StoreError::db(OP, holder))?;
            order.push((held_by.as_deref() != Some(holder), slot));
        }
        order.sort_unstable();
        for (_, slot) in order {
            // The condition is re-checked on the row being updated, so two workers racing for the
            // same free slot cannot both win it; RETURNING gives the generation this grant made.
            let taken = sqlx::query(
                "UPDATE upload_slots SET holder = $1, expires_at_ms = $2, generation = generation + 1 \
                 WHERE slot = $3 AND (holder IS NULL OR holder = $1 OR expires_at_ms < $4) \
                 RETURNING generation",
            )
            .bind(holder)
            .bind(now + lease_ms)
            .bind(slot)
            .bind(now)
            .fetch_optional(&self.writer)
            .await
            .map_err(StoreError::db(OP, holder))?;
            if let Some(row) = taken {
                let generation: i64 = row.try_get("generation").map_err(StoreError::db(OP, holder))?;
                return Ok(Some(SlotGrant { slot: slot as u32, generation }));
            }
        }
        Ok(None)
    }

    /// Extend `grant` by `holder` to at least `lease_ms` from now (never shortens it). False when
    /// the grant is no longer held: taken over (a newer generation), released, or expired. This
    /// is also the fence: checked right before an irreversible step.
    pub async fn upload_slot_renew(&self, grant: SlotGrant, holder: &str, lease_ms: i64) -> Result<bool> {
        let now = self.db_now_ms().await?;
        let done = sqlx::query(
            "UPDATE upload_slots SET expires_at_ms = CASE WHEN expires_at_ms > $1 THEN expires_at_ms ELSE $1 END \
             WHERE slot = $2 AND holder = $3 AND generation = $4 AND expires_at_ms >= $5",
        )
        .bind(now + lease_ms)
        .bind(i64::from(grant.slot))
        .bind(holder)
        .bind(grant.generation)
        .bind(now)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db("upload_slot_renew", holder))?;
        Ok(done.rows_affected() == 1)
    }

    /// Give `grant` back (no-op when it was taken over or released meanwhile).
    pub async fn upload_slot_release(&self, grant: SlotGrant, holder: &str) -> Result<()> {
        sqlx::query(
            "UPDATE upload_slots SET holder = NULL, expires_at_ms = 0 WHERE slot = $1 AND holder = $2 AND generation = $3",
        )
        .bind(i64::from(grant.slot))
        .bind(holder)
        .bind(grant.generation)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db("upload_slot_release", holder))?;
        Ok(())
    }

    /// Give back every slot `holder` holds, whatever its generation. For repairs and tests only:
    /// an upload attempt must release its own grant ([`Store::upload_slot_release`]), since a
    /// superseded attempt would otherwise free its successor's slot.
    pub async fn upload_slot_release_holder(&self, holder: &str) -> Result<()> {
        sqlx::query("UPDATE upload_slots SET holder = NULL, expires_at_ms = 0 WHERE holder = $1")
            .bind(holder)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db("upload_slot_release_holder", holder))?;
        Ok(())
    }

    /// Every slot with a holder (live or expired lease), by slot: for metrics, `doctor`-style
    /// checks (a slot held for a closed workflow) and tests.
    pub async fn upload_slots_held(&self) -> Result<Vec<HeldSlotRow>> {
        let rows = sqlx::query(
            "SELECT slot, holder, generation, expires_at_ms FROM upload_slots WHERE holder IS NOT NULL ORDER BY slot",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("upload_slots_held", ""))?;
        rows.iter()
            .map(|r| {
                let slot: i64 = r.try_get("slot")?;
                Ok(HeldSlotRow {
                    slot: slot as u32,
                    holder: r.try_get("holder")?,
                    generation: r.try_get("generation")?,
                    expires_at_ms: r.try_get("expires_at_ms")?,
                })
            })
            .collect::<std::result::Result<Vec<_>, sqlx::Error>>()
            .map_err(StoreError::db("upload_slots_held", ""))
    }

    /// Live leases among the first `max` slots (for metrics and tests).
    pub async fn upload_slots_in_use(&self, max: u32) -> Result<u32> {
        let now = self.db_now_ms().await?;
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM upload_slots WHERE slot < $1 AND holder IS NOT NULL AND expires_at_ms >= $2",
        )
        .bind(i64::from(max))
        .bind(now)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("upload_slots_in_use", ""))?;
        let n: i64 = row.try_get("n").map_err(StoreError::db("upload_slots_in_use", ""))?;
        Ok(n as u32)
    }
}
