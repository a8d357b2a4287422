//! One test per catalog error: each message names the file and the full key.

use crate::common;

use common::{catalog, ORIGIN};

fn err(text: &str) -> String {
    match catalog(text) {
        Ok(c) => panic!("expected an error, got {c:?}"),
        Err(e) => e,
    }
}

fn assert_names(e: &str, key: &str, problem: &str) {
    assert!(e.contains(ORIGIN), "file missing: {e}");
    assert!(e.contains(&format!("`{key}`")), "key `{key}` missing: {e}");
    assert!(e.contains(problem), "problem `{problem}` missing: {e}");
}

// Lines 1-2 of every text are `common::SITE`, so line numbers below are offset by 2.
const HEAD: &str = "[host_models.r760]\nvendor = \"Dell\"\nmodel = \"R760\"\n";

#[test]
fn invalid_regex() {
    let e = err(&format!("{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^iDRAC(\"\n"));
    assert_names(&e, "host_models.r760.components.bmc.current_version_reported_as", "invalid regex `^iDRAC(`");
    assert!(e.contains(&format!("{ORIGIN}:7:")), "line missing: {e}");
}

#[test]
fn two_defaults_for_one_component() {
    let e = err(&format!(
        "{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"1\"\ndefault = true\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"2\"\ndefault = true\n"
    ));
    assert_names(&e, "host_models.r760.components.bmc.known_firmware[1].default", "second `default = true`");
    assert!(e.contains("host_models.r760.components.bmc.known_firmware[0]"), "{e}");
}

#[test]
fn a_preingestion_default_next_to_a_managed_default_is_fine() {
    let c = catalog(&format!(
        "{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"1\"\ndefault = true\npreingestion_exclusive_config = true\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"2\"\ndefault = true\n"
    ));
    assert!(c.is_ok(), "{c:?}");
}

#[test]
fn unknown_component_type_as_table() {
    let e = err(&format!("{HEAD}[host_models.r760.components.fpga]\ncurrent_version_reported_as = \"^F\"\n"));
    assert_names(&e, "host_models.r760.components.fpga", "unknown component type `fpga`");
}

#[test]
fn unknown_component_type_in_ordering() {
    let e = err(&format!("{HEAD}ordering = [\"bmc\", \"fpga\"]\n"));
    assert_names(&e, "host_models.r760.ordering[1]", "unknown component type `fpga`");
}

#[test]
fn ordering_names_an_unconfigured_component() {
    let e = err(&format!(
        "{HEAD}ordering = [\"bmc\", \"uefi\"]\n[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n"
    ));
    assert_names(&e, "host_models.r760.ordering", "names `uefi`");
}

#[test]
fn ordering_lists_a_component_twice() {
    let e = err(&format!(
        "{HEAD}ordering = [\"bmc\", \"bmc\"]\n[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n"
    ));
    assert_names(&e, "host_models.r760.ordering", "lists `bmc` twice");
}

#[test]
fn configured_component_missing_from_ordering() {
    let e = err(&format!(
        "{HEAD}ordering = [\"bmc\"]\n\
         [host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [host_models.r760.components.cpldmb]\ncurrent_version_reported_as = \"^CPLD\"\n\
         [[host_models.r760.components.cpldmb.known_firmware]]\nversion = \"1.0.9\"\ndefault = true\nfilename = \"cpld.bin\"\n"
    ));
    assert_names(&e, "host_models.r760.ordering", "does not list `cpldmb`");
    assert!(e.contains("would count as drift but never be installed"), "{e}");
}

#[test]
fn missing_vendor() {
    let e = err("[host_models.r760]\nmodel = \"R760\"\n");
    assert_names(&e, "host_models.r760.vendor", "missing");
}

#[test]
fn empty_model() {
    let e = err("[host_models.r760]\nvendor = \"Dell\"\nmodel = \"  \"\n");
    assert_names(&e, "host_models.r760.model", "must not be empty");
}

#[test]
fn unknown_key_in_entry() {
    let e = err(&format!(
        "{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"1\"\nmandatory_upgrade_from_priority = \"security\"\n"
    ));
    assert_names(
        &e,
        "host_models.r760.components.bmc.known_firmware[0].mandatory_upgrade_from_priority",
        "unknown field `mandatory_upgrade_from_priority`",
    );
}

#[test]
fn unknown_key_in_model_and_component() {
    let e = err(&format!("{HEAD}vendr = \"x\"\n"));
    assert_names(&e, "host_models.r760.vendr", "unknown field `vendr`");
    let e = err(&format!("{HEAD}[host_models.r760.components.bmc]\nmatcher = \"^B\"\n"));
    assert_names(&e, "host_models.r760.components.bmc.matcher", "unknown field `matcher`");
}

#[test]
fn url_without_filename() {
    let e = err(&format!(
        "{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"1\"\ndefault = true\nurl = \"https://a/b.bin\"\n"
    ));
    assert_names(&e, "host_models.r760.components.bmc.known_firmware[0].url", "without `filename` or `filenames`");
}

fn bmc_entry(extra: &str) -> String {
    format!(
        "{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"1\"\ndefault = true\n{extra}"
    )
}

const DIGEST: &str = "0f343b0931126a20f133d67c2b018a3b5b1d3a1c3e1f5d4a7b6c9d8e0f1a2b3c";

#[test]
fn sha256_count_must_match_the_artifacts() {
    let e = err(&bmc_entry(&format!("filenames = [\"a.bin\", \"b.bin\"]\nsha256 = \"{DIGEST}\"\n")));
    assert_names(&e, "host_models.r760.components.bmc.known_firmware[0].sha256", "1 digest(s) for 2 artifact(s)");
    let e = err(&bmc_entry(&format!("sha256 = \"{DIGEST}\"\n")));
    assert_names(&e, "host_models.r760.components.bmc.known_firmware[0].sha256", "for 0 artifact(s) (none)");
}

#[test]
fn sha256_must_be_64_hex_digits() {
    let e = err(&bmc_entry("filename = \"a.bin\"\nsha256 = \"abc\"\n"));
    assert_names(&e, "host_models.r760.components.bmc.known_firmware[0].sha256", "is not a SHA-256 digest");
}

#[test]
fn sha256_as_one_string_or_a_list() {
    let one = catalog(&bmc_entry(&format!("filename = \"a.bin\"\nsha256 = \"{DIGEST}\"\n"))).unwrap();
    let many = catalog(&bmc_entry(&format!("filenames = [\"a.bin\"]\nsha256 = [\"{DIGEST}\"]\n"))).unwrap();
    for c in [one, many] {
        let entry = c.models()[0].default_entry(hostfw_model::ComponentType::Bmc).unwrap().clone();
        assert_eq!(entry.sha256, vec![DIGEST.to_string()]);
    }
}

#[test]
fn component_without_matcher() {
    let e = err(&format!(
        "{HEAD}[host_models.r760.components.bmc]\n[[host_models.r760.components.bmc.known_firmware]]\nversion = \"1\"\n"
    ));
    assert_names(&e, "host_models.r760.components.bmc.current_version_reported_as", "missing");
}

#[test]
fn empty_version() {
    let e = err(&format!(
        "{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"\"\n"
    ));
    assert_names(&e, "host_models.r760.components.bmc.known_firmware[0].version", "must not be empty");
}

#[test]
fn wrong_type_names_key_and_line() {
    let e = err(&format!(
        "{HEAD}[host_models.r760.components.bmc]\ncurrent_version_reported_as = \"^BMC\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"1\"\n\
         [[host_models.r760.components.bmc.known_firmware]]\nversion = \"2\"\ndefault = 3\n"
    ));
    assert_names(&e, "host_models.r760.components.bmc.known_firmware[1].default", "expected a boolean");
    assert!(e.contains(&format!("{ORIGIN}:12:")), "{e}");
}

#[test]
fn two_static_tables_for_one_model() {
    let e = err(
        "[host_models.a]\nvendor = \"Dell\"\nmodel = \"R760\"\n[host_models.b]\nvendor = \" dell \"\nmodel = \"r760\"\n",
    );
    assert_names(&e, "host_models.b.model", "already defined by `host_models.a`");
}

#[test]
fn nothing_is_half_loaded() {
    // The first model is fine, the second is broken: no catalog at all.
    let r = catalog(&format!("{HEAD}[host_models.zzz]\nvendor = \"Dell\"\nmodel = \"R660\"\nordering = [\"gpu\"]\n"));
    assert!(r.is_err());
}

/// A catalog names files under the firmware directory only: it must not make the worker upload
/// or run any other file of its host.
#[test]
fn artifacts_and_scripts_lie_under_the_firmware_directory() {
    let key = "host_models.r760.components.bmc.known_firmware[0]";
    let e = err(&bmc_entry("filename = \"/etc/shadow\"\n"));
    assert_names(&e, &format!("{key}.filename"), "\"/etc/shadow\" is an absolute path");
    let e = err(&bmc_entry("filenames = [\"a.bin\", \"../../etc/passwd\"]\n"));
    assert_names(&e, &format!("{key}.filenames"), "climbs out with `..`");
    let e = err(&bmc_entry("script = \"/usr/bin/env\"\n"));
    assert_names(&e, &format!("{key}.script"), "artifacts and scripts lie under the firmware directory");
}
