//! Target `scout_package`: what Scout reads from a package before trusting it.
//!
//! Owns feeding one text to the Scout package parsers production calls: the signed manifest
//! (`ScoutManifest::parse`, whose promise is that it accepts only what `render` writes, so an
//! accepted text must render back to itself), the trusted public key file
//! (`scout::TrustedKey::from_file`) and the signing key file
//! (`activities::host::scout_signing::load_signing_key`), both through a scratch file.
//! Properties: no panic; a manifest refusal names a line within the text; a key refusal names the
//! file. It must not sign anything (the signature check itself needs a key the fuzzer cannot
//! forge; `scout/src/signature.rs` tests it).
//!
//! Input: byte 0 picks the parser (0: manifest, 1: public key file, 2: signing key file).

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use hostfw_activities::host::scout_signing::load_signing_key;
use hostfw_model::{ManifestError, ScoutManifest};
use hostfw_scout::TrustedKey;

use crate::input::assert_names;

fn scratch_file() -> &'static Mutex<PathBuf> {
    static FILE: OnceLock<Mutex<PathBuf>> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hostfw-fuzz-scout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the scratch key folder");
        Mutex::new(dir.join("scout-signing.key"))
    })
}

pub fn run(data: &[u8]) {
    let (which, rest) = crate::input::selector(data);
    match which % 3 {
        0 => {
            let Some(text) = crate::input::text(rest) else { return };
            manifest(text);
        }
        kind => {
            let file = scratch_file().lock().unwrap_or_else(|p| p.into_inner());
            std::fs::write(&*file, rest).expect("write the scratch key file");
            let shown = file.display().to_string();
            let refusal = if kind == 1 {
                TrustedKey::from_file(&file).err()
            } else {
                load_signing_key(&file).err().map(|e| e.to_string())
            };
            if let Some(message) = refusal {
                assert_names("scout key file", &message, &[&shown]);
            }
        }
    }
}

fn manifest(text: &str) {
    match ScoutManifest::parse(text) {
        Ok(manifest) => {
            assert_eq!(manifest.render(), text, "scout manifest: accepted a text that `render` would not write")
        }
        Err(e) => {
            let message = e.to_string();
            assert_names("scout manifest", &message, &[]);
            if let ManifestError::Line { line, .. } = e {
                let lines = text.split('\n').count();
                assert!((1..=lines).contains(&line), "scout manifest: line {line} of a {lines}-line text: {message}");
            }
        }
    }
}
