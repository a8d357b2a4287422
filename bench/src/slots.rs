//! How well a rollout used the site ceiling: from each host's update interval (the state
//! history), the time from a slot freeing to the next host starting, and the slot-seconds left
//! idle while hosts still waited; from the host workflows' Temporal histories, where that time
//! went (the scheduler starting the successor's workflow, then the server handing out its first
//! activity). Pure functions over timestamps; the rollout benchmark gathers them.

/// What [`slot_stats`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotStats {
    /// Starts that waited for a slot (every start after the first `C`).
    pub successors: usize,
    /// Slot free → successor start, ms: mean and 99th percentile.
    pub free_to_start_mean_ms: f64,
    pub free_to_start_p99_ms: f64,
    /// Slot-seconds idle between the first start and the last one (hosts were waiting), and that
    /// as a fraction of `C × makespan`.
    pub idle_slot_seconds: f64,
    pub idle_fraction: f64,
}

/// `intervals`: (start, end) ms of every update; `ceiling`: C; `makespan_ms`: the rollout's.
/// The k-th slot to free (the k-th end) is the one the (C+k)-th start took.
pub fn slot_stats(intervals: &[(i64, i64)], ceiling: usize, makespan_ms: f64) -> SlotStats {
    let mut starts: Vec<i64> = intervals.iter().map(|(s, _)| *s).collect();
    let mut ends: Vec<i64> = intervals.iter().map(|(_, e)| *e).collect();
    starts.sort_unstable();
    ends.sort_unstable();
    let latencies: Vec<f64> =
        starts.iter().skip(ceiling).zip(ends.iter()).map(|(start, freed)| (start - freed).max(0) as f64).collect();
    let (mean, p99) = mean_p99(&latencies);

    // Sweep the in-flight count from the first start to the last one.
    let mut events: Vec<(i64, i32)> = starts.iter().map(|s| (*s, 1)).chain(ends.iter().map(|e| (*e, -1))).collect();
    events.sort_unstable_by_key(|(t, delta)| (*t, *delta));
    let last_start = starts.last().copied().unwrap_or(0);
    let mut idle_ms = 0f64;
    let mut in_flight = 0i64;
    let mut prev = starts.first().copied().unwrap_or(0);
    for (t, delta) in events {
        let until = t.min(last_start);
        if until > prev {
            idle_ms += (ceiling as i64 - in_flight).max(0) as f64 * (until - prev) as f64;
            prev = until;
        }
        in_flight += i64::from(delta);
    }
    let idle_slot_seconds = idle_ms / 1000.0;
    let capacity = ceiling as f64 * makespan_ms / 1000.0;
    SlotStats {
        successors: latencies.len(),
        free_to_start_mean_ms: mean,
        free_to_start_p99_ms: p99,
        idle_slot_seconds,
        idle_fraction: if capacity > 0.0 { idle_slot_seconds / capacity } else { 0.0 },
    }
}

/// Mean and 99th percentile (nearest rank) of `values`; zeros when empty.
pub fn mean_p99(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
    let rank = ((0.99 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    (mean, sorted[rank - 1])
}

/// The times, ms, of one host workflow's history that the successor analysis needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkflowTimes {
    /// WorkflowExecutionStarted.
    pub started: i64,
    /// The first ActivityTaskStarted (the protect activity picked up by a worker).
    pub first_activity: i64,
}

/// Read [`WorkflowTimes`] from a history in the SDK's JSON form.
pub fn workflow_times(history: &serde_json::Value) -> Option<WorkflowTimes> {
    let events = history["events"].as_array()?;
    let time = |e: &serde_json::Value| {
        e["event_time"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.timestamp_millis())
    };
    let started = time(events.first()?)?;
    let first_activity = events
        .iter()
        .find(|e| e["attributes"].as_object().is_some_and(|o| o.contains_key("ActivityTaskStartedEventAttributes")))
        .and_then(time)?;
    Some(WorkflowTimes { started, first_activity })
}

/// For each start that waited for a slot, split slot free → first activity into the scheduler's
/// part (free → workflow started) and the server's (workflow started → first activity started).
/// `ends`: every update's end, ms; `times`: every host workflow's times. Returns
/// ((mean, p99) scheduler, (mean, p99) server), ms.
pub fn successor_split(ends: &[i64], times: &[WorkflowTimes], ceiling: usize) -> ((f64, f64), (f64, f64)) {
    let mut ends = ends.to_vec();
    ends.sort_unstable();
    let mut times = times.to_vec();
    times.sort_unstable_by_key(|t| t.started);
    let mut scheduler = Vec::new();
    let mut server = Vec::new();
    for (t, freed) in times.iter().skip(ceiling).zip(ends.iter()) {
        scheduler.push((t.started - freed).max(0) as f64);
        server.push((t.first_activity - t.started).max(0) as f64);
    }
    (mean_p99(&scheduler), mean_p99(&server))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_refilled_at_once_has_no_latency_and_no_idle_time() {
        // C = 1: back to back.
        let s = slot_stats(&[(0, 100), (100, 200), (200, 300)], 1, 300.0);
        assert_eq!(s.successors, 2);
        assert_eq!(s.free_to_start_mean_ms, 0.0);
        assert_eq!(s.idle_slot_seconds, 0.0);
    }

    #[test]
    fn gaps_between_a_free_slot_and_the_next_start_are_latency_and_idle_time() {
        // C = 2: the first slot frees at 100 and is refilled at 150; the second at 200, refilled at 400.
        let intervals = [(0, 100), (0, 200), (150, 300), (400, 500)];
        let s = slot_stats(&intervals, 2, 500.0);
        assert_eq!(s.successors, 2);
        assert_eq!(s.free_to_start_mean_ms, 125.0);
        assert_eq!(s.free_to_start_p99_ms, 200.0);
        // Idle before the last start (400): one slot over 100..150, one over 200..300, two over
        // 300..400 = 50 + 100 + 200 slot-ms.
        assert!((s.idle_slot_seconds - 0.35).abs() < 1e-9, "{s:?}");
        assert!((s.idle_fraction - 0.35 / 1.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn the_split_separates_the_scheduler_from_the_server() {
        let ends = [100, 200];
        let times = [
            WorkflowTimes { started: 0, first_activity: 5 },
            WorkflowTimes { started: 130, first_activity: 170 },
            WorkflowTimes { started: 210, first_activity: 230 },
        ];
        let ((sched_mean, _), (server_mean, server_p99)) = successor_split(&ends, &times, 1);
        assert_eq!(sched_mean, 20.0);
        assert_eq!(server_mean, 30.0);
        assert_eq!(server_p99, 40.0);
    }
}
