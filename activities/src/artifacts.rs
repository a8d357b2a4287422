//! Resolving catalog artifact paths to files on the worker and to URLs a BMC can fetch.
//!
//! Relative paths are resolved against the firmware directory, which is also the only directory
//! the worker serves over HTTP (under signed, expiring URLs: `artifact_url`). A path that resolves to no file, or to an empty file, is an error:
//! hostfw never uploads an empty image (NICo uploads /dev/null there).

use std::path::{Path, PathBuf};

use hostfw_model::FirmwareEntry;
use temporalio_common::ActivityError;

use crate::artifact_url::ArtifactUrls;
use crate::error;
use crate::ActivitySettings;

/// A resolved artifact: its file, and its `/`-separated path under the firmware directory when it
/// lies there (so the artifact server can serve it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedArtifact {
    pub path: PathBuf,
    pub served_as: Option<String>,
}

impl ResolvedArtifact {
    /// A signed URL BMCs and Scout fetch the file from, when the artifact server serves it.
    pub fn url(&self, urls: &ArtifactUrls) -> Option<String> {
        self.served_as.as_deref().map(|rel| urls.artifact(rel))
    }
}

/// Why a catalog artifact cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("artifact {artifact}: {} cannot be read: {source}", path.display())]
    Unreadable { artifact: String, path: PathBuf, source: std::io::Error },
    #[error("artifact {artifact}: {} is not a file", path.display())]
    NotAFile { artifact: String, path: PathBuf },
    #[error("artifact {artifact}: {} is empty", path.display())]
    Empty { artifact: String, path: PathBuf },
    #[error("artifact {artifact}: {} has SHA-256 {actual}, but the catalog says {expected}", path.display())]
    DigestMismatch { artifact: String, path: PathBuf, expected: String, actual: String },
    /// The catalog names a file that is not under the firmware directory (an absolute path, `..`,
    /// or a symbolic link that leads out): the worker neither uploads nor runs it.
    #[error("artifact {artifact}: {} is not under the firmware directory {}: {reason}; artifacts and scripts must lie there", path.display(), root.display())]
    Outside { artifact: String, path: PathBuf, root: PathBuf, reason: String },
}

impl ArtifactError {
    /// As an activity failure: a missing file may appear (retried), the rest will not change.
    pub fn into_activity_error(self) -> ActivityError {
        match self {
            ArtifactError::Unreadable { .. } => error::not_found(self.to_string()),
            _ => error::bad_input(self.to_string()),
        }
    }
}

/// The file of `artifact` (catalog `filename` or `script`), under the firmware directory: an
/// absolute path, one that climbs out with `..` or one whose symbolic links lead out is refused
/// (`Outside`), so a catalog cannot make the worker upload or run any other file of its host. It
/// must be a non-empty regular file.
pub fn locate(settings: &ActivitySettings, artifact: &str) -> Result<PathBuf, ArtifactError> {
    let given = Path::new(artifact);
    let root = &settings.artifact_root;
    let path = root.join(given);
    let outside = |path: PathBuf, reason: String| ArtifactError::Outside {
        artifact: artifact.to_string(),
        path,
        root: root.clone(),
        reason,
    };
    if given.is_absolute() {
        return Err(outside(given.to_path_buf(), "it is an absolute path".into()));
    }
    if given.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Err(outside(path, "it climbs out with `..`".into()));
    }
    let artifact = artifact.to_string();
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(source) => return Err(ArtifactError::Unreadable { artifact, path, source }),
    };
    // Symbolic links may lead anywhere: the file they reach must still be under the directory.
    if let (Ok(real), Ok(real_root)) = (path.canonicalize(), root.canonicalize()) {
        if !real.starts_with(&real_root) {
            return Err(outside(path, format!("it leads to {}", real.display())));
        }
    }
    if !meta.is_file() {
        return Err(ArtifactError::NotAFile { artifact, path });
    }
    if meta.len() == 0 {
        return Err(ArtifactError::Empty { artifact, path });
    }
    Ok(path)
}

/// The SHA-256 of `path`, compared with `expected` when the catalog gives one.
pub fn digest(artifact: &str, path: &Path, expected: Option<&str>) -> Result<String, ArtifactError> {
    let actual = crate::host::scout_package::sha256_file(path).map_err(|e| ArtifactError::Unreadable {
        artifact: artifact.to_string(),
        path: path.to_path_buf(),
        source: std::io::Error::other(hostfw_model::error_chain(&e)),
    })?;
    match expected {
        Some(expected) if !expected.eq_ignore_ascii_case(&actual) => Err(ArtifactError::DigestMismatch {
            artifact: artifact.to_string(),
            path: path.to_path_buf(),
            expected: expected.to_string(),
            actual,
        }),
        _ => Ok(actual),
    }
}

/// One artifact of a catalog entry, found and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedArtifact {
    /// As the catalog names it.
    pub artifact: String,
    pub path: PathBuf,
    pub sha256: String,
}

/// Every file `entry` installs from (its `filenames`/`filename`, then its Core-local `script`):
/// each must exist, be non-empty, and match the catalog's `sha256` where one is given. The
/// first problem is returned.
pub fn check_entry(settings: &ActivitySettings, entry: &FirmwareEntry) -> Result<Vec<CheckedArtifact>, ArtifactError> {
    let mut checked = Vec::new();
    for (i, artifact) in entry.artifacts().into_iter().enumerate() {
        let path = locate(settings, &artifact)?;
        let sha256 = digest(&artifact, &path, entry.sha256.get(i).map(String::as_str))?;
        checked.push(CheckedArtifact { artifact, path, sha256 });
    }
    if let Some(script) = &entry.script {
        let path = locate(settings, script)?;
        let sha256 = digest(script, &path, None)?;
        checked.push(CheckedArtifact { artifact: script.clone(), path, sha256 });
    }
    Ok(checked)
}

/// Resolve `artifact` (catalog `filename`) to an existing, non-empty file.
pub fn resolve(settings: &ActivitySettings, artifact: &str) -> Result<ResolvedArtifact, ActivityError> {
    let path = locate(settings, artifact).map_err(ArtifactError::into_activity_error)?;
    let served_as = path.strip_prefix(&settings.artifact_root).ok().map(|rel| {
        let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        rel.join("/")
    });
    Ok(ResolvedArtifact { path, served_as })
}
