//! The `credentials` table: BMC logins, looked up by machine id inside activities.
//!
//! Owns storing and reading usernames and passwords, and re-encrypting them under a new site key.
//! Passwords are stored sealed with the site key (`sealed`: XChaCha20-Poly1305, the machine id as
//! associated data). Rows written before encryption existed hold plaintext: they are still read,
//! `credentials_plaintext_count` counts them and `credentials_rekey` encrypts them. Writing a
//! password with no site key configured is refused (`StoreError::NoSiteKey`).
//!
//! It must never log, print, serialise or put a password into an error: `Credentials` has a
//! redacting `Debug` (its password is a `Secret`) and deliberately no serde derives, so it cannot
//! end up in a workflow payload or a JSON report by accident.

use hostfw_model::Secret;
use sqlx::{AnyConnection, Row};

use crate::audit::audit_append_in;
use crate::error::{Result, StoreError};
use crate::sealed::{self, Opened, SEALED_PREFIX};
use crate::site_key::SiteKey;
use crate::{now_ms, Backend, Store};

/// The audit action of a re-encryption; its detail ends with `site key <from> -> <to>`, which
/// [`credentials_fence_in`] reads.
const AUDIT_REKEY: &str = "credentials rekey";

/// A BMC login. The password is a [`Secret`]: `Debug` shows the username only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// BMC user name.
    pub username: String,
    /// BMC password.
    pub password: Secret,
}

/// What `credentials_rekey` changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rekeyed {
    /// Rows re-encrypted (all of them).
    pub rows: u64,
    /// Of those, rows that held a legacy plaintext password.
    pub were_plaintext: u64,
}

/// Before a password write on `conn` (a transaction): wait for a running re-encryption
/// (`credentials_rekey`; on PostgreSQL the table lock below, on SQLite its single writer), then
/// refuse the write when `key` was rotated away from (the `credentials rekey` audit entries):
/// a process still on the old key after `rotate-key` would otherwise store a password the
/// rotated site can no longer read.
pub(crate) async fn credentials_fence_in(
    conn: &mut AnyConnection,
    backend: Backend,
    key: &SiteKey,
    machine_id: &str,
) -> Result<()> {
    const OP: &str = "credentials_put";
    if backend == Backend::Postgres {
        // ROW EXCLUSIVE (what any write takes) conflicts with the rekey's SHARE ROW EXCLUSIVE:
        // this write happens wholly before or wholly after a rotation, never in between.
        sqlx::query("LOCK TABLE credentials IN ROW EXCLUSIVE MODE")
            .execute(&mut *conn)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
    }
    // The latest rotation that names this key: one away from it (`site key K -> N`) means
    // this process missed the rotation; none, or one to it, means its key is current.
    let me = key.id();
    let last: Option<String> = sqlx::query_scalar(
        "SELECT detail FROM audit_log WHERE action = $1 AND (detail LIKE $2 OR detail LIKE $3) \
         ORDER BY seq DESC LIMIT 1",
    )
    .bind(AUDIT_REKEY)
    .bind(format!("%site key {me} -> %"))
    .bind(format!("% -> {me}"))
    .fetch_optional(&mut *conn)
    .await
    .map_err(StoreError::db(OP, machine_id))?;
    match last.as_deref().and_then(|d| d.rsplit_once(" -> ")) {
        Some((_, to)) if to != me => Err(StoreError::StaleSiteKey {
            machine: machine_id.to_string(),
            stored_key: to.to_string(),
            site_key: me.to_string(),
        }),
        _ => Ok(()),
    }
}

/// Stores (or replaces) the BMC login of `machine_id` on `conn` (a transaction, when
/// registering, after [`credentials_fence_in`]), the password sealed with `key`.
pub(crate) async fn credentials_put_in(
    conn: &mut AnyConnection,
    key: &SiteKey,
    machine_id: &str,
    username: &str,
    password: &Secret,
) -> std::result::Result<(), sqlx::Error> {
    let stored = sealed::seal(key, machine_id, password.expose());
    sqlx::query(
        "INSERT INTO credentials (machine_id, username, password, updated_at_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (machine_id) DO UPDATE SET username = excluded.username, \
           password = excluded.password, updated_at_ms = excluded.updated_at_ms",
    )
    .bind(machine_id)
    .bind(username)
    .bind(stored)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

impl Store {
    /// The site key writes need, or `NoSiteKey` naming `machine_id`.
    pub(crate) fn key_for_write(&self, machine_id: &str) -> Result<&SiteKey> {
        self.site_key.as_ref().ok_or_else(|| StoreError::NoSiteKey { machine: machine_id.to_string() })
    }

    /// Stores (or replaces) the BMC login of `machine_id`, encrypted with the site key (refused
    /// without one). The machine row need not exist yet (credentials may be loaded before the
    /// host is registered).
    pub async fn credentials_put(&self, machine_id: &str, username: &str, password: &Secret) -> Result<()> {
        const OP: &str = "credentials_put";
        let key = self.key_for_write(machine_id)?;
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, machine_id))?;
        credentials_fence_in(&mut tx, self.backend, key, machine_id).await?;
        credentials_put_in(&mut tx, key, machine_id, username, password)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        tx.commit().await.map_err(StoreError::db(OP, machine_id))
    }

    /// The BMC login of `machine_id`, if one is stored. A password sealed with another key (or
    /// altered, or copied from another machine's row) is `StoreError::Credential`.
    pub async fn credentials_get(&self, machine_id: &str) -> Result<Option<Credentials>> {
        let row = sqlx::query("SELECT username, password FROM credentials WHERE machine_id = $1")
            .bind(machine_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("credentials_get", machine_id))?;
        let Some(row) = row else { return Ok(None) };
        let username: String = row.try_get("username").map_err(StoreError::db("credentials_get", machine_id))?;
        let stored: String = row.try_get("password").map_err(StoreError::db("credentials_get", machine_id))?;
        let password = match sealed::open(self.site_key.as_ref(), machine_id, &stored) {
            Ok(Opened::Sealed(p) | Opened::Plaintext(p)) => Secret::new(p),
            Err(source) => return Err(StoreError::Credential { machine: machine_id.to_string(), source }),
        };
        Ok(Some(Credentials { username, password }))
    }

    /// How many stored passwords are legacy plaintext (not yet encrypted).
    pub async fn credentials_plaintext_count(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM credentials WHERE password NOT LIKE $1")
            .bind(format!("{SEALED_PREFIX}%"))
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("credentials_plaintext_count", ""))?;
        Ok(u64::try_from(n).unwrap_or_default())
    }

    /// Re-encrypts every stored password (legacy plaintext ones included) with `new_key`, in one
    /// transaction with its audit entry (`credentials rekey` by `actor`): on any failure — a row
    /// the current site key cannot open, a lost connection — nothing is changed. On PostgreSQL
    /// the rows are locked (`FOR UPDATE`, and the table against new rows) until the commit, so a
    /// concurrent password write lands wholly before (and is re-encrypted here) or wholly after
    /// (and is refused if its writer still has the old key: [`credentials_fence_in`]); SQLite
    /// serializes writers already.
    pub async fn credentials_rekey(&self, new_key: &SiteKey, actor: &str) -> Result<Rekeyed> {
        const OP: &str = "credentials_rekey";
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, ""))?;
        let select = match self.backend {
            Backend::Postgres => {
                sqlx::query("LOCK TABLE credentials IN SHARE ROW EXCLUSIVE MODE")
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::db(OP, ""))?;
                "SELECT machine_id, password FROM credentials ORDER BY machine_id FOR UPDATE"
            }
            Backend::Sqlite => "SELECT machine_id, password FROM credentials ORDER BY machine_id",
        };
        let rows = sqlx::query(select).fetch_all(&mut *tx).await.map_err(StoreError::db(OP, ""))?;
        let mut done = Rekeyed { rows: 0, were_plaintext: 0 };
        let now = now_ms();
        for row in rows {
            let machine: String = row.try_get("machine_id").map_err(StoreError::db(OP, ""))?;
            let stored: String = row.try_get("password").map_err(StoreError::db(OP, machine.as_str()))?;
            let plain = match sealed::open(self.site_key.as_ref(), &machine, &stored) {
                Ok(Opened::Sealed(p)) => p,
                Ok(Opened::Plaintext(p)) => {
                    done.were_plaintext += 1;
                    p
                }
                Err(source) => return Err(StoreError::Credential { machine, source }),
            };
            sqlx::query("UPDATE credentials SET password = $1, updated_at_ms = $2 WHERE machine_id = $3")
                .bind(sealed::seal(new_key, &machine, &plain))
                .bind(now)
                .bind(&machine)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(OP, machine.as_str()))?;
            done.rows += 1;
        }
        let from = self.site_key.as_ref().map_or("none".to_string(), |k| k.id().to_string());
        let detail = format!(
            "{} passwords re-encrypted ({} were plaintext); site key {from} -> {}",
            done.rows,
            done.were_plaintext,
            new_key.id()
        );
        audit_append_in(&mut tx, actor, AUDIT_REKEY, "credentials", &detail, now)
            .await
            .map_err(StoreError::db(OP, ""))?;
        tx.commit().await.map_err(StoreError::db(OP, ""))?;
        Ok(done)
    }
}
