//! Reading a worker's `/metrics` page as the tests compare it: every sample must carry the site
//! label (`site="<[site] name>"`, issue 27 item 8) as its first label, and is then read without
//! it, so a test names a series as `render.rs` writes it.
//!
//! Owns that check and the scrape. It must not parse values or decide what a series means.

/// `GET http://<addr>/metrics`, checked and read without the site label ([`without_site`]).
pub async fn scrape(addr: &str) -> String {
    let page = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap_or_else(|e| panic!("GET http://{addr}/metrics: {e}"))
        .text()
        .await
        .unwrap_or_else(|e| panic!("GET http://{addr}/metrics: {e}"));
    without_site(&page)
}

/// `page` after checking that every sample carries `site="..."` as its first label (panics
/// naming the first that does not, or whose site differs from the page's first), with that
/// label taken out.
pub fn without_site(page: &str) -> String {
    let mut site: Option<String> = None;
    let mut out = String::new();
    for line in page.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            out.push_str(line);
        } else {
            let (name, rest) = line.split_once("{site=\"").unwrap_or_else(|| panic!("no site label: {line}\n{page}"));
            let end = rest.find('"').unwrap_or_else(|| panic!("unterminated site label: {line}"));
            let this = &rest[..end];
            let first = site.get_or_insert_with(|| this.to_string());
            assert_eq!(first, this, "two sites on one page: {line}\n{page}");
            let rest = &rest[end + 1..];
            match rest.strip_prefix(',') {
                Some(others) => out.push_str(&format!("{name}{{{others}")),
                None => out.push_str(&format!("{name}{}", rest.trim_start_matches('}'))),
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::without_site;

    #[test]
    fn the_site_label_is_checked_and_taken_out() {
        let page = "# TYPE a gauge\na{site=\"s\"} 1\nb{site=\"s\",x=\"y\"} 2\n";
        assert_eq!(without_site(page), "# TYPE a gauge\na 1\nb{x=\"y\"} 2\n");
        assert!(std::panic::catch_unwind(|| without_site("a 1\n")).is_err(), "a sample without the site fails");
    }
}
