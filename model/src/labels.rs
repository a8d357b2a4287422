//! Machine labels: `key=value` pairs an operator puts on a machine (`machine add --label
//! rack=r12`, `labels = { rack = "r12" }` in a fleet file) to name its failure domains, which
//! `[machine_updater] max_concurrent_per_label` caps (`gates::label_caps`).
//!
//! Owns the label type and its syntax: keys are lower-case `[a-z0-9][a-z0-9_.-]*`, values
//! `[A-Za-z0-9][A-Za-z0-9_.-]*`, each at most 63 characters, so they read the same in TOML, a
//! shell, a Prometheus label and a table. It must not decide anything about scheduling.

use std::collections::BTreeMap;

/// A machine's labels, by key.
pub type Labels = BTreeMap<String, String>;

/// The longest key or value.
pub const LABEL_MAX_LEN: usize = 63;

/// Why a label is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("label {text:?} is not key=value (e.g. rack=r12)")]
    NotKeyValue { text: String },
    #[error("label key {key:?}: {why}")]
    BadKey { key: String, why: &'static str },
    #[error("label {key}={value:?}: the value {why}")]
    BadValue { key: String, value: String, why: &'static str },
    #[error("label key {key:?} is given twice")]
    Duplicate { key: String },
}

/// Checks a key's syntax.
pub fn check_key(key: &str) -> Result<(), LabelError> {
    let bad = |why| Err(LabelError::BadKey { key: key.to_string(), why });
    let mut chars = key.chars();
    match chars.next() {
        None => return bad("is empty"),
        Some(c) if !(c.is_ascii_lowercase() || c.is_ascii_digit()) => {
            return bad("must start with a lower-case letter or a digit")
        }
        Some(_) => {}
    }
    if key.len() > LABEL_MAX_LEN {
        return bad("is longer than 63 characters");
    }
    if !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-')) {
        return bad("may hold only lower-case letters, digits, '_', '.' and '-'");
    }
    Ok(())
}

/// Checks one `key`/`value` pair.
pub fn check_label(key: &str, value: &str) -> Result<(), LabelError> {
    check_key(key)?;
    let bad = |why| Err(LabelError::BadValue { key: key.to_string(), value: value.to_string(), why });
    let mut chars = value.chars();
    match chars.next() {
        None => return bad("is empty"),
        Some(c) if !c.is_ascii_alphanumeric() => return bad("must start with a letter or a digit"),
        Some(_) => {}
    }
    if value.len() > LABEL_MAX_LEN {
        return bad("is longer than 63 characters");
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) {
        return bad("may hold only letters, digits, '_', '.' and '-'");
    }
    Ok(())
}

/// Parses `key=value`.
pub fn parse_label(text: &str) -> Result<(String, String), LabelError> {
    let Some((key, value)) = text.split_once('=') else {
        return Err(LabelError::NotKeyValue { text: text.to_string() });
    };
    let (key, value) = (key.trim(), value.trim());
    check_label(key, value)?;
    Ok((key.to_string(), value.to_string()))
}

/// Parses several `key=value` texts into one set; a key given twice is refused.
pub fn parse_labels<'a>(texts: impl IntoIterator<Item = &'a str>) -> Result<Labels, LabelError> {
    let mut labels = Labels::new();
    for text in texts {
        let (key, value) = parse_label(text)?;
        if labels.insert(key.clone(), value).is_some() {
            return Err(LabelError::Duplicate { key });
        }
    }
    Ok(labels)
}

/// Checks every pair of a set (e.g. read from a fleet file or the database).
pub fn check_labels(labels: &Labels) -> Result<(), LabelError> {
    labels.iter().try_for_each(|(k, v)| check_label(k, v))
}

/// `rack=r12,power_domain=pd3` (empty for no labels), for tables and messages.
pub fn labels_text(labels: &Labels) -> String {
    labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_value_pairs_parse_and_bad_ones_say_why() {
        assert_eq!(parse_label("rack=r12").unwrap(), ("rack".to_string(), "r12".to_string()));
        assert_eq!(parse_label(" power_domain = PD-3 ").unwrap().1, "PD-3");
        assert_eq!(parse_label("rack").unwrap_err(), LabelError::NotKeyValue { text: "rack".into() });
        assert!(matches!(parse_label("Rack=r1"), Err(LabelError::BadKey { .. })), "upper-case key");
        assert!(matches!(parse_label("=r1"), Err(LabelError::BadKey { why: "is empty", .. })));
        assert!(matches!(parse_label("rack="), Err(LabelError::BadValue { why: "is empty", .. })));
        assert!(matches!(parse_label("rack=r 1"), Err(LabelError::BadValue { .. })), "space in value");
        assert!(matches!(parse_label("rack=\"r1\""), Err(LabelError::BadValue { .. })), "quotes");
        let long = "a".repeat(64);
        assert!(matches!(parse_label(&format!("{long}=x")), Err(LabelError::BadKey { .. })));
        assert!(matches!(parse_label(&format!("rack={long}")), Err(LabelError::BadValue { .. })));
        let msg = parse_label("rack=r 1").unwrap_err().to_string();
        assert!(msg.contains("rack") && msg.contains("letters, digits"), "{msg}");
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        let labels = parse_labels(["rack=r1", "row=a"]).unwrap();
        assert_eq!(labels_text(&labels), "rack=r1,row=a");
        assert_eq!(parse_labels(["rack=r1", "rack=r2"]).unwrap_err(), LabelError::Duplicate { key: "rack".into() });
    }
}
