//! `redfish-seeds <shared/redfish> <out>`: writes the Redfish targets' seed corpora built from
//! the captured trees into `<out>/redfish_models/` and `<out>/redfish_replies/` (scripts/fuzz.sh
//! runs it; the trees are never copied into the repository). It must not write anywhere else.

use std::path::PathBuf;

use hostfw_fuzz_targets::captured_trees;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, shared, out] = args.as_slice() else {
        eprintln!("usage: redfish-seeds <shared/redfish folder> <output folder>");
        std::process::exit(2);
    };
    let out = PathBuf::from(out);
    let (models, replies) = (out.join("redfish_models"), out.join("redfish_replies"));
    for dir in [&models, &replies] {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    }
    let (mut n_models, mut n_replies) = (0, 0);
    for tree in captured_trees::trees(&PathBuf::from(shared)) {
        let label = tree
            .iter()
            .rev()
            .find(|c| *c != "v1" && *c != "redfish")
            .map_or_else(|| "tree".to_string(), |c| c.to_string_lossy().into_owned());
        for (i, (_, bytes)) in captured_trees::documents_by_type(&tree).into_iter().enumerate() {
            std::fs::write(models.join(format!("{label}-{i:04}.json")), bytes).expect("write a seed");
            n_models += 1;
        }
        for (name, script) in captured_trees::record_sessions(&tree) {
            std::fs::write(replies.join(format!("{label}-{name}")), script).expect("write a seed");
            n_replies += 1;
        }
    }
    println!("redfish-seeds: {n_models} documents, {n_replies} recorded sessions into {}", out.display());
}
