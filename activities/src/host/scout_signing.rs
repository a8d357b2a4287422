//! The operator's side of signed Scout packages: an ed25519 key pair, and `upgrade.manifest` +
//! `upgrade.sig` written beside each package's `metadata.toml`.
//!
//! Owns the key files (`scout-signing.key`: base64 of the 32-byte secret seed, mode 0600;
//! `scout-signing.pub`: base64 of the 32-byte public key, the file Scout trusts), building a
//! package's manifest (`hostfw_model::ScoutManifest`) from its files and what the signer states
//! it is for ([`SignFor`]: the firmware version it installs, an optional expiry, artifacts), and
//! signing. The vendor, model and component are the package's directory names. Scout verifies
//! (`scout/src/signature.rs`); the worker only passes both files on in the task. Errors name the
//! file; the secret key never appears in one.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use ed25519_dalek::{Signer as _, SigningKey};
use hostfw_model::ScoutManifest;

use crate::host::scout_package::{
    normalize_segment, parse_metadata, sha256_file, ScoutPackageError, METADATA_FILE_NAME, SCRIPT_FILE_NAME,
};

/// File name of the private key `keygen` writes.
pub const PRIVATE_KEY_FILE: &str = "scout-signing.key";
/// File name of the public key `keygen` writes (give it to Scout: `--trusted-key`).
pub const PUBLIC_KEY_FILE: &str = "scout-signing.pub";
/// The manifest beside a package's metadata.
pub const MANIFEST_FILE_NAME: &str = "upgrade.manifest";
/// The signature beside a package's metadata.
pub const SIGNATURE_FILE_NAME: &str = "upgrade.sig";

/// Why keys or packages could not be handled.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    #[error("{path}: {problem}", path = path.display())]
    KeyFile { path: PathBuf, problem: String },
    #[error("refusing to overwrite {path}", path = path.display())]
    Exists { path: PathBuf },
    #[error("{path}", path = path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no Scout package here (no {SCRIPT_FILE_NAME}, and no <vendor>/<model>/<component>/{SCRIPT_FILE_NAME} below)", path = path.display())]
    NoPackages { path: PathBuf },
    #[error("{path}: a package directory must be <vendor>/<model>/<component>", path = path.display())]
    NotAPackagePath { path: PathBuf },
    #[error(
        "--version states what one package installs, but {count} were found under {path} ({}): sign each \
         package directory with its own --version",
        packages.join(", "),
        path = path.display(),
        count = packages.len()
    )]
    NeedsOnePackage { path: PathBuf, packages: Vec<String> },
    #[error("{path}: {source}", path = path.display())]
    Manifest {
        path: PathBuf,
        #[source]
        source: hostfw_model::ManifestError,
    },
    #[error(transparent)]
    Package(#[from] ScoutPackageError),
    #[error("cannot draw random bytes: {0}")]
    Random(String),
}

/// Writes a new key pair into `dir` (created if needed): the private key with mode 0600 and the
/// public key; existing files are never replaced. Returns (private, public) paths.
pub fn keygen(dir: &Path) -> Result<(PathBuf, PathBuf), SigningError> {
    std::fs::create_dir_all(dir).map_err(|source| SigningError::Io { path: dir.to_path_buf(), source })?;
    let (private, public) = (dir.join(PRIVATE_KEY_FILE), dir.join(PUBLIC_KEY_FILE));
    for path in [&private, &public] {
        if path.exists() {
            return Err(SigningError::Exists { path: path.clone() });
        }
    }
    let mut seed = [0u8; 32];
    getrandom::getrandom(&mut seed).map_err(|e| SigningError::Random(e.to_string()))?;
    let key = SigningKey::from_bytes(&seed);
    write_new(&private, &b64(&seed), 0o600)?;
    write_new(&public, &b64(key.verifying_key().as_bytes()), 0o644)?;
    Ok((private, public))
}

/// Reads a private key file written by [`keygen`].
pub fn load_signing_key(path: &Path) -> Result<SigningKey, SigningError> {
    let text = std::fs::read_to_string(path).map_err(|source| SigningError::Io { path: path.to_path_buf(), source })?;
    let bad = |problem: &str| SigningError::KeyFile { path: path.to_path_buf(), problem: problem.to_string() };
    let raw = base64::engine::general_purpose::STANDARD.decode(text.trim()).map_err(|_| bad("not base64"))?;
    let seed: [u8; 32] = raw.as_slice().try_into().map_err(|_| bad("not an ed25519 private key (32 bytes)"))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// What the signer states a package is for, besides its vendor, model and component (its
/// directory names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignFor {
    /// The firmware version the package installs (the catalog's target version): Scout runs the
    /// package only for a task of exactly this target version.
    pub version: String,
    /// Unix milliseconds after which Scout refuses the package (`hostfw_model::parse_not_after`
    /// reads the operator's RFC 3339 time or date); `None`: no expiry.
    pub not_after_ms: Option<i64>,
    /// Files whose name and SHA-256 the task must then carry.
    pub artifacts: Vec<PathBuf>,
}

/// Signs the package at `path`: a directory holding `upgrade.sh`, or a scripts root
/// (`<vendor>/<model>/<component>/upgrade.sh` below it) holding exactly one package, since a
/// version is what one package installs. Returns the signature file written.
pub fn sign(key: &SigningKey, path: &Path, sign_for: &SignFor) -> Result<PathBuf, SigningError> {
    let mut packages = packages_at(path)?;
    if packages.len() != 1 {
        let packages = packages.into_iter().map(|(_, name)| name).collect();
        return Err(SigningError::NeedsOnePackage { path: path.to_path_buf(), packages });
    }
    let (dir, package) = packages.remove(0);
    let mut listed = Vec::new();
    for artifact in &sign_for.artifacts {
        let name = artifact
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| SigningError::NotAPackagePath { path: artifact.clone() })?;
        listed.push((name, sha256_file(artifact)?));
    }
    let manifest_path = dir.join(MANIFEST_FILE_NAME);
    let manifest = manifest_of(&dir, &package, sign_for, &listed)?.render();
    // Never sign what Scout would refuse to read (an empty or padded version, say).
    ScoutManifest::parse(&manifest).map_err(|source| SigningError::Manifest { path: manifest_path.clone(), source })?;
    let signature = key.sign(manifest.as_bytes());
    let sig_path = dir.join(SIGNATURE_FILE_NAME);
    std::fs::write(&manifest_path, &manifest).map_err(|source| SigningError::Io { path: manifest_path, source })?;
    std::fs::write(&sig_path, format!("{}\n", b64(&signature.to_bytes())))
        .map_err(|source| SigningError::Io { path: sig_path.clone(), source })?;
    Ok(sig_path)
}

/// The manifest of the package in `dir` named `package` (`vendor/model/component`), for what
/// `sign_for` states, listing `artifacts` (`(file name, sha256)`).
pub fn manifest_of(
    dir: &Path,
    package: &str,
    sign_for: &SignFor,
    artifacts: &[(String, String)],
) -> Result<ScoutManifest, SigningError> {
    let metadata_path = dir.join(METADATA_FILE_NAME);
    let text = std::fs::read_to_string(&metadata_path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            SigningError::Package(ScoutPackageError::MissingMetadata {
                script: dir.join(SCRIPT_FILE_NAME),
                expected: metadata_path.clone(),
            })
        } else {
            SigningError::Io { path: metadata_path.clone(), source }
        }
    })?;
    let metadata = parse_metadata(&text, &metadata_path)?;
    let mut artifacts = artifacts.to_vec();
    artifacts.sort();
    Ok(ScoutManifest {
        package: package.to_string(),
        version: sign_for.version.clone(),
        not_after_ms: sign_for.not_after_ms,
        script_sha256: sha256_file(&dir.join(SCRIPT_FILE_NAME))?,
        execution_timeout_seconds: metadata.execution_timeout_seconds.get(),
        artifact_download_timeout_seconds: metadata.artifact_download_timeout_seconds.get(),
        artifacts,
    })
}

/// `(package dir, "vendor/model/component")` of the package at `path` or of every package below
/// it (sorted); `NoPackages` when there is none.
pub fn packages_at(path: &Path) -> Result<Vec<(PathBuf, String)>, SigningError> {
    if path.join(SCRIPT_FILE_NAME).is_file() {
        let names: Vec<String> = path
            .components()
            .rev()
            .take(3)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if names.len() != 3 || names.iter().any(|n| normalize_segment(n).ok().as_deref() != Some(n.as_str())) {
            return Err(SigningError::NotAPackagePath { path: path.to_path_buf() });
        }
        return Ok(vec![(path.to_path_buf(), names.join("/"))]);
    }
    let mut found = Vec::new();
    for vendor in subdirs(path)? {
        for model in subdirs(&vendor)? {
            for component in subdirs(&model)? {
                if component.join(SCRIPT_FILE_NAME).is_file() {
                    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    found.push((component.clone(), format!("{}/{}/{}", name(&vendor), name(&model), name(&component))));
                }
            }
        }
    }
    if found.is_empty() {
        return Err(SigningError::NoPackages { path: path.to_path_buf() });
    }
    found.sort();
    Ok(found)
}

fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, SigningError> {
    let entries = std::fs::read_dir(dir).map_err(|source| SigningError::Io { path: dir.to_path_buf(), source })?;
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    Ok(dirs)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn write_new(path: &Path, text: &str, mode: u32) -> Result<(), SigningError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = opts.open(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            SigningError::Exists { path: path.to_path_buf() }
        } else {
            SigningError::Io { path: path.to_path_buf(), source }
        }
    })?;
    file.write_all(format!("{text}\n").as_bytes())
        .map_err(|source| SigningError::Io { path: path.to_path_buf(), source })
}
