//! The captured Redfish trees (`../shared/redfish`) as seeds for the Redfish targets.
//!
//! Owns finding the trees (every folder holding a ServiceRoot `index.json`, DMTF's mockups and
//! the vendor captures), choosing one document per `@odata.type` per tree for `redfish_models`,
//! and recording, for `redfish_replies`, the replies a tree gives each client operation (played
//! by `scripted_bmc` in tree mode) as a script. The trees are never copied into the repository:
//! `scripts/fuzz.sh` writes these seeds into a gitignored folder, and the replay test runs them
//! straight from `../shared`. It must not change the trees.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::redfish_replies::{self, OPERATIONS};
use crate::scripted_bmc::{script_of, Source};

/// Largest document taken as a `redfish_models` seed, and largest recorded script.
pub const MAX_SEED_BYTES: u64 = 128 * 1024;

/// `<shared>/redfish` next to the repository, when this checkout has it.
pub fn shared_redfish(repo: &Path) -> Option<PathBuf> {
    let dir = repo.join("..").join("shared").join("redfish");
    dir.is_dir().then_some(dir)
}

/// Every tree under `shared_redfish`: the folders that hold the ServiceRoot's `index.json`.
pub fn trees(shared_redfish: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for group in ["mockups", "vendor-mockups"] {
        let Ok(entries) = std::fs::read_dir(shared_redfish.join(group)) else { continue };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
        dirs.sort();
        for dir in dirs {
            let v1 = dir.join("redfish").join("v1");
            if v1.join("index.json").is_file() {
                out.push(v1);
            } else if dir.join("index.json").is_file() {
                out.push(dir);
            }
        }
    }
    out
}

/// One small document per `@odata.type` in `tree` (the first in path order), with its path.
pub fn documents_by_type(tree: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    walk(tree, &mut files);
    files.sort();
    let mut by_type: BTreeMap<String, (PathBuf, Vec<u8>)> = BTreeMap::new();
    for file in files {
        if std::fs::metadata(&file).map_or(true, |m| m.len() > MAX_SEED_BYTES) {
            continue;
        }
        let Ok(bytes) = std::fs::read(&file) else { continue };
        by_type.entry(odata_type(&bytes)).or_insert((file, bytes));
    }
    by_type.into_values().collect()
}

/// The first `"@odata.type": "<value>"` of a document, found without decoding it (a tree has
/// thousands of documents; only the chosen ones are decoded, by the target).
fn odata_type(bytes: &[u8]) -> String {
    const KEY: &[u8] = b"\"@odata.type\"";
    let Some(at) = bytes.windows(KEY.len()).position(|w| w == KEY) else { return "(none)".into() };
    let rest = &bytes[at + KEY.len()..];
    let value: Vec<u8> = rest.iter().skip_while(|&&b| b != b'"').skip(1).take_while(|&&b| b != b'"').copied().collect();
    String::from_utf8_lossy(&value).into_owned()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.file_name().is_some_and(|n| n == "index.json") {
            out.push(path);
        }
    }
}

/// Runs every client operation (with `$expand` on and off) against `tree`, checking the
/// properties; returns `(seed name, script)` for each session that is small enough to be a seed.
pub fn record_sessions(tree: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (op, name) in OPERATIONS.iter().enumerate() {
        for flags in [0u8, 1] {
            let op = op as u8;
            let served = redfish_replies::check(op, flags, Source::Tree(tree.to_path_buf()));
            let script = script_of(&[op, flags], &served);
            if script.len() as u64 <= MAX_SEED_BYTES {
                out.push((format!("{name}-{flags}"), script));
            }
        }
    }
    out
}
