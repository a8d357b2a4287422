//! Redfish trees captured from real BMCs (`../shared/redfish/vendor-mockups/<vendor>`), read at
//! test time and served through the scripted mock. Nothing is copied into the repository: a test
//! that needs a tree calls `tree(vendor)`, which prints "skipped: ../shared absent" and gives
//! `None` when the trees are not there. Helpers only: no assertions live here.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

use super::mock::{json, MockBmc};

/// One captured tree.
pub struct Tree {
    root: PathBuf,
}

/// The captured tree of `vendor` (`dell`, `supermicro`, `nvidia_viking`, `nvidia_gb200`), or
/// `None` (after printing "skipped: ../shared absent") when `../shared` is not there.
pub fn tree(vendor: &str) -> Option<Tree> {
    // The workspace root is the parent of this crate's folder; `../shared` is next to it.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/redfish/vendor-mockups").join(vendor);
    if !root.is_dir() {
        println!("skipped: ../shared absent ({})", root.display());
        return None;
    }
    Some(Tree { root })
}

impl Tree {
    /// The captured document at `odata_id` (e.g. `/redfish/v1/Systems/DGX`); panics when the
    /// capture has no such resource (a test naming a resource the BMC does not have is wrong).
    pub fn doc(&self, odata_id: &str) -> Value {
        let rel = odata_id.trim_matches('/');
        let path = self.root.join(rel).join("index.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("captured {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("captured {}: {e}", path.display()))
    }

    /// Serves the captured documents at these `@odata.id`s on the mock (GET, 200, as captured).
    /// `/redfish/v1` is served at `/redfish/v1/` too, where the client looks first.
    pub fn serve(&self, mock: &MockBmc, odata_ids: &[&str]) {
        for id in odata_ids {
            let doc = self.doc(id);
            let id = id.trim_end_matches('/');
            if id == "/redfish/v1" {
                mock.on("GET", "/redfish/v1/", vec![json(200, doc.clone())]);
            }
            mock.on("GET", id, vec![json(200, doc)]);
        }
    }

    /// Serves the captured collection at `odata_id` and every member it lists.
    pub fn serve_collection(&self, mock: &MockBmc, odata_id: &str) {
        self.serve(mock, &[odata_id]);
        let doc = self.doc(odata_id);
        let members: Vec<String> = doc["Members"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["@odata.id"].as_str().map(str::to_string))
            .collect();
        let ids: Vec<&str> = members.iter().map(String::as_str).collect();
        self.serve(mock, &ids);
    }
}
