//! Scout package signing: a key pair written once (private 0600, never overwritten), one package
//! signed for the version it installs (and an expiry) with a canonical manifest that verifies with
//! the public key, a scripts root signed only when it holds one package, artifacts bound, and the
//! package lookup passing both files on with the normalised vendor and model.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use base64::Engine as _;
use ed25519_dalek::{Signature, VerifyingKey};
use hostfw_activities::host::scout_package::find_package;
use hostfw_activities::host::scout_signing::{self, SignFor, SigningError};
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

fn for_version(version: &str) -> SignFor {
    SignFor { version: version.to_string(), ..SignFor::default() }
}

#[test]
fn a_package_is_signed_for_its_version_and_passed_on() {
    let dir = tempfile::tempdir().unwrap();
    let (private, _) = scout_signing::keygen(&dir.path().join("keys")).unwrap();
    let key = scout_signing::load_signing_key(&private).unwrap();
    let root = dir.path().join("scripts");
    package(&root, "nvidia/dgx_h100/nic", "echo nic\n");
    let nic = root.join("nvidia/dgx_h100/nic");

    // A root holding one package signs that package.
    let sign_for = SignFor { not_after_ms: Some(32_503_680_000_000), ..for_version("28.43.1014") };
    let written = scout_signing::sign(&key, &root, &sign_for).unwrap();
    assert_eq!(written, nic.join("upgrade.sig"));
    let public = public_key(&dir.path().join("keys"));
    assert!(verifies(&public, &nic));

    let manifest = ScoutManifest::parse(&std::fs::read_to_string(nic.join("upgrade.manifest")).unwrap()).unwrap();
    assert_eq!(manifest.package, "nvidia/dgx_h100/nic");
    assert_eq!((manifest.version.as_str(), manifest.not_after_ms), ("28.43.1014", Some(32_503_680_000_000)));
    assert_eq!((manifest.execution_timeout_seconds, manifest.artifact_download_timeout_seconds), (60, 30));

    let found = find_package(&root, "NVIDIA", "DGX H100", "nic").unwrap().unwrap();
    assert_eq!((found.vendor.as_str(), found.model.as_str()), ("nvidia", "dgx_h100"));
    assert_eq!(found.script_sha256, manifest.script_sha256);
    assert_eq!(found.manifest.as_deref(), Some(manifest.render().as_str()));
    assert!(found.signature.is_some_and(|s| !s.ends_with('\n')));

    // A one-byte change after signing: the manifest no longer matches the script.
    std::fs::write(nic.join("upgrade.sh"), "echo niC\n").unwrap();
    let changed = find_package(&root, "NVIDIA", "DGX H100", "nic").unwrap().unwrap();
    assert_ne!(changed.script_sha256, manifest.script_sha256);
}

#[test]
fn a_root_of_several_packages_or_an_unreadable_version_is_not_signed() {
    let dir = tempfile::tempdir().unwrap();
    let (private, _) = scout_signing::keygen(&dir.path().join("keys")).unwrap();
    let key = scout_signing::load_signing_key(&private).unwrap();
    let root = dir.path().join("scripts");
    package(&root, "nvidia/dgx_h100/nic", "echo nic\n");
    package(&root, "dell/r760/bmc", "echo bmc\n");

    let err = scout_signing::sign(&key, &root, &for_version("1.0")).expect_err("two packages");
    assert!(matches!(err, SigningError::NeedsOnePackage { .. }), "{err}");
    assert!(err.to_string().contains("2 were found") && err.to_string().contains("dell/r760/bmc, nvidia/dgx_h100/nic"));
    let listed = scout_signing::packages_at(&root).unwrap();
    assert_eq!(
        listed.iter().map(|(_, name)| name.as_str()).collect::<Vec<_>>(),
        ["dell/r760/bmc", "nvidia/dgx_h100/nic"]
    );

    let nic = root.join("nvidia/dgx_h100/nic");
    for bad in ["", " 1.0", "1.0\nversion 2.0"] {
        let err = scout_signing::sign(&key, &nic, &for_version(bad)).expect_err("unreadable version");
        assert!(matches!(err, SigningError::Manifest { .. }), "{bad:?}: {err}");
    }
    assert!(!nic.join("upgrade.manifest").exists() && !nic.join("upgrade.sig").exists());
}

#[test]
fn artifacts_are_signed_with_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let (private, _) = scout_signing::keygen(&dir.path().join("keys")).unwrap();
    let key = scout_signing::load_signing_key(&private).unwrap();
    let root = dir.path().join("scripts");
    package(&root, "nvidia/dgx_h100/nic", "echo nic\n");
    let image = dir.path().join("nic.bin");
    std::fs::write(&image, b"IMAGE").unwrap();

    let nic = root.join("nvidia/dgx_h100/nic");
    scout_signing::sign(&key, &nic, &SignFor { artifacts: vec![image], ..for_version("28.43") }).unwrap();
    let manifest = ScoutManifest::parse(&std::fs::read_to_string(nic.join("upgrade.manifest")).unwrap()).unwrap();
    assert_eq!(manifest.artifacts.len(), 1);
    assert_eq!(manifest.artifacts[0].0, "nic.bin");

    let err = scout_signing::sign(&key, &dir.path().join("keys"), &for_version("1.0")).expect_err("no packages");
    assert!(matches!(err, SigningError::NoPackages { .. }), "{err}");
}
