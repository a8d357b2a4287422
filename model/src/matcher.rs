//! `Matcher`: the `current_version_reported_as` regex that finds a component's members in a BMC's
//! firmware inventory (matched against each member's Redfish `Id`).
//!
//! Owns compiling, matching and the serde form (the regex source string, so it round-trips through
//! TOML and the JSON of Temporal payloads). It must not know components, versions or reports.

use std::fmt;
use std::hash::{Hash, Hasher};

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::MatcherError;

/// A compiled regex that remembers its source; equality, hashing and serde use the source only.
#[derive(Clone)]
pub struct Matcher {
    regex: Regex,
}

impl Matcher {
    /// Compiles `source`. The error text names the pattern and regex's reason.
    pub fn new(source: &str) -> Result<Matcher, MatcherError> {
        Regex::new(source)
            .map(|regex| Matcher { regex })
            .map_err(|e| MatcherError { pattern: source.to_string(), problem: short_reason(&e) })
    }

    /// True when the pattern matches anywhere in `member_id` (use `^`/`$` to anchor).
    pub fn is_match(&self, member_id: &str) -> bool {
        self.regex.is_match(member_id)
    }

    /// The regex source as written in the catalog.
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }
}

/// regex's syntax errors are multi-line drawings; keep only the reason ("unclosed group").
fn short_reason(e: &regex::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once("error: ") {
        Some((_, reason)) => reason.trim().to_string(),
        None => text.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Matcher").field(&self.as_str()).finish()
    }
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Matcher {}

impl Hash for Matcher {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Serialize for Matcher {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Matcher {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let source = String::deserialize(d)?;
        Matcher::new(&source).map_err(serde::de::Error::custom)
    }
}
