//! Log output of hostfw's binaries (worker, Scout, bmc-sim, CLI): one choice of format and one
//! line shape, so an SRE can grep, ship and alert on any of them the same way.
//!
//! - `text`: `2026-12-01T16:58:01.123Z  WARN message key=value …`, with colour only when the
//!   stream is a terminal.
//! - `json`: one object per line: `timestamp`, `level`, `message`, the fields, `target`.
//!
//! Span fields are left out (the SDK's spans would triple every line), except those of hostfw's
//! context spans ([`context_span`], named [`CONTEXT_SPAN`]): a line logged while one is entered
//! carries its `machine_id` and `workflow_id` as fields of its own, so a Redfish client line deep
//! inside an activity still names its host.
//! - `auto` (the default): text when the stream is a terminal, JSON otherwise (a file, a pipe,
//!   journald, a container log).
//!
//! Owns the subscriber set-up only; what is logged, and at which level, belongs to the code that
//! logs it.

use std::fmt;
use std::io::IsTerminal;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::FormattedFields;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

/// The name of hostfw's context spans: their fields are copied onto every line logged inside.
pub const CONTEXT_SPAN: &str = "hostfw";

/// A context span naming the host and workflow an activity works for (an empty value is left
/// out). Enter it (or `Instrument::instrument` a future with it) around work whose lines should
/// name them.
pub fn context_span(machine_id: &str, workflow_id: &str) -> tracing::Span {
    let span = tracing::info_span!("hostfw", machine_id = tracing::field::Empty, workflow_id = tracing::field::Empty);
    if !machine_id.is_empty() {
        span.record("machine_id", machine_id);
    }
    if !workflow_id.is_empty() {
        span.record("workflow_id", workflow_id);
    }
    span
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Text on a terminal, JSON otherwise.
    #[default]
    Auto,
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// The concrete format for a stream that is (or is not) a terminal.
    pub fn resolve(self, terminal: bool) -> LogFormat {
        match self {
            LogFormat::Auto if terminal => LogFormat::Text,
            LogFormat::Auto => LogFormat::Json,
            other => other,
        }
    }
}

/// Where the log goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }
}

/// The filter: `env_var` when set and valid (tracing's directive syntax), else `default`.
pub fn filter(env_var: &str, default: &str) -> EnvFilter {
    EnvFilter::try_from_env(env_var).unwrap_or_else(|_| EnvFilter::new(default))
}

/// Install the global subscriber writing to `stream`. Call once, first thing in `main`.
pub fn init(format: LogFormat, filter: EnvFilter, stream: Stream) {
    let terminal = stream.is_terminal();
    match stream {
        Stream::Stdout => install(format.resolve(terminal), terminal, filter, std::io::stdout),
        Stream::Stderr => install(format.resolve(terminal), terminal, filter, std::io::stderr),
    }
}

/// Install the global subscriber on any writer: `ansi` colours text lines.
pub fn install<W>(format: LogFormat, ansi: bool, filter: EnvFilter, writer: W)
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    // A second call (a test harness, an embedding binary) keeps the first subscriber.
    let _ = tracing::subscriber::set_global_default(subscriber(format, ansi, filter, writer));
}

/// The subscriber [`install`] installs, for callers that scope it (`tracing::subscriber::with_default`).
pub fn subscriber<W>(format: LogFormat, ansi: bool, filter: EnvFilter, writer: W) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    match format {
        LogFormat::Json => Box::new(builder.fmt_fields(JsonFields::new()).event_format(JsonLine).finish()),
        LogFormat::Text | LogFormat::Auto => Box::new(builder.with_ansi(ansi).event_format(TextLine { ansi }).finish()),
    }
}

/// `2026-12-01T16:58:01.123Z`: the same RFC 3339 UTC shape hostfw prints everywhere.
#[derive(Debug, Clone, Copy)]
struct Rfc3339Millis;

impl FormatTime for Rfc3339Millis {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        // SystemTime's own format is RFC 3339 with microseconds; milliseconds are plenty and shorter.
        let mut full = String::new();
        SystemTime.format_time(&mut Writer::new(&mut full))?;
        match (full.len() > 24, full.ends_with('Z')) {
            (true, true) => write!(w, "{}Z", &full[..23]),
            _ => w.write_str(&full),
        }
    }
}

/// The text line: time, level, message, the context spans' fields and the event's own fields.
struct TextLine {
    ansi: bool,
}

impl<S, N> FormatEvent<S, N> for TextLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut w: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        Rfc3339Millis.format_time(&mut w)?;
        let level = *event.metadata().level();
        let (on, off) = if self.ansi { (level_colour(level), "\x1b[0m") } else { ("", "") };
        write!(w, " {on}{level:>5}{off} ")?;
        ctx.field_format().format_fields(w.by_ref(), event)?;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root().filter(|s| s.name() == CONTEXT_SPAN) {
                if let Some(fields) = span.extensions().get::<FormattedFields<N>>().filter(|f| !f.is_empty()) {
                    write!(w, " {fields}")?;
                }
            }
        }
        writeln!(w)
    }
}

/// The JSON line: one flat object. The context spans' fields come first, so an event field of
/// the same name wins.
struct JsonLine;

impl<S> FormatEvent<S, JsonFields> for JsonLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, JsonFields>, mut w: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let mut time = String::new();
        Rfc3339Millis.format_time(&mut Writer::new(&mut time))?;
        let mut line = Map::new();
        line.insert("timestamp".into(), Value::String(time));
        line.insert("level".into(), Value::String(event.metadata().level().to_string()));
        line.insert("message".into(), Value::String(String::new()));
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root().filter(|s| s.name() == CONTEXT_SPAN) {
                if let Some(fields) = span.extensions().get::<FormattedFields<JsonFields>>() {
                    if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(fields) {
                        line.extend(fields);
                    }
                }
            }
        }
        event.record(&mut JsonVisitor(&mut line));
        line.insert("target".into(), Value::String(event.metadata().target().to_string()));
        writeln!(w, "{}", ordered(line))
    }
}

/// The object as text with `timestamp`, `level` and `message` first (what a person scanning the
/// raw log reads), then the other fields in name order.
fn ordered(mut line: Map<String, Value>) -> String {
    let mut out = String::from("{");
    let mut push = |key: &str, value: &Value| {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&Value::String(key.to_string()).to_string());
        out.push(':');
        out.push_str(&value.to_string());
    };
    for key in ["timestamp", "level", "message"] {
        if let Some(value) = line.remove(key) {
            push(key, &value);
        }
    }
    for (key, value) in &line {
        push(key, value);
    }
    out.push('}');
    out
}

/// Collects an event's fields into a JSON object (numbers and booleans stay typed).
struct JsonVisitor<'a>(&'a mut Map<String, Value>);

impl Visit for JsonVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().into(), Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), Value::String(value.into()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(field.name().into(), Value::String(value.to_string()));
    }
}

fn level_colour(level: tracing::Level) -> &'static str {
    match level {
        tracing::Level::ERROR => "\x1b[31m",
        tracing::Level::WARN => "\x1b[33m",
        tracing::Level::INFO => "\x1b[32m",
        _ => "\x1b[2m",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_text_on_a_terminal_and_json_elsewhere() {
        assert_eq!(LogFormat::Auto.resolve(true), LogFormat::Text);
        assert_eq!(LogFormat::Auto.resolve(false), LogFormat::Json);
        assert_eq!(LogFormat::Text.resolve(false), LogFormat::Text);
        assert_eq!(LogFormat::Json.resolve(true), LogFormat::Json);
    }

    #[test]
    fn times_are_rfc3339_utc_with_milliseconds() {
        let mut out = String::new();
        Rfc3339Millis.format_time(&mut Writer::new(&mut out)).unwrap();
        assert_eq!(out.len(), 24, "{out}");
        assert!(out.ends_with('Z') && out.as_bytes()[10] == b'T' && out.as_bytes()[19] == b'.', "{out}");
    }
}
