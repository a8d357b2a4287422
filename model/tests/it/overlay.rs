//! Directory overlay merge (nico-study §1.1) and the example data directory.

use std::fs;
use std::path::{Path, PathBuf};

use hostfw_model::{Catalog, ComponentType, SiteConfig};
use tempfile::TempDir;

/// A site dir with `site.toml` (`[site]` + `statics`) and `firmware/<name>/metadata.toml` files.
fn site(statics: &str, overlays: &[(&str, &str)]) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("site.toml");
    fs::write(&config, format!("[site]\nname = \"t\"\n{statics}")).expect("write config");
    for (name, text) in overlays {
        let sub = dir.path().join("firmware").join(name);
        fs::create_dir_all(&sub).expect("mkdir");
        fs::write(sub.join("metadata.toml"), text).expect("write overlay");
    }
    (dir, config)
}

/// The catalog, or its error as an operator reads it: the message and every cause.
fn load(config: &Path) -> Result<Catalog, String> {
    let c = SiteConfig::load(config).map_err(|e| hostfw_model::error_chain(&e))?;
    Catalog::load(&c).map_err(|e| hostfw_model::error_chain(&e))
}

const STATIC: &str = r#"
[host_models.r760]
vendor = "Dell"
model = "PowerEdge R760"
ordering = ["uefi", "bmc"]
explicit_start_needed = true
[host_models.r760.components.bmc]
current_version_reported_as = "^iDRAC"
preingest_upgrade_when_below = "6.0"
[[host_models.r760.components.bmc.known_firmware]]
version = "7.0"
default = true
filename = "idrac7.exe"
[host_models.r760.components.uefi]
current_version_reported_as = "^BIOS"
[[host_models.r760.components.uefi.known_firmware]]
version = "2.3"
default = true
filename = "bios23.exe"
"#;

#[test]
fn example_data_directory() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/site.toml");
    let config = SiteConfig::load(&path).expect("config");
    let catalog = Catalog::load(&config).expect("catalog (the .hidden dir is skipped)");
    assert_eq!(catalog.models().len(), 2);
    let r760 = catalog.find(" DELL ", "poweredge R760").expect("r760");
    assert_eq!(r760.vendor, "Dell");
    assert_eq!(r760.model, "PowerEdge R760");
    let uefi = &r760.components[&ComponentType::Uefi];
    let versions: Vec<(&str, bool)> = uefi.known_firmware.iter().map(|e| (e.version.as_str(), e.default)).collect();
    assert_eq!(versions, [("2.3.5", false), ("2.4.1", true)]);
    assert_eq!(uefi.current_version_reported_as.as_str(), "^Installed-.*__BIOS\\.Setup\\.");
    assert_eq!(r760.desired_versions()[&ComponentType::Uefi], "2.4.1");
    assert_eq!(r760.desired_versions()[&ComponentType::Bmc], "7.10.30.00");
    let gb200 = &catalog.models()[1];
    assert_eq!((gb200.vendor.as_str(), gb200.model.as_str()), ("Nvidia", "GB200 NVL"));
    assert!(gb200.explicit_start_needed && gb200.mnnvl_capable);
    assert_eq!(gb200.effective_ordering(), [ComponentType::Hgxbmc, ComponentType::Bmc]);
    assert!(catalog.find("Nvidia", "GB300").is_none());
}

#[test]
fn no_firmware_directory_means_no_overlay() {
    let (_dir, config) = site(STATIC, &[]);
    let catalog = load(&config).expect("loads");
    assert_eq!(catalog.models().len(), 1);
}

#[test]
fn overlay_merges_per_nico_rules() {
    let overlay = r#"
vendor = "dell"
model = "PowerEdge R760 "
explicit_start_needed = false
[components.bmc]
current_version_reported_as = "^Installed-.*iDRAC"
preingest_upgrade_when_below = "6.5"
[[components.bmc.known_firmware]]
version = "7.1"
filename = "idrac71.exe"
[components.uefi]
[[components.uefi.known_firmware]]
version = "2.4"
default = true
filename = "bios24.exe"
"#;
    let (_dir, config) = site(STATIC, &[("one", overlay)]);
    let catalog = load(&config).expect("loads");
    assert_eq!(catalog.models().len(), 1, "same vendor/model by the lookup rule");
    let m = &catalog.models()[0];
    assert!(m.explicit_start_needed, "explicit_start_needed is sticky");
    assert_eq!(m.ordering, [ComponentType::Uefi, ComponentType::Bmc], "empty ordering keeps the old");
    let bmc = &m.components[&ComponentType::Bmc];
    assert_eq!(bmc.current_version_reported_as.as_str(), "^Installed-.*iDRAC", "matcher overwritten");
    assert_eq!(bmc.preingest_upgrade_when_below.as_deref(), Some("6.5"));
    let bmc_versions: Vec<(&str, bool)> = bmc.known_firmware.iter().map(|e| (e.version.as_str(), e.default)).collect();
    assert_eq!(bmc_versions, [("7.0", true), ("7.1", false)], "appended; no new default, old kept");
    let uefi = &m.components[&ComponentType::Uefi];
    assert_eq!(uefi.current_version_reported_as.as_str(), "^BIOS", "unset matcher keeps the old");
    let uefi_versions: Vec<(&str, bool)> =
        uefi.known_firmware.iter().map(|e| (e.version.as_str(), e.default)).collect();
    assert_eq!(uefi_versions, [("2.3", false), ("2.4", true)], "new default clears old defaults");
}

#[test]
fn overlay_ordering_replaces_and_adds_components() {
    let overlay = r#"
vendor = "Dell"
model = "PowerEdge R760"
ordering = ["bmc", "uefi", "cpldmb"]
[components.cpldmb]
current_version_reported_as = "^CPLD"
[[components.cpldmb.known_firmware]]
version = "1.0.9"
default = true
filename = "cpld.bin"
install_only_specified = true
power_drains_needed = 1
"#;
    let (_dir, config) = site(STATIC, &[("one", overlay)]);
    let m = load(&config).expect("loads").models[0].clone();
    assert_eq!(m.effective_ordering(), [ComponentType::Bmc, ComponentType::Uefi, ComponentType::Cpldmb]);
    let cpld = m.default_entry(ComponentType::Cpldmb).expect("cpld default");
    assert!(cpld.install_only_specified);
    assert_eq!(cpld.power_drains_needed, Some(1));
}

#[test]
fn subdirectories_apply_in_name_order() {
    let doc = |v: &str| {
        format!(
            "vendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n[components.bmc]\n\
             [[components.bmc.known_firmware]]\nversion = \"{v}\"\ndefault = true\nfilename = \"b.bin\"\n"
        )
    };
    // Written in reverse order so creation order (and mtime) disagree with name order.
    let (b, a) = (doc("from-b"), doc("from-a"));
    let (_dir, config) = site(STATIC, &[("20-b", &b), ("10-a", &a)]);
    let m = load(&config).expect("loads").models[0].clone();
    assert_eq!(m.desired_versions()[&ComponentType::Bmc], "from-b");
    let versions: Vec<&str> =
        m.components[&ComponentType::Bmc].known_firmware.iter().map(|e| e.version.as_str()).collect();
    assert_eq!(versions, ["7.0", "from-a", "from-b"]);
}

#[test]
fn overlay_only_model_with_empty_ordering_uses_declaration_order() {
    let overlay = r#"
vendor = "Lenovo"
model = "SR650"
[components.uefi]
current_version_reported_as = "^UEFI"
[components.bmc]
current_version_reported_as = "^XCC"
"#;
    let (_dir, config) = site("", &[("sr650", overlay)]);
    let catalog = load(&config).expect("loads");
    let m = catalog.find("lenovo", "sr650").expect("found");
    assert_eq!(m.effective_ordering(), [ComponentType::Bmc, ComponentType::Uefi]);
    assert!(m.desired_versions().is_empty());
}

#[test]
fn overlay_parse_error_names_its_file_key_and_line() {
    let overlay = "vendor = \"Dell\"\nmodel = \"X\"\n[components.bmc]\ncurrent_version_reported_as = \"^B\"\n\
                   [[components.bmc.known_firmware]]\nversion = \"1\"\nbogus = true\n";
    let (_dir, config) = site("", &[("x", overlay)]);
    let e = load(&config).expect_err("bad overlay");
    assert!(e.contains("firmware/x/metadata.toml:7:1"), "{e}");
    assert!(e.contains("`components.bmc.known_firmware[0].bogus`"), "{e}");
}

#[test]
fn overlay_missing_vendor_names_its_file() {
    let (_dir, config) = site("", &[("x", "model = \"X\"\n")]);
    let e = load(&config).expect_err("no vendor");
    assert!(e.contains("firmware/x/metadata.toml") && e.contains("`vendor`: missing"), "{e}");
}

#[test]
fn validation_after_merge_names_the_contributing_files() {
    // The overlay adds a defaulted component the static ordering does not list.
    let overlay = r#"
vendor = "Dell"
model = "PowerEdge R760"
[components.nic]
current_version_reported_as = "^NIC"
[[components.nic.known_firmware]]
version = "28.1"
default = true
filename = "nic.bin"
"#;
    let (_dir, config) = site(STATIC, &[("nic", overlay)]);
    let e = load(&config).expect_err("nic not in ordering");
    assert!(e.contains("site.toml: `host_models.r760.ordering`"), "{e}");
    assert!(e.contains("`components.nic`") && e.contains("firmware/nic/metadata.toml"), "{e}");
}

#[test]
fn overlay_new_component_needs_a_matcher() {
    let overlay = "vendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n[components.gpu]\n";
    let (_dir, config) = site(STATIC, &[("gpu", overlay)]);
    let e = load(&config).expect_err("no matcher");
    assert!(e.contains("firmware/gpu/metadata.toml"), "{e}");
    assert!(e.contains("`components.gpu.current_version_reported_as`: missing"), "{e}");
}

#[test]
fn two_defaults_in_one_overlay_document() {
    let overlay = "vendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n[components.bmc]\n\
                   [[components.bmc.known_firmware]]\nversion = \"8\"\ndefault = true\nfilename = \"a\"\n\
                   [[components.bmc.known_firmware]]\nversion = \"9\"\ndefault = true\nfilename = \"b\"\n";
    let (_dir, config) = site(STATIC, &[("two", overlay)]);
    let e = load(&config).expect_err("two defaults");
    assert!(e.contains("firmware/two/metadata.toml"), "{e}");
    assert!(e.contains("`components.bmc.known_firmware[1].default`"), "{e}");
}

#[test]
fn dot_directories_and_dirs_without_metadata_are_skipped() {
    let (dir, config) = site(STATIC, &[(".git", "not toml [[[")]);
    fs::create_dir_all(dir.path().join("firmware/artifacts")).expect("mkdir");
    fs::write(dir.path().join("firmware/loose-file.bin"), "x").expect("write");
    assert_eq!(load(&config).expect("loads").models().len(), 1);
}

#[test]
fn firmware_directory_that_is_a_file_is_an_error() {
    let (dir, config) = site(STATIC, &[]);
    fs::write(dir.path().join("firmware"), "x").expect("write");
    let e = load(&config).expect_err("not a dir");
    assert!(e.contains("firmware") && e.contains("not a directory"), "{e}");
}
