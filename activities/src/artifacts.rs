//! Resolving catalog artifact paths to files on the worker and to URLs a BMC can fetch.
//!
//! Relative paths are resolved against the firmware directory, which is also the only directory
//! the worker serves over HTTP (under signed, expiring URLs: `artifact_url`). A path that resolves to no file, or to an empty file, is an error:
//! hostfw never uploads an empty image (NICo uploads /dev/null there).

use std::path::{Path, PathBuf};

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

/// Resolve `artifact` (catalog `filename`) to an existing, non-empty file.
pub fn resolve(settings: &ActivitySettings, artifact: &str) -> Result<ResolvedArtifact, ActivityError> {
    let given = Path::new(artifact);
    let path = if given.is_absolute() { given.to_path_buf() } else { settings.artifact_root.join(given) };
    let meta = std::fs::metadata(&path)
        .map_err(|e| error::not_found(format!("artifact {artifact}: {} cannot be read: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(error::bad_input(format!("artifact {artifact}: {} is not a file", path.display())));
    }
    if meta.len() == 0 {
        return Err(error::bad_input(format!("artifact {artifact}: {} is empty", path.display())));
    }
    let served_as = path.strip_prefix(&settings.artifact_root).ok().map(|rel| {
        let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        rel.join("/")
    });
    Ok(ResolvedArtifact { path, served_as })
}
