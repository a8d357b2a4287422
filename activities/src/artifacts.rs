//! Resolving catalog artifact paths to files on the worker and to URLs a BMC can fetch.
//!
//! Relative paths are resolved against the firmware directory, which is also the only directory
//! the worker serves over HTTP. A path that resolves to no file, or to an empty file, is an error:
//! hostfw never uploads an empty image (NICo uploads /dev/null there).

use std::path::{Path, PathBuf};

use temporalio_common::ActivityError;

use crate::error;
use crate::ActivitySettings;

/// URL path prefix under which the worker serves the firmware directory.
pub const ARTIFACT_URL_PREFIX: &str = "/artifacts/";
/// URL path prefix under which the worker serves the packaged Scout scripts.
pub const SCOUT_URL_PREFIX: &str = "/scout-scripts/";

/// A resolved artifact: its file, and the URL BMCs fetch it from when it lies under the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedArtifact {
    pub path: PathBuf,
    pub url: Option<String>,
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
    let url = path.strip_prefix(&settings.artifact_root).ok().map(|rel| {
        let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        format!("{}{}{}", settings.artifact_base_url.trim_end_matches('/'), ARTIFACT_URL_PREFIX, rel.join("/"))
    });
    Ok(ResolvedArtifact { path, url })
}
