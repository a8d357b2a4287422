//! The `credentials` table: BMC logins, looked up by machine id inside activities.
//!
//! Owns storing and reading usernames and passwords. It must never log, print, serialise or put a
//! password into an error: `Credentials` has a redacting `Debug` (its password is a `Secret`) and deliberately no serde
//! derives, so it cannot end up in a workflow payload or a JSON report by accident.

use hostfw_model::Secret;
use sqlx::{AnyConnection, Row};

use crate::error::{Result, StoreError};
use crate::{now_ms, Store};

/// A BMC login. The password is a [`Secret`]: `Debug` shows the username only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// BMC user name.
    pub username: String,
    /// BMC password.
    pub password: Secret,
}

/// Stores (or replaces) the BMC login of `machine_id` on `conn` (a transaction, when registering).
pub(crate) async fn credentials_put_in(
    conn: &mut AnyConnection,
    machine_id: &str,
    username: &str,
    password: &str,
) -> std::result::Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO credentials (machine_id, username, password, updated_at_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (machine_id) DO UPDATE SET username = excluded.username, \
           password = excluded.password, updated_at_ms = excluded.updated_at_ms",
    )
    .bind(machine_id)
    .bind(username)
    .bind(password)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

impl Store {
    /// Stores (or replaces) the BMC login of `machine_id`. The machine row need not exist yet
    /// (credentials may be loaded before the host is registered).
    pub async fn credentials_put(&self, machine_id: &str, username: &str, password: &Secret) -> Result<()> {
        let mut conn = self.pool.acquire().await.map_err(StoreError::db("credentials_put", machine_id))?;
        credentials_put_in(&mut conn, machine_id, username, password.expose())
            .await
            .map_err(StoreError::db("credentials_put", machine_id))
    }

    /// The BMC login of `machine_id`, if one is stored.
    pub async fn credentials_get(&self, machine_id: &str) -> Result<Option<Credentials>> {
        let row = sqlx::query("SELECT username, password FROM credentials WHERE machine_id = $1")
            .bind(machine_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("credentials_get", machine_id))?;
        row.map(|row| -> std::result::Result<Credentials, sqlx::Error> {
            Ok(Credentials {
                username: row.try_get("username")?,
                password: Secret::new(row.try_get::<String, _>("password")?),
            })
        })
        .transpose()
        .map_err(StoreError::db("credentials_get", machine_id))
    }
}
