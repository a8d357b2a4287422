//! How many hosts were being updated at once, read back from their recorded state changes.
//!
//! Owns the rule "an update runs from entering `HostReprovision` until the next state that is not
//! `HostReprovision`" and the sweep that finds the largest overlap of such intervals. Used by the
//! rollout report, the benchmarks and the tests. It must not read any store (callers pass the
//! states oldest first).

use crate::substate::HostState;

/// One host's updates as `(entered, left)` unix ms, from its `(state, at_ms)` changes oldest
/// first; an update still running has `left = None`.
pub fn update_intervals(changes: impl IntoIterator<Item = (HostState, i64)>) -> Vec<(i64, Option<i64>)> {
    let mut out = Vec::new();
    let mut open = None;
    for (state, at_ms) in changes {
        match (state == HostState::HostReprovision, open) {
            (true, None) => open = Some(at_ms),
            (false, Some(start)) => {
                out.push((start, Some(at_ms)));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(start) = open {
        out.push((start, None));
    }
    out
}

/// The largest number of intervals open at one instant; touching intervals do not overlap and an
/// interval without an end is still open.
pub fn max_overlap(intervals: &[(i64, Option<i64>)]) -> usize {
    let mut edges: Vec<(i64, i32)> =
        intervals.iter().flat_map(|&(start, end)| [(start, 1), (end.unwrap_or(i64::MAX), -1)]).collect();
    // At equal times a close (-1) sorts before an open (+1).
    edges.sort();
    let (mut open, mut max) = (0i32, 0i32);
    for (_, d) in edges {
        open += d;
        max = max.max(open);
    }
    max as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_run_from_entering_to_leaving_host_reprovision() {
        let changes = [
            (HostState::Ready, 1),
            (HostState::HostReprovision, 5),
            (HostState::HostReprovision, 7),
            (HostState::Ready, 9),
            (HostState::HostReprovision, 12),
        ];
        assert_eq!(update_intervals(changes), vec![(5, Some(9)), (12, None)]);
    }

    #[test]
    fn overlap_counts_open_intervals_and_not_touching_ones() {
        assert_eq!(max_overlap(&[(0, Some(10)), (10, Some(20)), (5, Some(15))]), 2);
        assert_eq!(max_overlap(&[(0, Some(10)), (1, None), (2, Some(3))]), 3);
        assert_eq!(max_overlap(&[]), 0);
    }
}
