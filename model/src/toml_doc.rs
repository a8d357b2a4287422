//! Parsing one TOML document into a typed value while keeping the exact key path and position of
//! any error (`host_models.r760.components.bmc.known_firmware[1].default`, line 12).
//!
//! Owns the bridge between `toml` + `serde_path_to_error` and our error fields. It must not read
//! files or know which document type it parses.

use serde::de::DeserializeOwned;

use crate::error::TextPos;

/// Why a document did not parse: the key path (prefixed), where, and toml's own message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseFailure {
    pub key: String,
    pub at: Option<TextPos>,
    pub problem: String,
}

/// Joins a key prefix and a suffix with a dot (either may be empty; `[i]` suffixes attach directly).
pub(crate) fn join_key(prefix: &str, suffix: &str) -> String {
    match (prefix.is_empty(), suffix.is_empty()) {
        (true, _) => suffix.to_string(),
        (_, true) => prefix.to_string(),
        _ if suffix.starts_with('[') => format!("{prefix}{suffix}"),
        _ => format!("{prefix}.{suffix}"),
    }
}

/// Parses `text` as a `T`. The error's key is `key_prefix` joined with the path serde was at
/// (a syntax error, which happens before any key is known, is reported as `(document)`).
pub(crate) fn parse<T: DeserializeOwned>(text: &str, key_prefix: &str) -> Result<T, ParseFailure> {
    let deserializer = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(deserializer).map_err(|err| {
        let path = err.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let key = join_key(key_prefix, &path);
        let inner = err.inner();
        ParseFailure {
            key: if key.is_empty() { "(document)".to_string() } else { key },
            at: inner.span().map(|span| TextPos::of_offset(text, span.start)),
            problem: inner.message().trim().replace('\n', "; "),
        }
    })
}
