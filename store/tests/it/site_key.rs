//! The site key file: generated with mode 0600 and never overwritten (by the store and by the test
//! fixtures), read back to the same key id, and bad files refused with an error naming the file
//! and never the key.

use std::os::unix::fs::PermissionsExt as _;

use hostfw_store::{SiteKey, SiteKeyError};

#[test]
fn generated_key_file_is_private_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("site.key");
    let key = SiteKey::generate().unwrap();
    key.write_new_file(&file).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let read = SiteKey::from_file(&file).unwrap();
    assert_eq!(read.id(), key.id());
    assert_eq!(key.id().len(), 8);
    assert_ne!(SiteKey::generate().unwrap().id(), key.id());

    let before = std::fs::read(&file).unwrap();
    let err = SiteKey::generate().unwrap().write_new_file(&file).expect_err("must not overwrite");
    assert!(matches!(err, SiteKeyError::Exists { .. }) && err.to_string().contains("site.key"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn bad_key_files_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.key");
    let err = SiteKey::from_file(&missing).expect_err("missing").to_string();
    assert!(err.contains("missing.key"), "{err}");

    let short = dir.path().join("short.key");
    std::fs::write(&short, "c2hvcnQ=\n").unwrap(); // "short": 5 bytes
    let err = SiteKey::from_file(&short).expect_err("short").to_string();
    assert!(err.contains("short.key") && err.contains("5 bytes") && err.contains("exactly 32"), "{err}");

    let junk = dir.path().join("junk.key");
    std::fs::write(&junk, "not base64 at all!").unwrap();
    let err = SiteKey::from_file(&junk).expect_err("junk").to_string();
    assert!(err.contains("junk.key") && err.contains("not base64"), "{err}");
}

#[test]
fn key_prints_as_its_id_only() {
    let key = SiteKey::from_bytes([0x41; 32]);
    let shown = format!("{key:?} {key}");
    assert!(shown.contains(key.id()), "{shown}");
    assert!(!shown.contains("AAAA") && !shown.contains("65, 65"), "key material in {shown}");
    assert_ne!(key.derive("a"), key.derive("b"));
}

/// The site key `hostfw-fixtures` writes for a test site (it may not depend on the store) is one
/// the store reads, private as a generated one, and another each time.
#[test]
fn a_fixtures_site_key_reads_as_a_site_key() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.key"), dir.path().join("b.key"));
    hostfw_fixtures::write_site_key(&a).unwrap();
    hostfw_fixtures::write_site_key(&b).unwrap();
    assert_eq!(std::fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o600);
    let (ka, kb) = (SiteKey::from_file(&a).unwrap(), SiteKey::from_file(&b).unwrap());
    assert_ne!(ka.id(), kb.id());
    assert!(hostfw_fixtures::write_site_key(&a).is_err(), "an existing key file is never replaced");
}
