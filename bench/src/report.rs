//! Reading back `docs/benchmarks.md` for `--update`: its table rows and its run lines, so that a
//! partial run replaces only its own benchmarks' rows. Parsing only; the report is written by
//! `main.rs`.

use crate::Row;

/// Split one markdown table line into its cells (a `\|` inside a cell is not a separator).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().expect("one cell").push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            c => out.last_mut().expect("one cell").push(c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The rows of the report's results table (header and separator lines skipped).
pub fn rows(doc: &str) -> Vec<Row> {
    doc.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| benchmark |"))
        .map(cells)
        .filter(|c| c.len() == 5)
        .map(|c| Row::new(&c[0], &c[1], c[2].clone(), &c[3], &c[4]))
        .collect()
}

/// The lines of the report's `## Runs` section.
pub fn run_lines(doc: &str) -> Vec<String> {
    doc.lines()
        .skip_while(|l| *l != "## Runs")
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("- "))
        .map(str::to_string)
        .collect()
}

/// A run line (`- rollout, pass: <when and how>`) without the benchmarks in `rerun`; empty when
/// none of its benchmarks is left.
pub fn drop_benchmarks(line: &str, rerun: &[&str]) -> String {
    let Some((names, rest)) = line.trim_start_matches("- ").split_once(": ") else { return String::new() };
    let left: Vec<&str> = names.split(", ").filter(|n| !rerun.contains(n)).collect();
    if left.is_empty() {
        String::new()
    } else {
        format!("- {}: {rest}", left.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Benchmarks\n\n## Runs\n\n- rollout, capacity: 2026-11-30 12:04 UTC, `make bench`, 1453 s\n\n## Machine\n\n- nproc: 2\n\n## Results\n\n\
        | benchmark | parameters | result | unit | notes |\n|---|---|---|---|---|\n\
        | 1 rollout | N=5 | 1.0 | s | a \\| b |\n| 4 worker capacity | 1000 | 94 | MiB | x |\n";

    #[test]
    fn rows_and_run_lines_read_back() {
        let rows = rows(DOC);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].bench, "1 rollout");
        assert_eq!(rows[0].notes, "a | b", "escaped bar is part of the cell");
        assert_eq!(rows[1].result, "94");
        assert_eq!(run_lines(DOC), vec!["- rollout, capacity: 2026-11-30 12:04 UTC, `make bench`, 1453 s".to_string()]);
    }

    #[test]
    fn rerun_benchmarks_leave_their_run_line() {
        let line = "- rollout, capacity: 2026-11-30 12:04 UTC, `make bench`, 1453 s";
        assert_eq!(drop_benchmarks(line, &["capacity"]), "- rollout: 2026-11-30 12:04 UTC, `make bench`, 1453 s");
        assert_eq!(drop_benchmarks(line, &["capacity", "rollout"]), "");
        assert_eq!(drop_benchmarks(line, &["pass"]), line);
    }
}
