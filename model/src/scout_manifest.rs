//! The signed manifest of a Scout package (`upgrade.manifest`, signed by `upgrade.sig`): the
//! canonical text an operator's ed25519 key signs and Scout checks a task against.
//!
//! Owns the format only (rendering and strict parsing, and reading the signer's `not_after`);
//! no keys, no files, no clock. The text is UTF-8, `\n`-terminated lines, in exactly this order:
//!
//! ```text
//! hostfw-scout-manifest v2
//! package <vendor>/<model>/<component>
//! version <firmware version the package installs>
//! not_after <YYYY-MM-DDTHH:MM:SS[.sss]Z>             (only when the signer gave one)
//! script upgrade.sh sha256 <64 lowercase hex>
//! execution_timeout_seconds <positive integer>
//! artifact_download_timeout_seconds <positive integer>
//! artifact <file name> sha256 <64 lowercase hex>      (zero or more, sorted by file name)
//! ```
//!
//! The signature covers these bytes exactly; parsing accepts nothing else (no comments, no blank
//! lines, no trailing spaces, no unknown or repeated lines), so one package has one manifest
//! text. A `v1` manifest (hostfw before vendor, model and version were bound) is refused as
//! [`ManifestError::OlderFormat`], so Scout can say how to re-sign it.

use std::fmt::Write as _;

use crate::time_text::{parse_rfc3339, rfc3339_utc};

/// First line of every manifest this hostfw writes and reads.
pub const MANIFEST_HEADER: &str = "hostfw-scout-manifest v2";
/// First line of the manifests older hostfw versions wrote (package, script and timeouts only).
pub const MANIFEST_HEADER_V1: &str = "hostfw-scout-manifest v1";

/// What a package's signature vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoutManifest {
    /// `<vendor>/<model>/<component>`, the package's normalised directory names.
    pub package: String,
    /// The firmware version the package installs: Scout runs it only for a task of this target
    /// version (compared exactly, as the catalog spells it).
    pub version: String,
    /// Unix milliseconds after which Scout refuses the package (by its own clock); `None`: no
    /// expiry.
    pub not_after_ms: Option<i64>,
    /// SHA-256 of `upgrade.sh`, lowercase hex.
    pub script_sha256: String,
    /// `metadata.toml`'s `execution_timeout_seconds`.
    pub execution_timeout_seconds: u64,
    /// `metadata.toml`'s `artifact_download_timeout_seconds`.
    pub artifact_download_timeout_seconds: u64,
    /// Artifacts the task must fetch, `(file name, sha256)`, sorted by name. Empty: the
    /// signer named none, and the task's artifacts are checked only against the worker's digests.
    pub artifacts: Vec<(String, String)>,
}

/// Why a manifest text is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// A manifest an older hostfw wrote: it names no firmware version (and Scout did not hold it
    /// to its vendor and model), so it must be signed again.
    #[error("manifest format `{found}` was written by an older hostfw (this one reads `{MANIFEST_HEADER}`)")]
    OlderFormat { found: String },
    #[error("manifest line {line}: {problem}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong there.
        problem: String,
    },
}

/// A signer's `not_after` that is neither an RFC 3339 time nor a date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not_after `{text}` is neither an RFC 3339 time (2026-06-30T18:00:00Z) nor a date (2026-06-30)")]
pub struct NotAfterError {
    pub text: String,
}

/// The signer's `not_after` as unix milliseconds: an RFC 3339 time with any offset, or a date
/// `YYYY-MM-DD`, meaning through the end of that day in UTC (23:59:59Z).
pub fn parse_not_after(text: &str) -> Result<i64, NotAfterError> {
    let text = text.trim();
    if let Ok(ms) = parse_rfc3339(text) {
        return Ok(ms);
    }
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .filter(|d| d.format("%Y-%m-%d").to_string() == text)
        .and_then(|d| d.and_hms_opt(23, 59, 59))
        .map(|t| t.and_utc().timestamp_millis())
        .ok_or_else(|| NotAfterError { text: text.to_string() })
}

impl ScoutManifest {
    /// The package's vendor: the first segment of `package`.
    pub fn vendor(&self) -> &str {
        self.package.split('/').next().unwrap_or_default()
    }

    /// The package's model: the second segment of `package`.
    pub fn model(&self) -> &str {
        self.package.split('/').nth(1).unwrap_or_default()
    }

    /// The package's component: the last segment of `package`.
    pub fn component(&self) -> &str {
        self.package.rsplit('/').next().unwrap_or_default()
    }

    /// The canonical text (what is signed).
    pub fn render(&self) -> String {
        let mut s = format!("{MANIFEST_HEADER}\npackage {}\nversion {}\n", self.package, self.version);
        if let Some(ms) = self.not_after_ms {
            let _ = writeln!(s, "not_after {}", rfc3339_utc(ms));
        }
        let _ = write!(
            s,
            "script upgrade.sh sha256 {}\nexecution_timeout_seconds {}\nartifact_download_timeout_seconds {}\n",
            self.script_sha256, self.execution_timeout_seconds, self.artifact_download_timeout_seconds
        );
        let mut artifacts = self.artifacts.clone();
        artifacts.sort();
        for (name, sha) in artifacts {
            let _ = writeln!(s, "artifact {name} sha256 {sha}");
        }
        s
    }

    /// Parses a canonical text; anything `render` would not produce is refused.
    pub fn parse(text: &str) -> Result<ScoutManifest, ManifestError> {
        let body = text.strip_suffix('\n').ok_or_else(|| err(text.lines().count().max(1), "no final newline"))?;
        let mut lines = Lines { lines: body.split('\n').collect(), next: 0 };
        match lines.lines.first().copied() {
            Some(MANIFEST_HEADER) => lines.next = 1,
            Some(MANIFEST_HEADER_V1) => return Err(ManifestError::OlderFormat { found: MANIFEST_HEADER_V1.into() }),
            _ => return Err(err(1, &format!("expected `{MANIFEST_HEADER}`"))),
        }
        let package = lines.take("package ")?;
        let segments: Vec<&str> = package.split('/').collect();
        if segments.len() != 3 || segments.iter().any(|s| !is_segment(s)) {
            return Err(err(lines.next, "package must be <vendor>/<model>/<component> of [a-z0-9_-]"));
        }
        let version = lines.take("version ")?;
        if !is_version(version) {
            return Err(err(lines.next, "version must be printable text without surrounding spaces"));
        }
        let not_after_ms = match lines.peek_strip("not_after ") {
            None => None,
            Some(value) => {
                lines.next += 1;
                let ms = parse_rfc3339(value).ok().filter(|ms| rfc3339_utc(*ms) == value).ok_or_else(|| {
                    err(lines.next, "not_after must be an RFC 3339 UTC time like 2026-06-30T23:59:59Z")
                })?;
                Some(ms)
            }
        };
        let script_sha256 = lines.take("script upgrade.sh sha256 ")?;
        if !is_sha256(script_sha256) {
            return Err(err(lines.next, "script digest must be 64 lowercase hex digits"));
        }
        let execution_timeout_seconds = lines.seconds("execution_timeout_seconds")?;
        let artifact_download_timeout_seconds = lines.seconds("artifact_download_timeout_seconds")?;
        let first_artifact = lines.next + 1;
        let mut artifacts = Vec::new();
        while let Some(line) = lines.lines.get(lines.next).copied() {
            lines.next += 1;
            let rest = line.strip_prefix("artifact ").ok_or_else(|| err(lines.next, "expected `artifact ...`"))?;
            let (name, sha) = rest
                .split_once(" sha256 ")
                .ok_or_else(|| err(lines.next, "expected `artifact <name> sha256 <hex>`"))?;
            if name.is_empty() || name.contains(['/', ' ', '\\']) || name == "." || name == ".." || !is_sha256(sha) {
                return Err(err(lines.next, "artifact needs a plain file name and 64 lowercase hex digits"));
            }
            artifacts.push((name.to_string(), sha.to_string()));
        }
        if artifacts.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(err(first_artifact, "artifacts must be sorted by file name, each named once"));
        }
        Ok(ScoutManifest {
            package: package.to_string(),
            version: version.to_string(),
            not_after_ms,
            script_sha256: script_sha256.to_string(),
            execution_timeout_seconds,
            artifact_download_timeout_seconds,
            artifacts,
        })
    }
}

/// The manifest's lines and the index of the next one to read.
struct Lines<'a> {
    lines: Vec<&'a str>,
    next: usize,
}

impl<'a> Lines<'a> {
    /// The next line's text after `prefix`, if it starts so (not consumed).
    fn peek_strip(&self, prefix: &str) -> Option<&'a str> {
        self.lines.get(self.next).and_then(|line| line.strip_prefix(prefix))
    }

    /// Consumes the next line, which must start with `prefix`; returns the rest.
    fn take(&mut self, prefix: &str) -> Result<&'a str, ManifestError> {
        let line =
            self.lines.get(self.next).ok_or_else(|| err(self.next + 1, &format!("missing `{}`", prefix.trim_end())))?;
        self.next += 1;
        line.strip_prefix(prefix).ok_or_else(|| err(self.next, &format!("expected `{prefix}...`")))
    }

    /// Consumes `<key> <positive integer, no leading zeros>`.
    fn seconds(&mut self, key: &str) -> Result<u64, ManifestError> {
        let v = self.take(&format!("{key} "))?;
        v.parse::<u64>()
            .ok()
            .filter(|n| *n > 0 && n.to_string() == v)
            .ok_or_else(|| err(self.next, &format!("{key} must be a positive integer")))
    }
}

fn err(line: usize, problem: &str) -> ManifestError {
    ManifestError::Line { line, problem: problem.to_string() }
}

fn is_segment(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn is_version(s: &str) -> bool {
    !s.is_empty() && s.trim() == s && !s.chars().any(char::is_control)
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ScoutManifest {
        ScoutManifest {
            package: "nvidia/dgx_h100/nic".into(),
            version: "28.43.1014".into(),
            not_after_ms: Some(1_782_863_999_000),
            script_sha256: "a".repeat(64),
            execution_timeout_seconds: 60,
            artifact_download_timeout_seconds: 30,
            artifacts: vec![("z.bin".into(), "b".repeat(64)), ("a.bin".into(), "c".repeat(64))],
        }
    }

    #[test]
    fn render_parse_round_trip_and_canonical_order() {
        let text = sample().render();
        assert!(
            text.starts_with(
                "hostfw-scout-manifest v2\npackage nvidia/dgx_h100/nic\nversion 28.43.1014\n\
                 not_after 2026-06-30T23:59:59Z\nscript upgrade.sh sha256 "
            ),
            "{text}"
        );
        assert!(text.find("artifact a.bin").unwrap() < text.find("artifact z.bin").unwrap());
        let parsed = ScoutManifest::parse(&text).unwrap();
        assert_eq!(parsed.render(), text);
        assert_eq!((parsed.vendor(), parsed.model(), parsed.component()), ("nvidia", "dgx_h100", "nic"));
        assert_eq!(parsed.version, "28.43.1014");

        let forever = ScoutManifest { not_after_ms: None, version: "2.19.1 (Build 5)".into(), ..sample() };
        let text = forever.render();
        assert!(!text.contains("not_after"), "{text}");
        let parsed = ScoutManifest::parse(&text).unwrap();
        assert_eq!((parsed.version.as_str(), parsed.not_after_ms, parsed.render()), ("2.19.1 (Build 5)", None, text));
    }

    #[test]
    fn anything_but_the_canonical_text_is_refused() {
        let text = sample().render();
        for bad in [
            text.trim_end().to_string(),
            text.replace("v2", "v3"),
            text.replace("60", "060"),
            text.replace("60", "0"),
            text.replace(&"a".repeat(64), &"A".repeat(64)),
            text.replace("nvidia/dgx_h100/nic", "nvidia/nic"),
            format!("{text}\n"),
            text.replace("artifact a.bin", "# artifact a.bin"),
            // version and expiry: missing, empty, padded, repeated, moved, not canonical UTC
            text.replace("version 28.43.1014\n", ""),
            text.replace("version 28.43.1014", "version "),
            text.replace("version 28.43.1014", "version 28.43.1014 "),
            text.replace("version 28.43.1014\n", "version 28.43.1014\nversion 28.43.1014\n"),
            text.replace("not_after 2026-06-30T23:59:59Z\n", "not_after 2026-06-30T23:59:59Z\n".repeat(2).as_str()),
            text.replace("not_after 2026-06-30T23:59:59Z\n", "").replace(
                "execution_timeout_seconds 60\n",
                "execution_timeout_seconds 60\nnot_after 2026-06-30T23:59:59Z\n",
            ),
            text.replace("2026-06-30T23:59:59Z", "2026-07-01T01:59:59+02:00"),
            text.replace("2026-06-30T23:59:59Z", "2026-06-30"),
            text.replace("not_after", "expires"),
            text.replace("version 28.43.1014\n", "version 28.43.1014\nvendor nvidia\n"),
        ] {
            assert!(ScoutManifest::parse(&bad).is_err(), "accepted:\n{bad}");
        }
    }

    #[test]
    fn a_v1_manifest_is_an_older_format() {
        let v1 = format!(
            "hostfw-scout-manifest v1\npackage nvidia/dgx_h100/nic\nscript upgrade.sh sha256 {}\n\
             execution_timeout_seconds 60\nartifact_download_timeout_seconds 30\n",
            "a".repeat(64)
        );
        let e = ScoutManifest::parse(&v1).unwrap_err();
        assert_eq!(e, ManifestError::OlderFormat { found: MANIFEST_HEADER_V1.into() });
        assert!(e.to_string().contains("older hostfw"), "{e}");
    }

    #[test]
    fn not_after_is_a_time_or_a_whole_day() {
        assert_eq!(parse_not_after("2026-06-30"), Ok(1_782_863_999_000));
        assert_eq!(parse_not_after("2026-06-30T23:59:59Z"), Ok(1_782_863_999_000));
        assert_eq!(parse_not_after("2026-07-01T01:59:59+02:00"), Ok(1_782_863_999_000));
        for bad in ["", "soon", "2026-6-30", "2026-02-30", "30/06/2026", "2026-06-30T23:59:59"] {
            assert!(parse_not_after(bad).is_err(), "accepted {bad:?}");
        }
    }
}
