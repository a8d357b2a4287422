//! The `upload_slots` table: the site-wide limit on concurrent Redfish uploads
//! (`firmware_global.max_uploads`), honoured across every worker because the slots live in the
//! site database, not in one process (NICo's in-process semaphore bounded only initiations).
//!
//! A slot is a lease: the holder renews it while its upload runs and releases it at the end; a
//! holder that died loses it when the lease expires. Only slots `0..max` count, so lowering
//! `max_uploads` takes effect as soon as higher slots are released.

use crate::error::{Result, StoreError};
use crate::{now_ms, Store};

impl Store {
    /// Try to take one of `max` upload slots for `holder` for `lease_ms`. Returns the slot number,
    /// or `None` when all `max` slots are held by live leases.
    pub async fn upload_slot_acquire(&self, holder: &str, max: u32, lease_ms: i64) -> Result<Option<u32>> {
        let now = now_ms();
        for slot in 0..i64::from(max) {
            sqlx::query("INSERT INTO upload_slots (slot, holder, expires_at_ms) VALUES ($1, NULL, 0) ON CONFLICT (slot) DO NOTHING")
                .bind(slot)
                .execute(&self.pool)
                .await
                .map_err(StoreError::db("upload_slot_acquire", holder))?;
        }
        for slot in 0..i64::from(max) {
            // The condition is re-checked on the row being updated, so two workers racing for the
            // same free slot cannot both win it.
            let taken = sqlx::query(
                "UPDATE upload_slots SET holder = $1, expires_at_ms = $2 \
                 WHERE slot = $3 AND (holder IS NULL OR holder = $1 OR expires_at_ms < $4)",
            )
            .bind(holder)
            .bind(now + lease_ms)
            .bind(slot)
            .bind(now)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("upload_slot_acquire", holder))?;
            if taken.rows_affected() == 1 {
                return Ok(Some(slot as u32));
            }
        }
        Ok(None)
    }

    /// Extend `holder`'s lease on `slot`. False when the lease was lost (expired and taken).
    pub async fn upload_slot_renew(&self, slot: u32, holder: &str, lease_ms: i64) -> Result<bool> {
        let done = sqlx::query("UPDATE upload_slots SET expires_at_ms = $1 WHERE slot = $2 AND holder = $3")
            .bind(now_ms() + lease_ms)
            .bind(i64::from(slot))
            .bind(holder)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("upload_slot_renew", holder))?;
        Ok(done.rows_affected() == 1)
    }

    /// Give `slot` back (no-op when `holder` no longer holds it).
    pub async fn upload_slot_release(&self, slot: u32, holder: &str) -> Result<()> {
        sqlx::query("UPDATE upload_slots SET holder = NULL, expires_at_ms = 0 WHERE slot = $1 AND holder = $2")
            .bind(i64::from(slot))
            .bind(holder)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("upload_slot_release", holder))?;
        Ok(())
    }

    /// Give back every slot `holder` holds (a retried upload that found nothing to do releases the
    /// slot its lost attempt took, instead of leaving it blocked until the lease expires).
    pub async fn upload_slot_release_holder(&self, holder: &str) -> Result<()> {
        sqlx::query("UPDATE upload_slots SET holder = NULL, expires_at_ms = 0 WHERE holder = $1")
            .bind(holder)
            .execute(&self.pool)
            .await
            .map_err(StoreError::db("upload_slot_release_holder", holder))?;
        Ok(())
    }

    /// Live leases among the first `max` slots (for metrics and tests).
    pub async fn upload_slots_in_use(&self, max: u32) -> Result<u32> {
        use sqlx::Row;
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM upload_slots WHERE slot < $1 AND holder IS NOT NULL AND expires_at_ms >= $2",
        )
        .bind(i64::from(max))
        .bind(now_ms())
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("upload_slots_in_use", ""))?;
        let n: i64 = row.try_get("n").map_err(StoreError::db("upload_slots_in_use", ""))?;
        Ok(n as u32)
    }
}
