//! Scout package signing: a key pair written once (private 0600, never overwritten), every
//! package of a scripts root signed with a canonical manifest that verifies with the public key,
//! artifacts bound for a single package, and the package lookup passing both files on.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use base64::Engine as _;
use ed25519_dalek::{Signature, VerifyingKey};
use hostfw_activities::host::scout_package::find_package;
use hostfw_activities::host::scout_signing::{self, SigningError};
use hostfw_model::ScoutManifest;

const METADATA: &str = "execution_timeout_seconds = 60\nartifact_download_timeout_seconds = 30\n";

fn package(root: &Path, rel: &str, script: &str) {
    let dir = root.join(rel);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("upgrade.sh"), script).unwrap();
    std::fs::write(dir.join("metadata.toml"), METADATA).unwrap();
}

fn public_key(dir: &Path) -> VerifyingKey {
    let text = std::fs::read_to_string(dir.join(scout_signing::PUBLIC_KEY_FILE)).unwrap();
    let raw = base64::engine::general_purpose::STANDARD.decode(text.trim()).unwrap();
    VerifyingKey::from_bytes(&raw.try_into().unwrap()).unwrap()
}

fn verifies(key: &VerifyingKey, package_dir: &Path) -> bool {
    let manifest = std::fs::read(package_dir.join("upgrade.manifest")).unwrap();
    let sig = std::fs::read_to_string(package_dir.join("upgrade.sig")).unwrap();
    let sig: [u8; 64] = base64::engine::general_purpose::STANDARD.decode(sig.trim()).unwrap().try_into().unwrap();
    key.verify_strict(&manifest, &Signature::from_bytes(&sig)).is_ok()
}

#[test]
fn keygen_writes_a_private_key_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let (private, public) = scout_signing::keygen(&dir.path().join("keys")).unwrap();
    assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(public.is_file());
    let before = std::fs::read(&private).unwrap();
    let err = scout_signing::keygen(&dir.path().join("keys")).expect_err("must not overwrite");
    assert!(matches!(err, SigningError::Exists { .. }) && err.to_string().contains("scout-signing"), "{err}");
    assert_eq!(std::fs::read(&private).unwrap(), before);
}

#[test]
fn every_package_of_a_root_is_signed_and_passed_on() {
    let dir = tempfile::tempdir().unwrap();
    let (private, _) = scout_signing::keygen(&dir.path().join("keys")).unwrap();
    let key = scout_signing::load_signing_key(&private).unwrap();
    let root = dir.path().join("scripts");
    package(&root, "nvidia/dgx_h100/nic", "echo nic\n");
    package(&root, "dell/r760/bmc", "echo bmc\n");

    let written = scout_signing::sign(&key, &root, &[]).unwrap();
    assert_eq!(written.len(), 2);
    let public = public_key(&dir.path().join("keys"));
    let nic = root.join("nvidia/dgx_h100/nic");
    assert!(verifies(&public, &nic) && verifies(&public, &root.join("dell/r760/bmc")));

    let manifest = ScoutManifest::parse(&std::fs::read_to_string(nic.join("upgrade.manifest")).unwrap()).unwrap();
    assert_eq!(manifest.package, "nvidia/dgx_h100/nic");
    assert_eq!((manifest.execution_timeout_seconds, manifest.artifact_download_timeout_seconds), (60, 30));

    let found = find_package(&root, "NVIDIA", "DGX H100", "nic").unwrap().unwrap();
    assert_eq!(found.script_sha256, manifest.script_sha256);
    assert_eq!(found.manifest.as_deref(), Some(manifest.render().as_str()));
    assert!(found.signature.is_some_and(|s| !s.ends_with('\n')));

    // A one-byte change after signing: the manifest no longer matches the script.
    std::fs::write(nic.join("upgrade.sh"), "echo niC\n").unwrap();
    let changed = find_package(&root, "NVIDIA", "DGX H100", "nic").unwrap().unwrap();
    assert_ne!(changed.script_sha256, manifest.script_sha256);
}

#[test]
fn artifacts_are_signed_for_one_package_only() {
    let dir = tempfile::tempdir().unwrap();
    let (private, _) = scout_signing::keygen(&dir.path().join("keys")).unwrap();
    let key = scout_signing::load_signing_key(&private).unwrap();
    let root = dir.path().join("scripts");
    package(&root, "nvidia/dgx_h100/nic", "echo nic\n");
    package(&root, "dell/r760/bmc", "echo bmc\n");
    let image = dir.path().join("nic.bin");
    std::fs::write(&image, b"IMAGE").unwrap();

    let err = scout_signing::sign(&key, &root, std::slice::from_ref(&image)).expect_err("two packages");
    assert!(err.to_string().contains("2 were found"), "{err}");

    let nic = root.join("nvidia/dgx_h100/nic");
    scout_signing::sign(&key, &nic, &[image]).unwrap();
    let manifest = ScoutManifest::parse(&std::fs::read_to_string(nic.join("upgrade.manifest")).unwrap()).unwrap();
    assert_eq!(manifest.artifacts.len(), 1);
    assert_eq!(manifest.artifacts[0].0, "nic.bin");

    let err = scout_signing::sign(&key, &dir.path().join("keys"), &[]).expect_err("no packages");
    assert!(matches!(err, SigningError::NoPackages { .. }), "{err}");
}
