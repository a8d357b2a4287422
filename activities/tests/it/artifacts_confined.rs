//! What a catalog can make the worker upload or run: only files under the firmware directory.
//! An absolute `filename`/`script`, one that climbs out with `..`, and a symbolic link inside the
//! directory that leads out are refused with `Outside` naming the artifact and the directory;
//! a plain file and a link that stays inside are found. Real files in a temporary directory.

use std::path::Path;

use hostfw_activities::artifacts::{locate, ArtifactError};
use hostfw_activities::ActivitySettings;
use hostfw_fixtures::SiteToml;
use hostfw_model::SiteConfig;

fn settings(dir: &Path) -> ActivitySettings {
    let text = SiteToml::named("s").firmware_global("firmware_directory", "firmware").render();
    let site = SiteConfig::from_toml_str(&text, &dir.join("site.toml")).expect("site config");
    ActivitySettings::from_site(&site)
}

#[test]
fn only_files_under_the_firmware_directory_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let firmware = dir.path().join("firmware");
    std::fs::create_dir_all(firmware.join("dell")).unwrap();
    std::fs::write(firmware.join("dell/bios.bin"), b"image").unwrap();
    std::fs::write(dir.path().join("secret.txt"), b"not an image").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), firmware.join("dell/leak.bin")).unwrap();
    std::os::unix::fs::symlink(firmware.join("dell/bios.bin"), firmware.join("dell/alias.bin")).unwrap();
    let s = settings(dir.path());

    assert_eq!(locate(&s, "dell/bios.bin").unwrap(), firmware.join("dell/bios.bin"));
    assert_eq!(locate(&s, "dell/alias.bin").unwrap(), firmware.join("dell/alias.bin"), "a link that stays inside");
    let secret = dir.path().join("secret.txt");
    for (name, why) in [
        (secret.to_str().unwrap(), "absolute path"),
        ("../secret.txt", "climbs out"),
        ("dell/../../secret.txt", "climbs out"),
        ("dell/leak.bin", "leads to"),
    ] {
        match locate(&s, name) {
            Err(e @ ArtifactError::Outside { .. }) => {
                let text = e.to_string();
                assert!(text.contains(why) && text.contains(name), "{name}: {text}");
                assert!(text.contains(&firmware.display().to_string()), "names the directory: {text}");
            }
            other => panic!("{name}: must be refused as outside the firmware directory, got {other:?}"),
        }
    }
}
