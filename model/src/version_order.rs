//! Version order: whether one catalog version is newer than another, for the one place hostfw
//! needs to know (a catalog change that moves a default: `DefaultMove`). Drift and selection
//! never order versions; they compare them exactly (see `drift`).
//!
//! The rule is conservative. A version is split into runs of ASCII digits and runs of anything
//! else. Two versions are ordered only when their text runs are identical (ASCII case ignored) and
//! in the same places, so `7.10.30.00` < `7.20.10.00`, `F5.11.CB` < `F5.12.CB` and
//! `GB200Nvl-24.12-8` < `GB200Nvl-24.12-10`; digit runs compare as numbers, run by run. One
//! version may be the other followed by more `.`-separated numbers (`2.3.5` < `2.3.5.1`). Any other
//! pair (`1.0-rc1` and `1.0`, `A1` and `B1`, texts equal as numbers but spelled differently such
//! as `7.10` and `7.010`) has no order: `compare_versions` says `None` and a move between them is
//! a `DefaultMove::Change`, never a guess.
//!
//! Owns that rule and the classification of a default's move. It must not read catalogs or
//! decide whether a move is allowed (the caller's policy).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// One run of a version text.
#[derive(Debug, PartialEq, Eq)]
enum Run<'a> {
    /// ASCII digits (leading zeros kept: they matter only for equality of spelling).
    Digits(&'a str),
    Text(&'a str),
}

fn runs(version: &str) -> Vec<Run<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = version.as_bytes();
    for i in 1..=bytes.len() {
        let boundary = i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit();
        if boundary {
            let run = &version[start..i];
            out.push(if bytes[start].is_ascii_digit() { Run::Digits(run) } else { Run::Text(run) });
            start = i;
        }
    }
    out
}

/// Compares two digit runs as numbers, however long.
fn numeric(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// True when `tail` is `.N` repeated (the extra numbers of a longer version), with some N not 0.
fn is_numeric_extension(tail: &[Run<'_>]) -> Option<bool> {
    if tail.is_empty() || tail.len() % 2 != 0 {
        return None;
    }
    let mut nonzero = false;
    for pair in tail.chunks(2) {
        match pair {
            [Run::Text("."), Run::Digits(d)] => nonzero |= d.bytes().any(|b| b != b'0'),
            _ => return None,
        }
    }
    Some(nonzero)
}

/// The order of `a` and `b` under the rule in the module doc: `None` when they cannot be ordered
/// (different shapes, or equal as numbers but spelled differently). Surrounding whitespace is not
/// part of a version.
pub fn compare_versions(a: &str, b: &str) -> Option<Ordering> {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return Some(Ordering::Equal);
    }
    let (ra, rb) = (runs(a), runs(b));
    let common = ra.len().min(rb.len());
    let mut order = Ordering::Equal;
    for (x, y) in ra[..common].iter().zip(&rb[..common]) {
        match (x, y) {
            (Run::Digits(x), Run::Digits(y)) => order = order.then(numeric(x, y)),
            (Run::Text(x), Run::Text(y)) if x.eq_ignore_ascii_case(y) => {}
            _ => return None,
        }
    }
    let order = match ra.len().cmp(&rb.len()) {
        Ordering::Equal => order,
        // The longer one extends the shorter with `.N` numbers: newer when the common part ties.
        Ordering::Less => match is_numeric_extension(&rb[common..])? {
            true => order.then(Ordering::Less),
            false => order,
        },
        Ordering::Greater => match is_numeric_extension(&ra[common..])? {
            true => order.then(Ordering::Greater),
            false => order,
        },
    };
    // Different texts that compare equal (`7.10` and `7.010`, `2.4` and `2.4.0`): no order.
    (order != Ordering::Equal).then_some(order)
}

/// How a catalog default moves from one version to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum DefaultMove {
    /// To a newer version.
    Upgrade,
    /// To an older version.
    Downgrade,
    /// A default where there was none (a new model or component).
    Added,
    /// The default disappears: its hosts are no longer updated for that component.
    Removed,
    /// To a different version that cannot be ordered against the old one.
    Change,
}

impl DefaultMove {
    /// The move from `from` to `to` (`None`: no default), or `None` when the default does not
    /// move (same version, or no default either side).
    pub fn of(from: Option<&str>, to: Option<&str>) -> Option<DefaultMove> {
        match (from, to) {
            (None, None) => None,
            (None, Some(_)) => Some(DefaultMove::Added),
            (Some(_), None) => Some(DefaultMove::Removed),
            (Some(a), Some(b)) if a.trim() == b.trim() => None,
            (Some(a), Some(b)) => Some(match compare_versions(a, b) {
                Some(Ordering::Less) => DefaultMove::Upgrade,
                Some(Ordering::Greater) => DefaultMove::Downgrade,
                _ => DefaultMove::Change,
            }),
        }
    }

    /// The word tables print: `UPGRADE`, `DOWNGRADE`, `ADDED`, `REMOVED`, `CHANGE`.
    pub fn as_str(self) -> &'static str {
        match self {
            DefaultMove::Upgrade => "UPGRADE",
            DefaultMove::Downgrade => "DOWNGRADE",
            DefaultMove::Added => "ADDED",
            DefaultMove::Removed => "REMOVED",
            DefaultMove::Change => "CHANGE",
        }
    }
}

impl std::fmt::Display for DefaultMove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
