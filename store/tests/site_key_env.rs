//! Where the site key comes from: `HOSTFW_SITE_KEY` (base64) before `HOSTFW_SITE_KEY_FILE` before
//! the configured file, and none at all without any of them. Alone in its own test binary because
//! it sets process environment variables.

use hostfw_store::{SiteKey, SITE_KEY_ENV, SITE_KEY_FILE_ENV};

#[test]
fn environment_wins_over_the_configured_file() {
    let dir = tempfile::tempdir().unwrap();
    let (configured, from_env_file) = (dir.path().join("configured.key"), dir.path().join("env.key"));
    let (a, b, c) = (SiteKey::from_bytes([1; 32]), SiteKey::from_bytes([2; 32]), SiteKey::from_bytes([3; 32]));
    a.write_new_file(&configured).unwrap();
    b.write_new_file(&from_env_file).unwrap();

    std::env::remove_var(SITE_KEY_ENV);
    std::env::remove_var(SITE_KEY_FILE_ENV);
    assert_eq!(SiteKey::from_env_or(None).unwrap(), None);
    assert_eq!(SiteKey::from_env_or(Some(&configured)).unwrap().unwrap().id(), a.id());

    std::env::set_var(SITE_KEY_FILE_ENV, &from_env_file);
    assert_eq!(SiteKey::from_env_or(Some(&configured)).unwrap().unwrap().id(), b.id());

    std::env::set_var(SITE_KEY_ENV, "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=");
    assert_eq!(SiteKey::from_env_or(Some(&configured)).unwrap().unwrap().id(), c.id());

    std::env::set_var(SITE_KEY_ENV, "c2hvcnQ=");
    let err = SiteKey::from_env_or(None).expect_err("5 bytes").to_string();
    assert!(err.contains("HOSTFW_SITE_KEY") && err.contains("5 bytes"), "{err}");
    assert!(!err.contains("c2hvcnQ"), "key material in {err}");
}
