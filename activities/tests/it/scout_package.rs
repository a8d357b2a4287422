//! Finding and validating packaged Scout scripts: segment normalisation, lookup, metadata rules,
//! digests.

use std::fs;
use std::path::Path;

use hostfw_activities::scout_package::{
    find_package, normalize_segment, parse_metadata, sha256_file, ScoutPackageError,
};

const GOOD_METADATA: &str = "execution_timeout_seconds = 600\nartifact_download_timeout_seconds = 120\n";

fn write_package(root: &Path, rel: &str, script: &str, metadata: Option<&str>) {
    let dir = root.join(rel);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("upgrade.sh"), script).unwrap();
    if let Some(m) = metadata {
        fs::write(dir.join("metadata.toml"), m).unwrap();
    }
}

#[test]
fn normalizes_segments() {
    assert_eq!(normalize_segment("NVIDIA").unwrap(), "nvidia");
    assert_eq!(normalize_segment("DGX H100").unwrap(), "dgx_h100");
    assert_eq!(normalize_segment("SYS-821GE-TNHR").unwrap(), "sys-821ge-tnhr");
    assert_eq!(normalize_segment("a \t b").unwrap(), "a_b");
    assert_eq!(normalize_segment(" PowerEdge R750 ").unwrap(), "poweredge_r750");
}

#[test]
fn rejects_bad_segments() {
    match normalize_segment("a/b") {
        Err(ScoutPackageError::BadCharacter { segment, character }) => {
            assert_eq!(segment, "a/b");
            assert_eq!(character, '/');
        }
        other => panic!("expected BadCharacter, got {other:?}"),
    }
    assert!(matches!(normalize_segment(".."), Err(ScoutPackageError::BadCharacter { character: '.', .. })));
    assert!(matches!(normalize_segment(""), Err(ScoutPackageError::EmptySegment { .. })));
    assert!(matches!(normalize_segment("   "), Err(ScoutPackageError::EmptySegment { .. })));
    let message = normalize_segment("Dell Inc.").unwrap_err().to_string();
    assert!(message.contains("Dell Inc.") && message.contains("'.'"), "{message}");
}

#[test]
fn finds_a_package_with_normalized_path_and_digest() {
    let root = tempfile::tempdir().unwrap();
    write_package(root.path(), "nvidia/dgx_h100/bmc", "abc", Some(GOOD_METADATA));
    let package = find_package(root.path(), "NVIDIA", "DGX H100", "bmc").unwrap().expect("package");
    assert_eq!(package.relative_path, "nvidia/dgx_h100/bmc/upgrade.sh");
    assert_eq!(package.script_path, root.path().join("nvidia/dgx_h100/bmc/upgrade.sh"));
    // SHA-256("abc"), FIPS 180-2 test vector.
    assert_eq!(package.script_sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_eq!(package.metadata.execution_timeout_seconds.get(), 600);
    assert_eq!(package.metadata.artifact_download_timeout_seconds.get(), 120);
}

#[test]
fn no_package_is_none() {
    let root = tempfile::tempdir().unwrap();
    write_package(root.path(), "nvidia/dgx_h100/bmc", "abc", Some(GOOD_METADATA));
    assert!(find_package(root.path(), "NVIDIA", "DGX H100", "uefi").unwrap().is_none());
    assert!(find_package(root.path(), "Dell", "R750", "bmc").unwrap().is_none());
    assert!(find_package(&root.path().join("missing"), "NVIDIA", "DGX H100", "bmc").unwrap().is_none());
}

#[test]
fn script_without_metadata_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    write_package(root.path(), "nvidia/dgx_h100/bmc", "abc", None);
    match find_package(root.path(), "nvidia", "dgx_h100", "bmc") {
        Err(ScoutPackageError::MissingMetadata { expected, .. }) => {
            assert_eq!(expected, root.path().join("nvidia/dgx_h100/bmc/metadata.toml"));
        }
        other => panic!("expected MissingMetadata, got {other:?}"),
    }
}

#[test]
fn bad_metadata_in_a_package_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    write_package(root.path(), "nvidia/dgx_h100/bmc", "abc", Some("execution_timeout_seconds = 0\n"));
    let err = find_package(root.path(), "nvidia", "dgx_h100", "bmc").unwrap_err();
    assert!(matches!(err, ScoutPackageError::MetadataKey { .. }), "{err:?}");
}

#[test]
fn unknown_key_is_named() {
    let origin = Path::new("/s/nvidia/x/bmc/metadata.toml");
    let text = format!("{GOOD_METADATA}retries = 3\n");
    match parse_metadata(&text, origin) {
        Err(ScoutPackageError::MetadataKey { path, key, .. }) => {
            assert_eq!(path, origin);
            assert_eq!(key, "retries");
        }
        other => panic!("expected MetadataKey, got {other:?}"),
    }
}

#[test]
fn zero_negative_missing_and_mistyped_timeouts_are_named() {
    let origin = Path::new("metadata.toml");
    let cases = [
        ("execution_timeout_seconds = 0\nartifact_download_timeout_seconds = 1\n", "execution_timeout_seconds"),
        (
            "execution_timeout_seconds = 1\nartifact_download_timeout_seconds = -5\n",
            "artifact_download_timeout_seconds",
        ),
        ("execution_timeout_seconds = 1\n", "artifact_download_timeout_seconds"),
        ("execution_timeout_seconds = \"10\"\nartifact_download_timeout_seconds = 1\n", "execution_timeout_seconds"),
    ];
    for (text, expected_key) in cases {
        match parse_metadata(text, origin) {
            Err(err @ ScoutPackageError::MetadataKey { .. }) => {
                let message = err.to_string();
                assert!(message.starts_with("metadata.toml: "), "{message}");
                let ScoutPackageError::MetadataKey { key, .. } = err else { unreachable!() };
                assert_eq!(key, expected_key, "for {text:?}");
            }
            other => panic!("expected MetadataKey for {text:?}, got {other:?}"),
        }
    }
}

#[test]
fn invalid_toml_names_the_file_and_the_line() {
    let err = parse_metadata("execution_timeout_seconds = = 1", Path::new("/p/metadata.toml")).unwrap_err();
    assert!(matches!(err, ScoutPackageError::MetadataSyntax { .. }), "{err:?}");
    assert!(err.to_string().starts_with("/p/metadata.toml: "), "{err}");
    let err = parse_metadata("# a comment\nexecution_timeout_seconds = 1\nx = = 2\n", Path::new("m.toml")).unwrap_err();
    assert!(err.to_string().contains("line 3: "), "{err}");
}

#[test]
fn good_metadata_parses() {
    let m = parse_metadata(GOOD_METADATA, Path::new("metadata.toml")).unwrap();
    assert_eq!(m.execution_timeout_seconds.get(), 600);
    assert_eq!(m.artifact_download_timeout_seconds.get(), 120);
}

#[test]
fn sha256_of_files() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    fs::write(&empty, b"").unwrap();
    assert_eq!(sha256_file(&empty).unwrap(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    let big = dir.path().join("big");
    fs::write(&big, vec![b'a'; 1_000_000]).unwrap();
    // SHA-256 of one million 'a's (FIPS 180-2 test vector).
    assert_eq!(sha256_file(&big).unwrap(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    assert!(matches!(sha256_file(&dir.path().join("nope")), Err(ScoutPackageError::Io { .. })));
}
