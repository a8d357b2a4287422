//! BMC address lookups: running `hostfw_model::BmcLookup`'s rule against one table.
//!
//! Owns the queries of the rule (exact candidates in order, then the one stored address starting
//! with a host prefix); the rule itself, and all parsing, is `BmcLookup`'s. Stored addresses are
//! canonical (`BmcAddress`'s text), so matching is plain text equality. It must not know any
//! table: callers pass their own SQL and row decoder.

use hostfw_model::BmcLookup;
use sqlx::any::AnyRow;
use sqlx::AnyPool;

use crate::error::{Result, StoreError};

/// Finds the row of `lookup`. `by_exact` selects rows whose address equals `$1`; `by_prefix`
/// selects rows whose address starts with `$1` (2 are enough: a host match counts only when it is
/// the only stored address on that host).
pub(crate) async fn find_by_bmc<T>(
    pool: &AnyPool,
    op: &'static str,
    lookup: &BmcLookup,
    by_exact: &'static str,
    by_prefix: &'static str,
    decode: fn(&AnyRow) -> Result<T>,
) -> Result<Option<T>> {
    let shown = lookup.to_string();
    for candidate in lookup.exact_candidates() {
        let row = sqlx::query(by_exact)
            .bind(candidate.to_string())
            .fetch_optional(pool)
            .await
            .map_err(StoreError::db(op, shown.as_str()))?;
        if let Some(row) = row {
            return decode(&row).map(Some);
        }
    }
    let mut found = Vec::new();
    for prefix in lookup.host_prefixes() {
        let rows =
            sqlx::query(by_prefix).bind(prefix).fetch_all(pool).await.map_err(StoreError::db(op, shown.as_str()))?;
        found.extend(rows);
    }
    match found.as_slice() {
        [row] => decode(row).map(Some),
        [] => Ok(None),
        _ => {
            tracing::debug!(op, bmc = %shown, "BMC host without a port matches several addresses");
            Ok(None)
        }
    }
}
