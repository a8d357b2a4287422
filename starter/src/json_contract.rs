//! The one JSON vocabulary of `--format json` (docs/cli-json.md): a machine is `machine_id`, and
//! a time is an RFC 3339 UTC string. hostfw keeps times as epoch milliseconds (`requested_at_ms`);
//! every JSON document the CLI prints goes through [`to_json`], which shows each of them under
//! its name without `_ms` (`requested_at`), so no command can print the old shape.
//!
//! Owns the list of time fields and the rewrite. It must not decide what a command prints.

use serde::Serialize;
use serde_json::{Map, Value};

/// The version of the JSON vocabulary (docs/cli-json.md "Schema version"): bumped by a change that
/// removes or renames a field or changes its meaning; a new field does not bump it. The API sends
/// it on every answer as the `Hostfw-Schema-Version` header.
pub const SCHEMA_VERSION: u32 = 1;

/// Time fields as stored (epoch milliseconds) and the name JSON shows them under.
pub const TIME_FIELDS: &[(&str, &str)] = &[
    ("at_ms", "at"),
    ("requested_at_ms", "requested_at"),
    ("started_at_ms", "started_at"),
    ("updated_at_ms", "updated_at"),
    ("explored_at_ms", "explored_at"),
    ("expires_at_ms", "expires_at"),
    ("created_at_ms", "created_at"),
    ("start_ms", "start"),
    ("end_ms", "end"),
    ("window_start_ms", "window_start"),
    ("window_end_ms", "window_end"),
    ("next_window_open_ms", "next_window_open"),
    ("next_wave_open_ms", "next_wave_open"),
    ("last_done_ms", "last_done"),
    ("last_attempt_ms", "last_attempt"),
    ("manual_upgrade_completed_ms", "manual_upgrade_completed_at"),
    ("deadline_ms", "deadline"),
    ("until_ms", "until"),
    ("skipped_at_ms", "skipped_at"),
    ("approved_at_ms", "approved_at"),
    ("answered_at_ms", "answered_at"),
    ("held_until_ms", "held_until"),
    ("modified_at_ms", "modified_at"),
    ("decided_at_ms", "decided_at"),
    ("next_attempt_at_ms", "next_attempt_at"),
    ("delivered_at_ms", "delivered_at"),
    ("gave_up_at_ms", "gave_up_at"),
];

/// `value` as pretty JSON in the contract's vocabulary.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(value)?;
    rewrite(&mut value);
    Ok(serde_json::to_string_pretty(&value)?)
}

/// `value` as one line of JSON in the contract's vocabulary (for streams).
pub fn to_json_line<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(value)?;
    rewrite(&mut value);
    Ok(serde_json::to_string(&value)?)
}

fn rewrite(value: &mut Value) {
    each_object_mut(value, &mut rewrite_times);
}

/// Call `f` on every JSON object within `value`, outer ones first (the rewrite above, and the API's
/// rewrite of its schemas).
pub fn each_object_mut(value: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    match value {
        Value::Object(map) => {
            f(map);
            map.values_mut().for_each(|v| each_object_mut(v, f));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| each_object_mut(v, f)),
        _ => {}
    }
}

fn rewrite_times(map: &mut Map<String, Value>) {
    for (stored, shown) in TIME_FIELDS {
        let Some(ms) = map.remove(*stored) else { continue };
        let text = match ms.as_i64() {
            Some(ms) => Value::String(hostfw_model::rfc3339_utc(ms)),
            None => Value::Null,
        };
        // A view that already shows the time as text keeps its own value.
        map.entry(shown.to_string()).or_insert(text);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn stored_times_become_rfc3339_under_their_plain_name_at_any_depth() {
        let doc = json!({
            "machine_id": "m1",
            "requested_at_ms": 1_798_675_200_000i64,
            "started_at_ms": null,
            "history": [{ "at_ms": 0, "message": "x" }],
            "window_start": "2026-12-31T00:00:00Z",
            "window_start_ms": 1_798_675_200_000i64,
        });
        let out: Value = serde_json::from_str(&to_json(&doc).unwrap()).unwrap();
        assert_eq!(
            out,
            json!({
                "machine_id": "m1",
                "requested_at": "2026-12-31T00:00:00Z",
                "started_at": null,
                "history": [{ "at": "1970-01-01T00:00:00Z", "message": "x" }],
                "window_start": "2026-12-31T00:00:00Z",
            })
        );
    }

    #[test]
    fn a_stream_line_is_one_line() {
        assert_eq!(to_json_line(&json!({ "at_ms": 0 })).unwrap(), r#"{"at":"1970-01-01T00:00:00Z"}"#);
    }
}
