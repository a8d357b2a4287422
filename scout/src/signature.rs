//! Checking a task's package signature before anything is downloaded or run.
//!
//! Owns the trust decision: with a trusted key (`--trusted-key`, the operator's
//! `scout-signing.pub`) a task must carry a manifest and an ed25519 signature over it that
//! verifies with that key, and the task must match what the manifest binds: the vendor, model
//! and component the package was signed for, the firmware version it installs (the task's
//! target version), an expiry not yet past by Scout's clock, the same script digest, the same
//! timeouts and (when the manifest lists artifacts) exactly those artifacts. A manifest of an
//! older hostfw (which names no version) and a task of an older worker (which names no vendor or
//! model) are refused, saying what to do. Without a key every task is refused unless
//! `allow_unsigned` is set (a development setting; Scout logs a WARN at start). Reading the key
//! file lives here too.

use std::path::Path;

use base64::Engine as _;
use ed25519_dalek::{Signature, VerifyingKey};
use hostfw_model::{rfc3339_utc, ManifestError, ScoutManifest};
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

/// Refuses `task` unless its package is signed by `trusted` and matches its manifest; `now_ms`
/// is Scout's clock (unix milliseconds), for the manifest's `not_after`.
pub(crate) fn check(
    trusted: Option<&TrustedKey>,
    allow_unsigned: bool,
    task: &ScoutTask,
    now_ms: i64,
) -> Result<(), TaskFailure> {
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
    let manifest = ScoutManifest::parse(manifest_text);
    let package = manifest.as_ref().ok().map(|m| m.package.as_str());
    let sig_bytes = base64::engine::general_purpose::STANDARD
        .decode(signature.trim())
        .ok()
        .and_then(|b| <[u8; 64]>::try_from(b.as_slice()).ok())
        .ok_or_else(|| refuse(task, package, "the signature is malformed (expected base64 of 64 bytes)".into()))?;
    key.key
        .verify_strict(manifest_text.as_bytes(), &Signature::from_bytes(&sig_bytes))
        .map_err(|_| refuse(task, package, format!("the signature does not verify with trusted key {}", key.id)))?;
    let manifest = match manifest {
        Ok(manifest) => manifest,
        Err(ManifestError::OlderFormat { found }) => {
            let package = task_package(task);
            return Err(refuse(
                task,
                None,
                format!(
                    "it was signed by an older hostfw (`{found}` names no firmware version): \
                     re-sign it with `hostfw scout-package sign --key scout-signing.key --version {} \
                     <scout_scripts_directory>/{package}`",
                    task.target_version
                ),
            ));
        }
        Err(e) => return Err(refuse(task, None, format!("the signed manifest is malformed ({e})"))),
    };
    let package = Some(manifest.package.as_str());
    check_binding(task, &manifest, now_ms).map_err(|problem| refuse(task, package, problem))?;
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

/// What the package is for against what the task is: vendor/model, component, version, expiry.
fn check_binding(task: &ScoutTask, manifest: &ScoutManifest, now_ms: i64) -> Result<(), String> {
    if task.vendor.is_empty() || task.model.is_empty() {
        return Err("the task names no vendor and model (it came from an hostfw worker older than this Scout): \
                    upgrade the worker"
            .into());
    }
    if (manifest.vendor(), manifest.model()) != (task.vendor.as_str(), task.model.as_str()) {
        return Err(format!(
            "it is signed for vendor/model {}/{}, but the task is for {}/{}",
            manifest.vendor(),
            manifest.model(),
            task.vendor,
            task.model
        ));
    }
    if manifest.component() != task.component.as_str() {
        return Err(format!(
            "it is signed for component {}, not for component {}",
            manifest.component(),
            task.component.as_str()
        ));
    }
    if manifest.version != task.target_version {
        return Err(format!(
            "it is signed for firmware version {}, but the task's target version is {}",
            manifest.version, task.target_version
        ));
    }
    if let Some(not_after) = manifest.not_after_ms.filter(|t| now_ms > *t) {
        return Err(format!(
            "its signature expired at {} (not_after; Scout's clock says {})",
            rfc3339_utc(not_after),
            rfc3339_utc(now_ms)
        ));
    }
    Ok(())
}

fn refuse(task: &ScoutTask, package: Option<&str>, problem: String) -> TaskFailure {
    let package = package.map(str::to_string).unwrap_or_else(|| task_package(task));
    TaskFailure::Unsigned { package, problem }
}

/// The package directory the task came from: `<vendor>/<model>/<component>` as the task names
/// them, else (a task of an older worker) as its script URL does.
fn task_package(task: &ScoutTask) -> String {
    if task.vendor.is_empty() || task.model.is_empty() {
        return package_from_url(&task.script.url);
    }
    format!("{}/{}/{}", task.vendor, task.model, task.component.as_str())
}

/// `<vendor>/<model>/<component>` from a script URL `.../scout-scripts/<v>/<m>/<c>/upgrade.sh`.
fn package_from_url(url: &str) -> String {
    url.split_once("/scout-scripts/")
        .map(|(_, rest)| rest.trim_end_matches("/upgrade.sh").to_string())
        .unwrap_or_else(|| url.to_string())
}
