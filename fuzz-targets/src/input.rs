//! Splitting one fuzz input into the parts a target needs, and the "names where" assertion.
//!
//! Owns the input conventions shared by the targets: a selector byte, text parts separated by a
//! line `--8<--`, and `assert_names` (a refusal's text is non-empty and contains what it must
//! name). It must not parse any hostfw format.

/// The line that separates the parts of one input (chosen so that no real document contains it).
pub const SEPARATOR: &str = "\n--8<--\n";

/// The input as text (lossy: a parser of text files never sees invalid UTF-8, since production
/// reads them with `read_to_string`, which refuses it before parsing).
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// The first byte (which part of a target to drive) and the rest.
pub fn selector(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((first, rest)) => (*first, rest),
        None => (0, data),
    }
}

/// The `SEPARATOR`-separated parts of `text`; at most `max` (the last keeps any further separators).
pub fn parts(text: &str, max: usize) -> Vec<&str> {
    text.splitn(max.max(1), SEPARATOR).collect()
}

/// Panics (a fuzzer finding) unless `message`, the text of a refusal, is non-empty and contains
/// every one of `must_name`.
pub fn assert_names(parser: &str, message: &str, must_name: &[&str]) {
    assert!(!message.trim().is_empty(), "{parser}: a refusal with an empty message");
    for what in must_name {
        assert!(message.contains(what), "{parser}: the refusal does not name {what:?}: {message}");
    }
}
