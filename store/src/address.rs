//! BMC address matching: how a caller's "ip" or "ip:port" finds the stored `bmc_address`.
//!
//! Owns the lookup rule shared by machines and explored reports (exact match first; then, for an
//! input with a port, the bare host; for an input without a port, the one row on that host with
//! some port). It must not know any table: callers pass their own SQL and row decoder.

use sqlx::any::AnyRow;
use sqlx::AnyPool;

use crate::error::{Result, StoreError};

/// The lookups to try, in order, for one input address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BmcLookup {
    /// Always tried first: the input verbatim.
    pub exact: String,
    /// Input had a port: try the bare host stored without a port.
    pub host_without_port: Option<String>,
    /// Input had no port: the prefix `"<host>:"` that must match exactly one stored address.
    pub host_prefix: Option<String>,
}

/// Splits `input` into the lookups described in the module doc. IPv6 is supported in the
/// bracketed form `[addr]:port`; a bare IPv6 address (several colons) is treated as having no port.
pub(crate) fn bmc_lookup(input: &str) -> BmcLookup {
    let input = input.trim();
    let exact = input.to_owned();
    if let Some(rest) = input.strip_prefix('[') {
        // "[v6]" or "[v6]:port"
        if let Some(close) = rest.find(']') {
            let host = &input[..close + 2];
            let after = &input[close + 2..];
            return if after.is_empty() {
                BmcLookup {
                    exact,
                    host_without_port: None,
                    host_prefix: Some(format!("{host}:")),
                }
            } else {
                BmcLookup {
                    exact,
                    host_without_port: Some(host.to_owned()),
                    host_prefix: None,
                }
            };
        }
        return BmcLookup {
            exact,
            host_without_port: None,
            host_prefix: None,
        };
    }
    match input.matches(':').count() {
        0 => BmcLookup {
            exact,
            host_without_port: None,
            host_prefix: Some(format!("{input}:")),
        },
        1 => {
            let (host, _port) = input.split_once(':').unwrap_or((input, ""));
            BmcLookup {
                exact,
                host_without_port: Some(host.to_owned()),
                host_prefix: None,
            }
        }
        _ => BmcLookup {
            exact,
            host_without_port: None,
            host_prefix: Some(format!("[{input}]:")),
        },
    }
}

/// Runs the lookups of `bmc_lookup(input)` in order. `by_exact` selects rows whose address equals
/// `$1`; `by_prefix` selects rows whose address starts with `$1` (at most 2 are needed: a prefix
/// match counts only when it is unique).
pub(crate) async fn find_by_bmc<T>(
    pool: &AnyPool,
    op: &'static str,
    input: &str,
    by_exact: &'static str,
    by_prefix: &'static str,
    decode: fn(&AnyRow) -> Result<T>,
) -> Result<Option<T>> {
    let lookup = bmc_lookup(input);
    for exact in std::iter::once(&lookup.exact).chain(lookup.host_without_port.as_ref()) {
        let row = sqlx::query(by_exact)
            .bind(exact.as_str())
            .fetch_optional(pool)
            .await
            .map_err(StoreError::db(op, input))?;
        if let Some(row) = row {
            return decode(&row).map(Some);
        }
    }
    if let Some(prefix) = &lookup.host_prefix {
        let rows = sqlx::query(by_prefix)
            .bind(prefix.as_str())
            .fetch_all(pool)
            .await
            .map_err(StoreError::db(op, input))?;
        if let [row] = rows.as_slice() {
            return decode(row).map(Some);
        }
        if rows.len() > 1 {
            tracing::debug!(op, bmc = input, "BMC address without port is ambiguous");
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(
            bmc_lookup("10.0.0.1"),
            BmcLookup {
                exact: "10.0.0.1".into(),
                host_without_port: None,
                host_prefix: Some("10.0.0.1:".into())
            }
        );
        assert_eq!(
            bmc_lookup("10.0.0.1:443"),
            BmcLookup {
                exact: "10.0.0.1:443".into(),
                host_without_port: Some("10.0.0.1".into()),
                host_prefix: None
            }
        );
        assert_eq!(
            bmc_lookup("[fe80::1]:443"),
            BmcLookup {
                exact: "[fe80::1]:443".into(),
                host_without_port: Some("[fe80::1]".into()),
                host_prefix: None
            }
        );
        assert_eq!(
            bmc_lookup("[fe80::1]").host_prefix.as_deref(),
            Some("[fe80::1]:")
        );
        assert_eq!(
            bmc_lookup("fe80::1").host_prefix.as_deref(),
            Some("[fe80::1]:")
        );
    }
}
