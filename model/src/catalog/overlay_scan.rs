//! `OverlayScan`: what the firmware directory overlay holds, so a missing or mistyped
//! `firmware_global.firmware_directory` is said instead of silently dropping models.
//!
//! Owns the cheap look at the directory (which subdirectories hold a `metadata.toml`, which hold
//! files but none) and the warning text. It must not parse documents (see `overlay`) nor log:
//! callers (the worker's catalog source, `hostfw config check`) decide how to report.

use std::path::{Path, PathBuf};

use crate::catalog::overlay::METADATA_FILE;

/// The firmware directory as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlayScan {
    /// The directory looked at.
    pub dir: PathBuf,
    /// It exists and is a directory.
    pub exists: bool,
    /// Subdirectories holding a `metadata.toml` (each adds or amends a host model).
    pub models: usize,
    /// Subdirectories (names, sorted) that hold something but no `metadata.toml`: ignored by the overlay.
    pub ignored: Vec<String>,
}

impl OverlayScan {
    /// Looks at `dir`: dot-entries are skipped, as the overlay does.
    pub fn of(dir: &Path) -> OverlayScan {
        let mut scan = OverlayScan { dir: dir.to_path_buf(), exists: dir.is_dir(), models: 0, ignored: Vec::new() };
        let Ok(entries) = std::fs::read_dir(dir) else { return scan };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if name.starts_with('.') || !path.is_dir() {
                continue;
            }
            if path.join(METADATA_FILE).is_file() {
                scan.models += 1;
            } else if std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_some()) {
                scan.ignored.push(format!("{name}/"));
            }
        }
        scan.ignored.sort();
        scan
    }

    /// The warning to give, if the directory adds no host model: it does not exist, or none of
    /// its subdirectories has a `metadata.toml` (naming the ones ignored for lacking it).
    pub fn warning(&self) -> Option<String> {
        let dir = self.dir.display();
        if !self.exists {
            return Some(format!(
                "firmware_global.firmware_directory {dir} does not exist: it adds no host models \
                 (expected <subdir>/{METADATA_FILE} files under it)"
            ));
        }
        if self.models > 0 {
            return None;
        }
        let mut text =
            format!("firmware_global.firmware_directory {dir} adds no host models: no <subdir>/{METADATA_FILE} in it");
        if !self.ignored.is_empty() {
            text.push_str(&format!("; ignored: {} (no {METADATA_FILE})", self.ignored.join(", ")));
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::OverlayScan;

    #[test]
    fn a_missing_or_modelless_directory_warns_and_names_what_it_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("firmwear");
        let warning = OverlayScan::of(&missing).warning().unwrap();
        assert!(warning.contains("does not exist") && warning.contains("firmwear"), "{warning}");

        let fw = dir.path().join("firmware");
        std::fs::create_dir_all(fw.join("x")).unwrap();
        std::fs::create_dir_all(fw.join("y")).unwrap();
        std::fs::create_dir_all(fw.join("empty")).unwrap();
        std::fs::create_dir_all(fw.join(".hidden")).unwrap();
        std::fs::write(fw.join("x/image.bin"), "x").unwrap();
        std::fs::write(fw.join("y/image.bin"), "y").unwrap();
        std::fs::write(fw.join("README.md"), "notes").unwrap();
        let scan = OverlayScan::of(&fw);
        assert_eq!((scan.exists, scan.models), (true, 0));
        let warning = scan.warning().unwrap();
        assert!(warning.contains("adds no host models"), "{warning}");
        assert!(warning.ends_with("ignored: x/, y/ (no metadata.toml)"), "{warning}");

        std::fs::write(fw.join("x/metadata.toml"), "").unwrap();
        let scan = OverlayScan::of(&fw);
        assert_eq!((scan.models, scan.ignored.clone()), (1, vec!["y/".to_string()]));
        assert_eq!(scan.warning(), None);
    }
}
