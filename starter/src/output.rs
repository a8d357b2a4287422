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
        Format::Json => crate::outln!("{}", serde_json::to_string_pretty(json)?),
        Format::Table => crate::out!("{}", table(headers, &rows)),
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

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rem / 3600, (rem % 3600) / 60, rem % 60)
}

/// Days since 1970-01-01 to a (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_epoch_times() {
        assert_eq!(time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(time(1_798_675_200_000), "2026-12-31 00:00:00 UTC");
    }

    #[test]
    fn aligns_columns() {
        let t = table(&["A", "LONG"], &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "A    LONG\nxyz  1\n");
    }
}
