//! `firmware-config set|show|history`: storing a runtime catalog document, an invalid one named
//! by its key and stored not, an identical one unchanged, and the JSON outputs.

use std::path::Path;

use crate::common::{json, Site, RUNTIME_DOC};

#[tokio::test]
async fn firmware_config_set_show_history() {
    let site = Site::new();
    let out = site.ok(&["firmware-config", "show"]).await;
    assert!(out.contains("no firmware config stored"), "{out}");
    assert!(out.lines().any(|l| l.contains("bmc") && l.contains("7.10.30.00") && l.contains("static config")), "{out}");

    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    assert!(out.contains("firmware config version 1 stored (2 host model tables"), "{out}");

    let out = site.ok(&["firmware-config", "show"]).await;
    assert!(out.starts_with("firmware config version 1 (stored "), "{out}");
    assert!(out.contains(" by cli:"), "{out}");
    let line = |needle: &str| {
        out.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}:\n{out}")).to_string()
    };
    assert!(line("7.20.10.00").contains("firmware-config v1"), "{out}");
    assert!(line("2.3.5").contains("static config"), "{out}");
    assert!(line("25.01").contains("NVIDIA") && line("25.01").contains("true"), "{out}");
    assert!(!out.contains("7.10.30.00"), "the runtime default replaces the static one:\n{out}");

    // `firmware show` uses the same effective catalog.
    let out = site.ok(&["firmware", "show"]).await;
    assert!(out.contains("7.20.10.00") && out.contains("GB200 NVL"), "{out}");

    // An empty document is a valid new version: back to the static catalog (a downgrade of the
    // R760 BMC default, so it needs --allow-downgrade).
    let empty = site.write("empty.toml", "# no runtime models\n");
    let out =
        site.ok(&["firmware-config", "set", "--yes", "--allow-downgrade", "--file", empty.to_str().unwrap()]).await;
    assert!(out.contains("version 2 stored (0 host model tables"), "{out}");
    let out = site.ok(&["firmware", "show"]).await;
    assert!(out.contains("7.10.30.00") && !out.contains("GB200"), "{out}");

    let out = site.ok(&["firmware-config", "history"]).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("VERSION"), "{out}");
    assert!(lines[1].starts_with('2') && lines[2].starts_with('1'), "{out}");
    let out = site.ok(&["firmware-config", "history", "--limit", "1"]).await;
    assert_eq!(out.lines().count(), 2, "{out}");
}

#[tokio::test]
async fn firmware_config_invalid_document_names_the_key_and_stores_nothing() {
    let site = Site::new();
    let good = site.write("good.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--file", good.to_str().unwrap()]).await;
    let audit_before = site.audit_count().await;

    let unknown_key = site.write(
        "unknown-key.toml",
        "[host_models.x]\nvendor = \"V\"\nmodel = \"M\"\n[host_models.x.components.bmc]\ncurrent_version_reported_as = \"^B$\"\nbogus = 1\n",
    );
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", unknown_key.to_str().unwrap()]).await;
    assert!(err.contains("unknown-key.toml") && err.contains("host_models.x.components.bmc"), "{err}");
    assert!(err.contains("bogus") && err.contains("nothing was stored"), "{err}");

    // Parses, but the merged model is invalid: a second default for the same component.
    let two_defaults = site.write(
        "two-defaults.toml",
        "[host_models.d]\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n\
         [[host_models.d.components.uefi.known_firmware]]\nversion = \"2.4\"\ndefault = true\n\
         [[host_models.d.components.uefi.known_firmware]]\nversion = \"2.5\"\ndefault = true\n",
    );
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", two_defaults.to_str().unwrap()]).await;
    assert!(err.contains("host_models.d.components.uefi.known_firmware[1].default"), "{err}");

    let bad_component = site.write(
        "bad-component.toml",
        "[host_models.z]\nvendor = \"V\"\nmodel = \"M\"\n[host_models.z.components.toaster]\n",
    );
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", bad_component.to_str().unwrap()]).await;
    assert!(err.contains("host_models.z.components.toaster"), "{err}");

    let missing = site.dir.join("missing.toml");
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", missing.to_str().unwrap()]).await;
    assert!(err.contains("missing.toml"), "{err}");

    let out = site.ok(&["--format", "json", "firmware-config", "history"]).await;
    let versions = json(&out);
    assert_eq!(versions.as_array().unwrap().len(), 1, "{out}");
    assert_eq!(versions[0]["document"], RUNTIME_DOC);
    assert_eq!(site.audit_count().await, audit_before);
}

#[tokio::test]
async fn firmware_config_identical_document_is_unchanged() {
    let site = Site::new();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    let audit_before = site.audit_count().await;
    let copy = site.write("copy.toml", RUNTIME_DOC);
    let out = site.ok(&["firmware-config", "set", "--yes", "--file", copy.to_str().unwrap()]).await;
    assert!(out.contains("unchanged") && out.contains("version 1"), "{out}");
    let out = site.ok(&["--format", "json", "firmware-config", "set", "--yes", "--file", copy.to_str().unwrap()]).await;
    let v = json(&out);
    assert_eq!((v["changed"].as_bool(), v["version"].as_i64()), (Some(false), Some(1)));

    let store = site.store().await;
    let history = store.firmware_config_history(10).await.unwrap();
    store.close().await;
    assert_eq!(history.len(), 1);
    assert_eq!(site.audit_count().await, audit_before);
}

#[tokio::test]
async fn firmware_config_json_outputs_parse() {
    let site = Site::new();
    let out = site.ok(&["--format", "json", "firmware-config", "show"]).await;
    let v = json(&out);
    assert!(v["version"].is_null(), "{out}");
    assert_eq!(v["catalog"]["models"].as_array().unwrap().len(), 1);

    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = site.ok(&["--format", "json", "firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    let set = json(&out);
    assert_eq!((set["changed"].as_bool(), set["version"].as_i64()), (Some(true), Some(1)));
    assert_eq!(set["sha256"].as_str().unwrap().len(), 64);

    let out = site.ok(&["--format", "json", "firmware-config", "show"]).await;
    let v = json(&out);
    assert_eq!(v["version"]["version"], 1);
    assert!(v["version"]["actor"].as_str().unwrap().starts_with("cli:"));
    assert_eq!(v["version"]["sha256"], set["sha256"]);
    assert_eq!(v["catalog"]["models"].as_array().unwrap().len(), 2);
    let defaults = v["defaults"].as_array().unwrap();
    let bmc = defaults.iter().find(|d| d["vendor"] == "Dell" && d["component"] == "bmc").unwrap();
    assert_eq!((bmc["version"].as_str(), bmc["layer"].as_str()), (Some("7.20.10.00"), Some("firmware-config v1")));

    let out = site.ok(&["--format", "json", "firmware-config", "history"]).await;
    assert_eq!(json(&out)[0]["version"], 1);
    assert!(Path::new(&site.config).exists());
}
