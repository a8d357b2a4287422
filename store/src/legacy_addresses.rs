//! Stored BMC addresses written before `BmcAddress`: rewritten to the canonical form, keeping their
//! meaning, at every `Store::connect` (a read when there is nothing left to do).
//!
//! Migration 0006 prefixed `http://` to every address without a scheme (a bare `ip:port` meant
//! plain http then). Portable SQL cannot finish the job (lowercase scheme and host, the default
//! port, no trailing slash), so this pass parses each stored text with the *legacy* rule — no
//! scheme means http, as it did when the row was written; this version never stores a bare text —
//! and rewrites it to `BmcAddress`'s canonical text.
//!
//! Refused with an error naming the rows, changing nothing: a `machines` address that is not an
//! address at all, and two machines that turn out to have one BMC (an operator decides which one
//! stays). Explored reports are derived data (the next crawl rewrites them): several reports of one
//! BMC keep the newest, and a report keyed by a non-address is dropped, each with a warning.
//! It must not touch any other table or column, but for stamping what it rewrites with a new view
//! revision (`revisions`).

use std::collections::BTreeMap;

use hostfw_model::BmcAddress;
use sqlx::{AnyPool, Row};

use crate::error::{Result, StoreError};

const OP: &str = "normalise_bmc_addresses";

/// The canonical text of a stored address under the legacy rule.
fn legacy_canonical(stored: &str) -> std::result::Result<String, hostfw_model::BmcAddressError> {
    let text = stored.trim();
    let with_scheme = if text.contains("://") { text.to_string() } else { format!("http://{text}") };
    with_scheme.parse::<BmcAddress>().map(|a| a.to_string())
}

/// What the pass will write.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// `(machine id, stored text, canonical text)` of machines to rewrite.
    pub machines: Vec<(String, String, String)>,
    /// `(stored text, canonical text)` of reports to rewrite.
    pub reports: Vec<(String, String)>,
    /// Stored texts of reports to delete (older duplicates, non-addresses).
    pub drop_reports: Vec<String>,
}

/// Plans the rewrite of `machines` (`(id, stored)`) and `reports` (`(stored, explored_at_ms)`).
pub(crate) fn plan(machines: &[(String, String)], reports: &[(String, i64)]) -> Result<Plan> {
    let mut out = Plan::default();
    let mut owners: BTreeMap<String, Vec<(&str, &str)>> = BTreeMap::new();
    for (id, stored) in machines {
        let canonical = legacy_canonical(stored).map_err(|e| StoreError::Corrupt {
            op: OP,
            id: id.clone(),
            detail: format!(
                "machines.bmc_address {stored:?} is not a BMC address ({}); correct or delete the row, then start again",
                e.problem
            ),
        })?;
        owners.entry(canonical.clone()).or_default().push((id, stored));
        if *stored != canonical {
            out.machines.push((id.clone(), stored.clone(), canonical));
        }
    }
    if let Some((canonical, rows)) = owners.iter().find(|(_, rows)| rows.len() > 1) {
        let list: Vec<String> = rows.iter().map(|(id, stored)| format!("{id} (stored as {stored:?})")).collect();
        return Err(StoreError::Conflict {
            op: OP,
            id: rows[0].0.to_string(),
            detail: format!(
                "machines {} all have the BMC {canonical}: one BMC is one machine; delete all but one of them \
                 (DELETE FROM machines WHERE id = '...'), then start again",
                list.join(", ")
            ),
        });
    }
    let mut newest: BTreeMap<String, (&str, i64)> = BTreeMap::new();
    for (stored, at) in reports {
        let Ok(canonical) = legacy_canonical(stored) else {
            tracing::warn!(bmc = %stored, "dropping an explored report keyed by something that is not a BMC address");
            out.drop_reports.push(stored.clone());
            continue;
        };
        match newest.get(&canonical) {
            Some((kept, kept_at)) if *kept_at > *at || (*kept_at == *at && *kept == canonical) => {
                tracing::warn!(bmc = %stored, kept = %kept, "dropping an older explored report of the same BMC");
                out.drop_reports.push(stored.clone());
            }
            Some((kept, _)) => {
                tracing::warn!(bmc = %kept, kept = %stored, "dropping an older explored report of the same BMC");
                out.drop_reports.push(kept.to_string());
                newest.insert(canonical, (stored, *at));
            }
            None => {
                newest.insert(canonical, (stored, *at));
            }
        }
    }
    for (canonical, (stored, _)) in newest {
        if stored != canonical {
            out.reports.push((stored.to_string(), canonical));
        }
    }
    Ok(out)
}

/// Reads both tables, plans, and applies the plan in one transaction (nothing when it is empty).
pub(crate) async fn normalise(pool: &AnyPool) -> Result<()> {
    let machines: Vec<(String, String)> = sqlx::query("SELECT id, bmc_address FROM machines")
        .fetch_all(pool)
        .await
        .and_then(|rows| rows.iter().map(|r| Ok((r.try_get("id")?, r.try_get("bmc_address")?))).collect())
        .map_err(StoreError::db(OP, "machines"))?;
    let reports: Vec<(String, i64)> = sqlx::query("SELECT bmc_address, explored_at_ms FROM explored_reports")
        .fetch_all(pool)
        .await
        .and_then(|rows| rows.iter().map(|r| Ok((r.try_get("bmc_address")?, r.try_get("explored_at_ms")?))).collect())
        .map_err(StoreError::db(OP, "explored_reports"))?;
    let plan = plan(&machines, &reports)?;
    if plan == Plan::default() {
        return Ok(());
    }
    let db = |table: &'static str| StoreError::db(OP, table);
    let mut tx = pool.begin().await.map_err(db("machines"))?;
    let rev = crate::revisions::next_rev(&mut tx).await.map_err(db("view_revision"))?;
    // Each statement names the old text, so a second process doing the same pass changes nothing.
    for stored in &plan.drop_reports {
        sqlx::query("DELETE FROM explored_reports WHERE bmc_address = $1")
            .bind(stored)
            .execute(&mut *tx)
            .await
            .map_err(db("explored_reports"))?;
    }
    for (stored, canonical) in &plan.reports {
        sqlx::query("UPDATE explored_reports SET bmc_address = $2, rev = $3 WHERE bmc_address = $1")
            .bind(stored)
            .bind(canonical)
            .bind(rev)
            .execute(&mut *tx)
            .await
            .map_err(db("explored_reports"))?;
    }
    for (id, stored, canonical) in &plan.machines {
        sqlx::query("UPDATE machines SET bmc_address = $3, rev = $4 WHERE id = $1 AND bmc_address = $2")
            .bind(id)
            .bind(stored)
            .bind(canonical)
            .bind(rev)
            .execute(&mut *tx)
            .await
            .map_err(db("machines"))?;
    }
    tx.commit().await.map_err(db("machines"))?;
    tracing::info!(
        machines = plan.machines.len(),
        reports = plan.reports.len(),
        dropped_reports = plan.drop_reports.len(),
        "stored BMC addresses rewritten to the canonical form"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rows: &[(&str, &str)]) -> Vec<(String, String)> {
        rows.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn bare_rows_keep_their_http_meaning() {
        let p =
            plan(&m(&[("a", "10.0.0.1:443"), ("b", "HTTPS://10.0.0.2/"), ("c", "http://10.0.0.3:8000")]), &[]).unwrap();
        assert_eq!(
            p.machines,
            [
                ("a".into(), "10.0.0.1:443".into(), "http://10.0.0.1:443".into()),
                ("b".into(), "HTTPS://10.0.0.2/".into(), "https://10.0.0.2:443".into()),
            ]
        );
        assert_eq!(legacy_canonical("10.0.0.9").unwrap(), "http://10.0.0.9:80");
    }

    #[test]
    fn two_machines_on_one_bmc_are_refused_naming_both() {
        let e = plan(&m(&[("a", "http://10.0.0.1:80/"), ("b", "HTTP://10.0.0.1")]), &[]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("a (stored as") && text.contains("b (stored as") && text.contains("http://10.0.0.1:80"),
            "{text}"
        );
    }

    #[test]
    fn a_machine_address_that_is_not_one_is_refused() {
        let e = plan(&m(&[("a", "ftp://10.0.0.1:21")]), &[]).unwrap_err();
        assert!(matches!(&e, StoreError::Corrupt { id, .. } if id == "a"), "{e:?}");
        assert!(e.to_string().contains("ftp"), "{e}");
    }

    #[test]
    fn duplicate_reports_keep_the_newest() {
        let reports = vec![
            ("http://10.0.0.1:80/".to_string(), 5),
            ("http://10.0.0.1".to_string(), 9),
            ("http://10.0.0.1:80".to_string(), 7),
            ("gopher://x".to_string(), 1),
        ];
        let p = plan(&[], &reports).unwrap();
        assert_eq!(p.reports, [("http://10.0.0.1".to_string(), "http://10.0.0.1:80".to_string())]);
        let mut dropped = p.drop_reports.clone();
        dropped.sort();
        assert_eq!(dropped, ["gopher://x", "http://10.0.0.1:80", "http://10.0.0.1:80/"]);
    }
}
