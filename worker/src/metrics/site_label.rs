//! The `site` label on every sample of a worker's `/metrics` page (issue 27 item 8), so one
//! Prometheus can scrape the workers of several sites and tell their series apart.
//!
//! Owns adding `site="<[site] name>"` as the first label of each sample line (hostfw's series,
//! `hostfw_build_info` and the Temporal SDK's `temporal_*` alike) and escaping the name as the
//! text format requires. It must stay pure (no I/O) and leave `# HELP` and `# TYPE` lines, and
//! every other label, as they are.

/// The label's name.
pub const SITE_LABEL: &str = "site";

/// `page` with `site="<site>"` on every sample.
pub fn label_site(page: &str, site: &str) -> String {
    let label = format!("{SITE_LABEL}=\"{}\"", escape(site));
    let mut out = String::with_capacity(page.len() + page.lines().count() * (label.len() + 3));
    for line in page.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            out.push_str(line);
        } else {
            match line.find(['{', ' ']) {
                Some(at) if line[at..].starts_with("{}") => {
                    out.push_str(&format!("{}{{{label}}}{}", &line[..at], &line[at + 2..]));
                }
                Some(at) if line[at..].starts_with('{') => {
                    out.push_str(&format!("{}{{{label},{}", &line[..at], &line[at + 1..]));
                }
                Some(at) => out.push_str(&format!("{}{{{label}}}{}", &line[..at], &line[at..])),
                None => out.push_str(line),
            }
        }
        out.push('\n');
    }
    out
}

/// A label value in the text format: backslash, double quote and line feed escaped.
fn escape(value: &str) -> String {
    value.replace('\\', r"\\").replace('"', "\\\"").replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_gets_the_site_first_and_comments_stay() {
        let page =
            "# HELP a A gauge.\n# TYPE a gauge\na 3\nb{phase=\"started\"} 7\nc{} 1\nd{le=\"+Inf\"} 2 1700000000\n";
        assert_eq!(
            label_site(page, "lab-1"),
            "# HELP a A gauge.\n# TYPE a gauge\na{site=\"lab-1\"} 3\nb{site=\"lab-1\",phase=\"started\"} 7\n\
             c{site=\"lab-1\"} 1\nd{site=\"lab-1\",le=\"+Inf\"} 2 1700000000\n"
        );
    }

    #[test]
    fn the_name_is_escaped() {
        assert_eq!(label_site("a 1\n", "x\"y\\z\nw"), "a{site=\"x\\\"y\\\\z\\nw\"} 1\n");
    }
}
