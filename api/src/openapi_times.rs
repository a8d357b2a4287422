//! Times in the OpenAPI document as the answers show them. hostfw keeps a time as epoch
//! milliseconds under a `_ms` name (`created_at_ms`); every JSON answer shows it as RFC 3339 UTC
//! text under the name without `_ms` (`created_at`), through `hostfw_starter::json_contract`.
//! The schemas generated from the types say `_ms` integers; [`rewrite`] applies the same rule to
//! the schemas the responses use, so each schema describes the answer it documents.
//!
//! Owns that rewrite of response schemas. It must not touch request schemas (the API reads what
//! its request types say) nor change any other property.

use std::collections::BTreeSet;

use hostfw_starter::json_contract::TIME_FIELDS;
use serde_json::{json, Map, Value};

/// Rewrite the time properties of every component schema a response refers to (directly or
/// through other schemas) in `doc`, an OpenAPI document as JSON.
pub fn rewrite(doc: &mut Value) {
    let mut wanted = BTreeSet::new();
    if let Some(paths) = doc.get("paths") {
        for item in object_values(paths) {
            for op in object_values(item) {
                if let Some(responses) = op.get("responses") {
                    collect_refs(responses, &mut wanted);
                }
            }
        }
    }
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    // Close over the references of the wanted schemas.
    let mut todo: Vec<String> = wanted.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        let mut found = BTreeSet::new();
        if let Some(schema) = schemas.get(&name) {
            collect_refs(schema, &mut found);
        }
        for f in found {
            if wanted.insert(f.clone()) {
                todo.push(f);
            }
        }
    }
    for name in &wanted {
        if let Some(schema) = schemas.get_mut(name) {
            rewrite_schema(schema);
        }
    }
}

fn object_values(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_object().into_iter().flat_map(|m| m.values())
}

/// Names of the component schemas `v` refers to (`#/components/schemas/<name>`).
fn collect_refs(v: &Value, into: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            if let Some(name) =
                map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                into.insert(name.to_string());
            }
            map.values().for_each(|x| collect_refs(x, into));
        }
        Value::Array(items) => items.iter().for_each(|x| collect_refs(x, into)),
        _ => {}
    }
}

/// Every object schema within `v` (its own properties, items, allOf/oneOf members, ...).
fn rewrite_schema(v: &mut Value) {
    hostfw_starter::json_contract::each_object_mut(v, &mut rewrite_properties);
}

fn rewrite_properties(schema: &mut Map<String, Value>) {
    let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) else { return };
    let mut renamed = Vec::new();
    for (stored, shown) in TIME_FIELDS {
        let Some(old) = props.remove(*stored) else { continue };
        renamed.push((*stored, *shown));
        // A view that already shows the time as text keeps its own property (as the answer does).
        if props.contains_key(*shown) {
            continue;
        }
        props.insert(shown.to_string(), time_schema(&old));
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        for (stored, shown) in renamed {
            if let Some(i) = required.iter().position(|r| r == stored) {
                required.remove(i);
                if !required.iter().any(|r| r == shown) {
                    required.push(json!(shown));
                }
            }
        }
    }
}

/// The schema of a time shown as text: an RFC 3339 string, or null where the integer could be.
fn time_schema(old: &Value) -> Value {
    let nullable = match old.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => old.get("oneOf").is_some_and(|o| o.to_string().contains("\"null\"")),
    };
    let description = old
        .get("description")
        .and_then(Value::as_str)
        .map(|d| [" (unix ms)", ", unix ms", " unix ms", "unix ms"].iter().fold(d.to_string(), |d, u| d.replace(u, "")))
        .map(|d| format!("{} (RFC 3339, UTC).", d.trim_end_matches(['.', ',', ' '])))
        .unwrap_or_else(|| "RFC 3339, UTC.".to_string());
    let ty = if nullable { json!(["string", "null"]) } else { json!("string") };
    json!({ "type": ty, "format": "date-time", "description": description.trim_start() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_times_become_rfc3339_strings_under_their_plain_names_and_requests_are_left_alone() {
        let mut doc = json!({
            "paths": { "/v1/x": { "get": { "responses": { "200": { "content": { "application/json": {
                "schema": { "type": "array", "items": { "$ref": "#/components/schemas/Row" } } } } } } },
                "post": { "requestBody": { "content": { "application/json": {
                    "schema": { "$ref": "#/components/schemas/Input" } } } } } } },
            "components": { "schemas": {
                "Row": { "type": "object", "required": ["id", "created_at_ms"], "properties": {
                    "id": { "type": "string" },
                    "created_at_ms": { "type": "integer", "format": "int64", "description": "When, unix ms." },
                    "window": { "$ref": "#/components/schemas/Window" },
                    "next_attempt_at_ms": { "type": ["integer", "null"], "format": "int64" } } },
                "Window": { "type": "object", "required": ["start_ms", "end_ms"], "properties": {
                    "start_ms": { "type": "integer", "description": "When it opens (unix ms): included." },
                    "end_ms": { "type": "integer" } } },
                "Input": { "type": "object", "properties": { "start_ms": { "type": "integer" } } } } }
        });
        rewrite(&mut doc);
        let row = &doc["components"]["schemas"]["Row"];
        assert_eq!(row["required"], json!(["id", "created_at"]));
        assert_eq!(
            row["properties"]["created_at"],
            json!({ "type": "string", "format": "date-time", "description": "When (RFC 3339, UTC)." })
        );
        assert!(row["properties"].get("created_at_ms").is_none());
        assert_eq!(row["properties"]["next_attempt_at"]["type"], json!(["string", "null"]));
        let window = &doc["components"]["schemas"]["Window"];
        assert_eq!(window["required"], json!(["start", "end"]), "a schema reached through another one");
        assert_eq!(window["properties"]["start"]["description"], "When it opens: included (RFC 3339, UTC).");
        assert_eq!(doc["components"]["schemas"]["Input"]["properties"]["start_ms"], json!({ "type": "integer" }));
    }
}
