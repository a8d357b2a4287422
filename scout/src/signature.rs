//! Checking a task's package signature before anything is downloaded or run.
//!
//! Owns the trust decision: with a trusted key (`--trusted-key`, the operator's
//! `scout-signing.pub`) a task must carry a manifest and an ed25519 signature over it that
//! verifies with that key, and the task must match the manifest: the same script digest, the
//! same timeouts, a package of the task's component, and (when the manifest lists artifacts)
//! exactly those artifacts. Without a key every task is refused unless `allow_unsigned` is set
//! (a development setting; Scout logs a WARN at start). Reading the key file lives here too.

use std::path::Path;

use base64::Engine as _;
use ed25519_dalek::{Signature, VerifyingKey};
use hostfw_model::ScoutManifest;
use hostfw_workflows::scout::ScoutTask;
use sha2::{Digest, Sha256};

use crate::error::TaskFailure;

/// The key Scout trusts, with a short id for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedKey {
    key: VerifyingKey,
    id: String,
}

impl TrustedKey {
    /// A key from its 32 public bytes.
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<TrustedKey, String> {
        let key = VerifyingKey::from_bytes(bytes).map_err(|e| format!("not an ed25519 public key: {e}"))?;
        Ok(TrustedKey { key, id: hex::encode(&Sha256::digest(bytes)[..4]) })
    }

    /// Reads a public key file (base64 of 32 bytes, as `hostfw scout-package keygen` writes it).
    pub fn from_file(path: &Path) -> Result<TrustedKey, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| format!("{}: not base64", path.display()))?;
        let bytes: [u8; 32] = raw
            .as_slice()
            .try_into()
            .map_err(|_| format!("{}: not an ed25519 public key (32 bytes)", path.display()))?;
        TrustedKey::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// 8 hex digits of a hash of the key.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Refuses `task` unless its package is signed by `trusted` and matches its manifest.
pub(crate) fn check(trusted: Option<&TrustedKey>, allow_unsigned: bool, task: &ScoutTask) -> Result<(), TaskFailure> {
    let Some(key) = trusted else {
        if allow_unsigned {
            return Ok(());
        }
        return Err(refuse(
            task,
            None,
            "this Scout has no trusted signing key (--trusted-key) and does not allow unsigned packages".into(),
        ));
    };
    let (Some(manifest_text), Some(signature)) = (&task.manifest, &task.signature) else {
        return Err(refuse(task, None, "the package is not signed (no upgrade.manifest / upgrade.sig)".into()));
    };
    let manifest = ScoutManifest::parse(manifest_text).ok();
    let package = manifest.as_ref().map(|m| m.package.as_str());
    let sig_bytes = base64::engine::general_purpose::STANDARD
        .decode(signature.trim())
        .ok()
        .and_then(|b| <[u8; 64]>::try_from(b.as_slice()).ok())
        .ok_or_else(|| refuse(task, package, "the signature is malformed (expected base64 of 64 bytes)".into()))?;
    key.key
        .verify_strict(manifest_text.as_bytes(), &Signature::from_bytes(&sig_bytes))
        .map_err(|_| refuse(task, package, format!("the signature does not verify with trusted key {}", key.id)))?;
    let manifest = manifest.ok_or_else(|| refuse(task, None, "the signed manifest is malformed".into()))?;
    let package = Some(manifest.package.as_str());
    if !task.script.sha256.eq_ignore_ascii_case(&manifest.script_sha256) {
        return Err(refuse(
            task,
            package,
            format!("script digest {} differs from the signed {}", task.script.sha256, manifest.script_sha256),
        ));
    }
    if task.execution_timeout_secs != manifest.execution_timeout_seconds
        || task.artifact_download_timeout_secs != manifest.artifact_download_timeout_seconds
    {
        return Err(refuse(task, package, "the task's timeouts differ from the signed metadata".into()));
    }
    if manifest.component() != task.component.as_str() {
        return Err(refuse(task, package, format!("the package is not for component {}", task.component.as_str())));
    }
    if !manifest.artifacts.is_empty() {
        let mut given: Vec<(String, String)> =
            task.artifacts.iter().map(|a| (a.file_name.clone(), a.sha256.to_ascii_lowercase())).collect();
        given.sort();
        if given != manifest.artifacts {
            return Err(refuse(task, package, "the task's artifacts differ from the signed ones".into()));
        }
    }
    Ok(())
}

fn refuse(task: &ScoutTask, package: Option<&str>, problem: String) -> TaskFailure {
    let package = package.map(str::to_string).unwrap_or_else(|| package_from_url(&task.script.url));
    TaskFailure::Unsigned { package, problem }
}

/// `<vendor>/<model>/<component>` from a script URL `.../scout-scripts/<v>/<m>/<c>/upgrade.sh`.
fn package_from_url(url: &str) -> String {
    url.split_once("/scout-scripts/")
        .map(|(_, rest)| rest.trim_end_matches("/upgrade.sh").to_string())
        .unwrap_or_else(|| url.to_string())
}
