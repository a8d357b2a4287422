//! Printing results: aligned plain-text tables for people, JSON for scripts (`--format json`).

use std::cell::RefCell;
use std::future::Future;

use serde::Serialize;

use crate::cli::Format;

tokio::task_local! {
    /// When set (by [`capture`]), command output goes here instead of stdout.
    static CAPTURE: RefCell<String>;
}

/// Write command output: to stdout, or to the capture buffer of [`capture`].
pub fn emit(text: &str) {
    if CAPTURE.try_with(|c| c.borrow_mut().push_str(text)).is_err() {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
            // The reader went away (`hostfw plan | head`): stop quietly, as command-line tools do.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }
}

/// Whether output is being captured here (the API serving a command): nothing may prompt.
pub fn capturing() -> bool {
    CAPTURE.try_with(|_| ()).is_ok()
}

/// Run `f`, collecting what its commands print (used by tests and embedding callers).
pub async fn capture<F: Future>(f: F) -> (F::Output, String) {
    CAPTURE
        .scope(RefCell::new(String::new()), async move {
            let out = f.await;
            let text = CAPTURE.with(|c| c.borrow().clone());
            (out, text)
        })
        .await
}

/// `println!` that honours [`capture`].
#[macro_export]
macro_rules! outln {
    () => { $crate::output::emit("\n") };
    ($($arg:tt)*) => { $crate::output::emit(&format!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that honours [`capture`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::emit(&format!($($arg)*)) };
}

/// Print `rows` under `headers` as an aligned table, or `json` when the format asks for JSON.
pub fn print<T: Serialize>(format: Format, json: &T, headers: &[&str], rows: Vec<Vec<String>>) -> anyhow::Result<()> {
    match format {
        Format::Json => crate::outln!("{}", crate::json_contract::to_json(json)?),
        Format::Table => crate::out!("{}", table(headers, &rows)),
    }
    Ok(())
}

/// The result of a command that changes something: a sentence for people, a JSON object for
/// scripts (never both).
pub fn result<T: Serialize>(format: Format, json: &T, text: impl std::fmt::Display) -> anyhow::Result<()> {
    match format {
        Format::Json => crate::outln!("{}", crate::json_contract::to_json(json)?),
        Format::Table => crate::outln!("{text}"),
    }
    Ok(())
}

/// Render an aligned table.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(headers.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// Milliseconds since the epoch as RFC 3339 UTC (`2026-12-31T00:00:00Z`), the one way hostfw writes
/// a time (`hostfw_model::rfc3339_utc`).
pub fn time(ms: i64) -> String {
    hostfw_model::rfc3339_utc(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_epoch_times() {
        assert_eq!(time(0), "1970-01-01T00:00:00Z");
        assert_eq!(time(1_798_675_200_000), "2026-12-31T00:00:00Z");
    }

    #[test]
    fn aligns_columns() {
        let t = table(&["A", "LONG"], &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "A    LONG\nxyz  1\n");
    }
}
