//! Reading workflow histories (the SDK's JSON form): every event, how the executions of one
//! activity type went (attempts, the failure before a retry, timeouts), whether a text occurs
//! anywhere (payloads included), and a workflow's pending activities as the server describes them.

use std::time::Duration;

/// One pending activity of a workflow, as `temporal workflow describe` shows it.
#[derive(Debug, Clone)]
pub struct PendingActivity {
    /// Activity type, e.g. `hostfw.firmware.upload`.
    pub name: String,
    pub attempt: i32,
    /// The last heartbeat details, decoded as text (JSON of what the activity recorded).
    pub heartbeat: String,
    /// When the current attempt started, and when the server last received its heartbeat
    /// (server clock, since the Unix epoch).
    pub last_started: Option<Duration>,
    pub last_heartbeat: Option<Duration>,
}

impl PendingActivity {
    /// How long the current attempt has kept heartbeating: last heartbeat minus start.
    pub fn heartbeating_for(&self) -> Option<Duration> {
        self.last_heartbeat?.checked_sub(self.last_started?)
    }
}

/// Every event of a history (from [`crate::Site::history_json`]) as `(event id, attributes key,
/// attributes)`, e.g. `(7, "ActivityTaskStartedEventAttributes", {...})`.
pub fn history_events(history: &serde_json::Value) -> Vec<(i64, String, serde_json::Value)> {
    history["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| {
            let id = e["event_id"].as_i64()?;
            let (key, attributes) = e["attributes"].as_object()?.iter().next()?;
            Some((id, key.clone(), attributes.clone()))
        })
        .collect()
}

/// How the executions of one activity type went, from a history: for each execution (scheduled
/// event), the attempt that ended it and the failure that ended the attempt before it (e.g. a
/// heartbeat timeout), and whether it ended in a timeout.
#[derive(Debug, Clone, Default)]
pub struct ActivityRecord {
    pub scheduled_event_id: i64,
    /// Attempt number of the last start (1 = never retried).
    pub attempt: i64,
    /// Message of the failure of the previous attempt, when retried.
    pub last_failure: Option<String>,
    /// The execution ended in ActivityTaskTimedOut, with this failure message.
    pub timed_out: Option<String>,
    pub completed: bool,
    /// The execution ended in ActivityTaskFailed, with this failure (message, then its info:
    /// the application failure's type and details).
    pub failed: Option<String>,
}

/// Every execution of activity type `name` in `history`, in order.
pub fn activity_records(history: &serde_json::Value, name: &str) -> Vec<ActivityRecord> {
    let mut records: Vec<ActivityRecord> = Vec::new();
    fn failure_text(f: &serde_json::Value) -> String {
        let mut parts = vec![f["message"].as_str().unwrap_or_default().to_string()];
        for key in ["failure_info", "applicationFailureInfo"] {
            if let Some(info) = f.get(key) {
                parts.push(info.to_string());
            }
        }
        parts.join(" ")
    }
    for (id, key, attributes) in history_events(history) {
        let scheduled = attributes["scheduled_event_id"].as_i64();
        let record = |records: &mut Vec<ActivityRecord>| -> Option<usize> {
            records.iter().position(|r| Some(r.scheduled_event_id) == scheduled)
        };
        match key.as_str() {
            "ActivityTaskScheduledEventAttributes" if attributes["activity_type"]["name"] == name => {
                records.push(ActivityRecord { scheduled_event_id: id, ..ActivityRecord::default() });
            }
            "ActivityTaskStartedEventAttributes" => {
                if let Some(i) = record(&mut records) {
                    records[i].attempt = attributes["attempt"].as_i64().unwrap_or(1);
                    records[i].last_failure = attributes.get("last_failure").filter(|f| !f.is_null()).map(failure_text);
                }
            }
            "ActivityTaskTimedOutEventAttributes" => {
                if let Some(i) = record(&mut records) {
                    records[i].timed_out = Some(failure_text(&attributes["failure"]));
                }
            }
            "ActivityTaskFailedEventAttributes" => {
                if let Some(i) = record(&mut records) {
                    records[i].failed = Some(failure_text(&attributes["failure"]));
                }
            }
            "ActivityTaskCompletedEventAttributes" => {
                if let Some(i) = record(&mut records) {
                    records[i].completed = true;
                }
            }
            _ => {}
        }
    }
    records
}

/// Whether `needle` occurs anywhere in a history: in its plain JSON text, or inside any string
/// that decodes as base64 (payload `data` and `metadata` are base64 in the JSON form, so a
/// search of the raw bytes alone would never find what a workflow input or result carries).
pub fn history_contains(history: &serde_json::Value, needle: &str) -> bool {
    fn walk(v: &serde_json::Value, needle: &str) -> bool {
        match v {
            serde_json::Value::String(s) => {
                s.contains(needle) || base64_decode(s).is_some_and(|b| String::from_utf8_lossy(&b).contains(needle))
            }
            serde_json::Value::Array(a) => a.iter().any(|x| walk(x, needle)),
            serde_json::Value::Object(o) => o.iter().any(|(k, x)| k.contains(needle) || walk(x, needle)),
            _ => false,
        }
    }
    walk(history, needle)
}

/// Standard base64 (with or without padding); `None` when `s` is not base64.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let body = s.trim_end_matches('=');
    if body.is_empty() || s.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in body.bytes() {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The patch ids in a history's `core_patch` markers.
pub fn patch_markers(history: &serde_json::Value) -> Vec<String> {
    let mut ids = Vec::new();
    for event in history["events"].as_array().into_iter().flatten() {
        let marker = &event["attributes"]["MarkerRecordedEventAttributes"];
        if marker["marker_name"] != "core_patch" {
            continue;
        }
        for payloads in marker["details"].as_object().into_iter().flat_map(|d| d.values()) {
            for p in payloads["payloads"].as_array().into_iter().flatten() {
                let data = p["data"].as_str().and_then(base64_decode);
                let id = data.and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
                if let Some(id) = id.as_ref().and_then(|v| v["id"].as_str()) {
                    ids.push(id.to_string());
                }
            }
        }
    }
    ids
}
