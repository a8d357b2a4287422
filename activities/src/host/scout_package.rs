//! The packaged Scout upgrade of one component: `<scripts>/<vendor>/<model>/<component>/upgrade.sh`
//! with its sibling `metadata.toml` (timeouts), looked up by normalised path segments, validated
//! strictly and digested with SHA-256 (the digest Scout checks before it runs the script); its
//! `upgrade.manifest` and `upgrade.sig` (`scout_signing`), when signed, are read to be passed on.
//!
//! Pure apart from reading the package files; no Temporal here.

use std::fs::File;
use std::io;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The script's file name inside a package directory.
pub const SCRIPT_FILE_NAME: &str = "upgrade.sh";
/// The sidecar holding the package's timeouts.
pub const METADATA_FILE_NAME: &str = "metadata.toml";

const EXECUTION_TIMEOUT_KEY: &str = "execution_timeout_seconds";
const DOWNLOAD_TIMEOUT_KEY: &str = "artifact_download_timeout_seconds";
const METADATA_KEYS: [&str; 2] = [EXECUTION_TIMEOUT_KEY, DOWNLOAD_TIMEOUT_KEY];

/// Why a package (or a name that would locate one) is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ScoutPackageError {
    #[error("scout package path segment {segment:?} is empty")]
    EmptySegment { segment: String },
    #[error("scout package path segment {segment:?} contains {character:?}: only a-z, 0-9, '_' and '-' are allowed")]
    BadCharacter { segment: String, character: char },
    #[error("{script}: the scout package has no {expected} next to its script", expected = expected.display(), script = script.display())]
    MissingMetadata { script: PathBuf, expected: PathBuf },
    #[error("{path}: not valid TOML: {problem}", path = path.display())]
    MetadataSyntax { path: PathBuf, problem: String },
    #[error("{path}: {key}: {problem}", path = path.display())]
    MetadataKey { path: PathBuf, key: String, problem: String },
    #[error("{path}: not a regular file", path = path.display())]
    NotAFile { path: PathBuf },
    #[error("{path}: cannot read it", path = path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The `metadata.toml` of a package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoutMetadata {
    /// Scout kills the script after this long.
    pub execution_timeout_seconds: NonZeroU64,
    /// Bound on downloading each artifact.
    pub artifact_download_timeout_seconds: NonZeroU64,
}

/// A package found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoutPackage {
    /// The normalised vendor directory name (`nvidia` for `Nvidia`), which the package's signed
    /// manifest must name.
    pub vendor: String,
    /// The normalised model directory name (`dgx_h100` for `DGX H100`).
    pub model: String,
    pub script_path: PathBuf,
    /// `<vendor>/<model>/<component>/upgrade.sh`, '/'-separated, for building the script's URL.
    pub relative_path: String,
    /// Lowercase hex SHA-256 of the script.
    pub script_sha256: String,
    pub metadata: ScoutMetadata,
    /// `upgrade.manifest` beside the metadata, verbatim, when the package is signed.
    pub manifest: Option<String>,
    /// `upgrade.sig` beside the metadata (base64 ed25519 signature over the manifest), trimmed.
    pub signature: Option<String>,
}

/// A name as a package path segment: lower-cased, leading and trailing whitespace dropped, every
/// inner whitespace run turned into one `_`; the result must be non-empty and use `[a-z0-9_-]` only.
pub fn normalize_segment(s: &str) -> Result<String, ScoutPackageError> {
    let normalized = s.split_whitespace().collect::<Vec<_>>().join("_").to_lowercase();
    if normalized.is_empty() {
        return Err(ScoutPackageError::EmptySegment { segment: s.to_string() });
    }
    if let Some(character) =
        normalized.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == '-'))
    {
        return Err(ScoutPackageError::BadCharacter { segment: s.to_string(), character });
    }
    Ok(normalized)
}

/// Parse a package's `metadata.toml`; `origin` is the file it came from, named in every error.
/// Exactly the two timeout keys are allowed, each a positive integer of seconds.
pub fn parse_metadata(text: &str, origin: &Path) -> Result<ScoutMetadata, ScoutPackageError> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        // Where: the line of the span toml reports (its message alone drops it).
        let line = e
            .span()
            .map(|span| text.as_bytes()[..span.start.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1);
        ScoutPackageError::MetadataSyntax {
            path: origin.to_path_buf(),
            problem: match line {
                Some(line) => format!("line {line}: {}", e.message()),
                None => e.message().to_string(),
            },
        }
    })?;
    let key_error = |key: &str, problem: String| ScoutPackageError::MetadataKey {
        path: origin.to_path_buf(),
        key: key.to_string(),
        problem,
    };
    if let Some(unknown) = table.keys().find(|k| !METADATA_KEYS.contains(&k.as_str())) {
        return Err(key_error(unknown, format!("unknown key (allowed: {})", METADATA_KEYS.join(", "))));
    }
    let seconds = |key: &str| -> Result<NonZeroU64, ScoutPackageError> {
        match table.get(key) {
            None => Err(key_error(key, "missing".to_string())),
            Some(toml::Value::Integer(n)) => u64::try_from(*n)
                .ok()
                .and_then(NonZeroU64::new)
                .ok_or_else(|| key_error(key, format!("must be a positive number of seconds, got {n}"))),
            Some(other) => {
                Err(key_error(key, format!("must be an integer number of seconds, got a {}", other.type_str())))
            }
        }
    };
    Ok(ScoutMetadata {
        execution_timeout_seconds: seconds(EXECUTION_TIMEOUT_KEY)?,
        artifact_download_timeout_seconds: seconds(DOWNLOAD_TIMEOUT_KEY)?,
    })
}

/// Look up the package of `vendor`/`model`/`component` under `scripts_dir`.
///
/// `Ok(None)` when there is no `upgrade.sh` for it (or no scripts directory at all). A script
/// without a valid `metadata.toml` is an error: the caller must not quietly take another route.
pub fn find_package(
    scripts_dir: &Path,
    vendor: &str,
    model: &str,
    component: &str,
) -> Result<Option<ScoutPackage>, ScoutPackageError> {
    let segments = [normalize_segment(vendor)?, normalize_segment(model)?, normalize_segment(component)?];
    let dir = segments.iter().fold(scripts_dir.to_path_buf(), |dir, s| dir.join(s));
    let script_path = dir.join(SCRIPT_FILE_NAME);
    match std::fs::metadata(&script_path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ScoutPackageError::Io { path: script_path, source }),
        Ok(m) if !m.is_file() => return Err(ScoutPackageError::NotAFile { path: script_path }),
        Ok(_) => {}
    }
    let metadata_path = dir.join(METADATA_FILE_NAME);
    let text = match std::fs::read_to_string(&metadata_path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ScoutPackageError::MissingMetadata { script: script_path, expected: metadata_path })
        }
        Err(source) => return Err(ScoutPackageError::Io { path: metadata_path, source }),
        Ok(text) => text,
    };
    let metadata = parse_metadata(&text, &metadata_path)?;
    let script_sha256 = sha256_file(&script_path)?;
    let manifest = read_optional(&dir.join(crate::host::scout_signing::MANIFEST_FILE_NAME))?;
    let signature =
        read_optional(&dir.join(crate::host::scout_signing::SIGNATURE_FILE_NAME))?.map(|s| s.trim().to_string());
    let relative_path = format!("{}/{SCRIPT_FILE_NAME}", segments.join("/"));
    let [vendor, model, _] = segments;
    Ok(Some(ScoutPackage { vendor, model, relative_path, script_path, script_sha256, metadata, manifest, signature }))
}

/// The text of `path`, `None` when it does not exist.
fn read_optional(path: &Path) -> Result<Option<String>, ScoutPackageError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ScoutPackageError::Io { path: path.to_path_buf(), source }),
    }
}

/// Lowercase hex SHA-256 of a file's contents (streamed, not loaded whole).
pub fn sha256_file(path: &Path) -> Result<String, ScoutPackageError> {
    let io_error = |source| ScoutPackageError::Io { path: path.to_path_buf(), source };
    let mut file = File::open(path).map_err(io_error)?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher).map_err(io_error)?;
    Ok(hex::encode(hasher.finalize()))
}
