//! The two line shapes, captured from a real subscriber: what an SRE's log shipper receives.

use std::io::Write;
use std::sync::{Arc, Mutex};

use hostfw_logging::{subscriber, LogFormat};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// Log one WARN event inside a span with a long field, under `format`; return the output.
fn capture(format: LogFormat, ansi: bool) -> String {
    let out = Captured::default();
    let sub = subscriber(format, ansi, EnvFilter::new("info"), out.clone());
    tracing::subscriber::with_default(sub, || {
        let span = tracing::info_span!("RunActivity", task_token = "a-very-long-sdk-token-that-must-not-appear");
        let _g = span.enter();
        tracing::warn!(machine_id = "m-1", component = "bmc", target_version = "7.10", "retrying the upload");
        tracing::debug!("filtered out");
    });
    let bytes = out.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn json_lines_are_one_flat_object_without_span_fields() {
    let out = capture(LogFormat::Json, false);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["level"], "WARN");
    assert_eq!(v["message"], "retrying the upload");
    assert_eq!(v["machine_id"], "m-1");
    assert_eq!(v["component"], "bmc");
    assert_eq!(v["target_version"], "7.10");
    assert_eq!(v["target"], "it::lines", "the module path");
    assert!(v["timestamp"].as_str().unwrap().ends_with('Z'), "{v}");
    assert!(!out.contains("a-very-long-sdk-token"), "span fields leaked: {out}");
    assert!(lines[0].starts_with(r#"{"timestamp":""#), "time first: {out}");
    assert!(lines[0].contains(r#"","level":"WARN","message":"retrying the upload","#), "then level and message: {out}");
}

#[test]
fn text_lines_carry_fields_and_no_escape_codes_unless_asked() {
    let plain = capture(LogFormat::Text, false);
    assert_eq!(plain.lines().count(), 1, "{plain}");
    assert!(plain.contains(" WARN retrying the upload machine_id=\"m-1\" component=\"bmc\""), "{plain}");
    assert!(!plain.contains('\x1b'), "ANSI codes in a non-terminal line: {plain:?}");
    assert!(!plain.contains("a-very-long-sdk-token"), "span fields leaked: {plain}");
    assert!(plain.len() < 120, "line of {} characters: {plain}", plain.len());
    let coloured = capture(LogFormat::Text, true);
    assert!(coloured.contains("\x1b[33m"), "{coloured:?}");
}

/// A line logged inside a context span (and inside an SDK span) under `format`.
fn capture_in_context(format: LogFormat) -> String {
    let out = Captured::default();
    let sub = subscriber(format, false, EnvFilter::new("info"), out.clone());
    tracing::subscriber::with_default(sub, || {
        let sdk = tracing::info_span!("RunActivity", task_token = "a-very-long-sdk-token-that-must-not-appear");
        let _sdk = sdk.enter();
        let context = hostfw_logging::context_span("m-9", "host-reprovision/m-9");
        let _context = context.enter();
        tracing::warn!(bmc = "http://10.0.0.9", attempt = 2, "task poll failed; will retry");
        tracing::info!(machine_id = "m-10", "an event's own field wins");
    });
    let bytes = out.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn lines_inside_a_context_span_name_its_machine_and_workflow() {
    let out = capture_in_context(LogFormat::Json);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["machine_id"], "m-9");
    assert_eq!(lines[0]["workflow_id"], "host-reprovision/m-9");
    assert_eq!(lines[0]["bmc"], "http://10.0.0.9");
    assert_eq!(lines[0]["attempt"], 2, "numbers stay numbers");
    assert_eq!(lines[0]["message"], "task poll failed; will retry");
    assert_eq!(lines[1]["machine_id"], "m-10");
    assert!(!out.contains("a-very-long-sdk-token"), "{out}");

    let text = capture_in_context(LogFormat::Text);
    let first = text.lines().next().unwrap();
    assert!(first.contains("task poll failed; will retry"), "{first}");
    assert!(first.contains("machine_id=\"m-9\"") && first.contains("workflow_id=\"host-reprovision/m-9\""), "{first}");
    assert!(!text.contains("a-very-long-sdk-token"), "{text}");
}
