//! Replays every fuzz target's corpus (what `make test` runs of the fuzzers).
//!
//! Owns running each target of `hostfw_fuzz_targets::TARGETS` over its committed seeds
//! (`seeds/<target>/`), every crash the fuzzer found (`regressions/<target>/`, minimized), and,
//! when the captured Redfish trees are next to the repository (`../shared/redfish`), the trees
//! themselves for the Redfish targets (one document per type, and every client operation against
//! each tree). It must not fuzz (no random inputs; `make fuzz` does that).

use std::path::{Path, PathBuf};

use hostfw_fuzz_targets::{captured_trees, redfish_models, TARGETS};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files of `dir` in name order (none when it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with('.')))
        .filter(|p| p.extension().is_none_or(|e| e != "md"))
        .collect();
    out.sort();
    out
}

fn replay(target: &str, dir: &Path) -> usize {
    let run = hostfw_fuzz_targets::target(target).expect("a known target").run;
    let inputs = files(dir);
    for file in &inputs {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        eprintln!("replay {target}: {}", file.display());
        run(&data);
    }
    inputs.len()
}

#[test]
fn every_target_has_seeds_and_replays_them_and_its_regressions() {
    for t in TARGETS {
        let seeds = replay(t.name, &crate_dir().join("seeds").join(t.name));
        let regressions = replay(t.name, &crate_dir().join("regressions").join(t.name));
        assert!(seeds > 0, "target {} has no committed seeds", t.name);
        println!("{}: {seeds} seeds, {regressions} regressions replayed", t.name);
    }
}

#[test]
fn every_cargo_fuzz_binary_is_a_target() {
    let dir = crate_dir().join("..").join("fuzz").join("fuzz_targets");
    let mut binaries: Vec<String> =
        files(&dir).iter().filter_map(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned()).collect();
    binaries.sort();
    let mut names: Vec<String> = TARGETS.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(binaries, names, "fuzz/fuzz_targets/ and hostfw_fuzz_targets::TARGETS list different targets");
}

#[test]
fn the_captured_redfish_trees_replay() {
    let repo = crate_dir().join("..");
    let Some(shared) = captured_trees::shared_redfish(&repo) else {
        println!("captured Redfish trees: skipped (no ../shared/redfish next to the repository)");
        return;
    };
    let trees = captured_trees::trees(&shared);
    assert!(!trees.is_empty(), "{} holds no Redfish tree", shared.display());
    let (mut documents, mut sessions) = (0, 0);
    for tree in &trees {
        for (file, bytes) in captured_trees::documents_by_type(tree) {
            eprintln!("replay redfish_models: {}", file.display());
            redfish_models::run(&bytes);
            documents += 1;
        }
        sessions += captured_trees::record_sessions(tree).len();
    }
    println!("captured Redfish trees: {} trees, {documents} documents, {sessions} client sessions", trees.len());
}
