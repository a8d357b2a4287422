//! The signed manifest of a Scout package (`upgrade.manifest`, signed by `upgrade.sig`): the
//! canonical text an operator's ed25519 key signs and Scout checks a task against.
//!
//! Owns the format only (rendering and strict parsing); no keys, no files. The text is UTF-8,
//! `\n`-terminated lines, in exactly this order:
//!
//! ```text
//! hostfw-scout-manifest v1
//! package <vendor>/<model>/<component>
//! script upgrade.sh sha256 <64 lowercase hex>
//! execution_timeout_seconds <positive integer>
//! artifact_download_timeout_seconds <positive integer>
//! artifact <file name> sha256 <64 lowercase hex>      (zero or more, sorted by file name)
//! ```
//!
//! The signature covers these bytes exactly; parsing accepts nothing else (no comments, no blank
//! lines, no trailing spaces), so one package has one manifest text.

use std::fmt::Write as _;

/// First line of every v1 manifest.
pub const MANIFEST_HEADER: &str = "hostfw-scout-manifest v1";

/// What a package's signature vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoutManifest {
    /// `<vendor>/<model>/<component>`, the package's normalised directory names.
    pub package: String,
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
#[error("manifest line {line}: {problem}")]
pub struct ManifestError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong there.
    pub problem: String,
}

impl ScoutManifest {
    /// The package's component: the last segment of `package`.
    pub fn component(&self) -> &str {
        self.package.rsplit('/').next().unwrap_or_default()
    }

    /// The canonical text (what is signed).
    pub fn render(&self) -> String {
        let mut s = format!(
            "{MANIFEST_HEADER}\npackage {}\nscript upgrade.sh sha256 {}\nexecution_timeout_seconds {}\n\
             artifact_download_timeout_seconds {}\n",
            self.package, self.script_sha256, self.execution_timeout_seconds, self.artifact_download_timeout_seconds
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
        let err = |line: usize, problem: &str| ManifestError { line, problem: problem.to_string() };
        let body = text.strip_suffix('\n').ok_or_else(|| err(text.lines().count().max(1), "no final newline"))?;
        let lines: Vec<&str> = body.split('\n').collect();
        let get = |i: usize, prefix: &str| -> Result<&str, ManifestError> {
            let line = lines.get(i).ok_or_else(|| err(i + 1, &format!("missing `{}`", prefix.trim_end())))?;
            line.strip_prefix(prefix).ok_or_else(|| err(i + 1, &format!("expected `{}...`", prefix)))
        };
        if lines.first() != Some(&MANIFEST_HEADER) {
            return Err(err(1, &format!("expected `{MANIFEST_HEADER}`")));
        }
        let package = get(1, "package ")?;
        let segments: Vec<&str> = package.split('/').collect();
        if segments.len() != 3 || segments.iter().any(|s| !is_segment(s)) {
            return Err(err(2, "package must be <vendor>/<model>/<component> of [a-z0-9_-]"));
        }
        let script_sha256 = get(2, "script upgrade.sh sha256 ")?;
        if !is_sha256(script_sha256) {
            return Err(err(3, "script digest must be 64 lowercase hex digits"));
        }
        let seconds = |i: usize, key: &str| -> Result<u64, ManifestError> {
            let v = get(i, &format!("{key} "))?;
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0 && n.to_string() == v)
                .ok_or_else(|| err(i + 1, &format!("{key} must be a positive integer")))
        };
        let execution_timeout_seconds = seconds(3, "execution_timeout_seconds")?;
        let artifact_download_timeout_seconds = seconds(4, "artifact_download_timeout_seconds")?;
        let mut artifacts = Vec::new();
        for (i, line) in lines.iter().enumerate().skip(5) {
            let rest = line.strip_prefix("artifact ").ok_or_else(|| err(i + 1, "expected `artifact ...`"))?;
            let (name, sha) =
                rest.split_once(" sha256 ").ok_or_else(|| err(i + 1, "expected `artifact <name> sha256 <hex>`"))?;
            if name.is_empty() || name.contains(['/', ' ', '\\']) || name == "." || name == ".." || !is_sha256(sha) {
                return Err(err(i + 1, "artifact needs a plain file name and 64 lowercase hex digits"));
            }
            artifacts.push((name.to_string(), sha.to_string()));
        }
        if artifacts.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(err(6, "artifacts must be sorted by file name, each named once"));
        }
        Ok(ScoutManifest {
            package: package.to_string(),
            script_sha256: script_sha256.to_string(),
            execution_timeout_seconds,
            artifact_download_timeout_seconds,
            artifacts,
        })
    }
}

fn is_segment(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
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
            script_sha256: "a".repeat(64),
            execution_timeout_seconds: 60,
            artifact_download_timeout_seconds: 30,
            artifacts: vec![("z.bin".into(), "b".repeat(64)), ("a.bin".into(), "c".repeat(64))],
        }
    }

    #[test]
    fn render_parse_round_trip_and_canonical_order() {
        let text = sample().render();
        assert!(text.starts_with("hostfw-scout-manifest v1\npackage nvidia/dgx_h100/nic\n"), "{text}");
        assert!(text.find("artifact a.bin").unwrap() < text.find("artifact z.bin").unwrap());
        let parsed = ScoutManifest::parse(&text).unwrap();
        assert_eq!(parsed.render(), text);
        assert_eq!(parsed.component(), "nic");
    }

    #[test]
    fn anything_but_the_canonical_text_is_refused() {
        let text = sample().render();
        for bad in [
            text.trim_end().to_string(),
            text.replace("v1", "v2"),
            text.replace("60", "060"),
            text.replace("60", "0"),
            text.replace(&"a".repeat(64), &"A".repeat(64)),
            text.replace("nvidia/dgx_h100/nic", "nvidia/nic"),
            format!("{text}\n"),
            text.replace("artifact a.bin", "# artifact a.bin"),
        ] {
            assert!(ScoutManifest::parse(&bad).is_err(), "accepted:\n{bad}");
        }
    }
}
