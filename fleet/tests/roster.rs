//! The registration view of the fleet file ([`FleetRoster`], `hostfw machine import`): the
//! scheme, logins, labels, and errors that name the line or the host and key.

use std::path::Path;

use hostfw_fleet::{FleetError, FleetRoster};

fn parse(text: &str) -> Result<FleetRoster, FleetError> {
    FleetRoster::from_toml_str_in(text, Path::new("."))
}

#[test]
fn reads_hosts_with_defaults_and_accepts_simulator_keys() {
    let roster = parse(
        "tls = true\n[defaults]\npassword = \"pw\"\nupload_style = \"multipart\"\n\
         [[host]]\nid = \"a\"\nvendor = \"Dell\"\nmodel = \"R760\"\nbmc_address = \"127.0.0.1:9001\"\n\
         firmware = [ { id = \"BMC\", version = \"1.0\" } ]\n",
    )
    .unwrap();
    assert!(roster.tls);
    let h = &roster.hosts[0];
    let host = "[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n";
    assert!(parse(host).unwrap().tls, "no tls key: https, as `machine add` means");
    assert!(!parse(&format!("tls = false\n{host}")).unwrap().tls, "http only where the file says so");
    assert_eq!((h.id.as_str(), h.username.as_str(), h.password.as_str()), ("a", "admin", "pw"));
    assert_eq!(h.bmc_address, "127.0.0.1:9001".parse().unwrap());
}

#[test]
fn host_labels_are_read_and_checked() {
    let host = |labels: &str| {
        format!("[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n{labels}")
    };
    let roster = parse(&host("labels = { rack = \"r12\", power_domain = \"pd3\" }\n")).unwrap();
    let labels = roster.hosts[0].labels.clone().unwrap();
    assert_eq!(hostfw_model::labels_text(&labels), "power_domain=pd3,rack=r12");
    assert_eq!(parse(&host("")).unwrap().hosts[0].labels, None, "no labels given: None (stored ones kept)");
    let err = parse(&host("labels = { Rack = \"r1\" }\n")).unwrap_err().to_string();
    assert!(err.contains("host \"a\"") && err.contains("key `labels`") && err.contains("Rack"), "{err}");
    let err = parse(&host("labels = { rack = 12 }\n")).unwrap_err().to_string();
    assert!(err.contains("labels"), "{err}");
}

#[test]
fn errors_name_the_line_or_the_host_and_key() {
    let err = parse("tls = true\n[[host]\n").unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
    let err =
        parse("[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"nope\"\n").unwrap_err().to_string();
    assert!(err.contains("host \"a\"") && err.contains("key `bmc_address`"), "{err}");
    let twice = "[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n\
                 [[host]]\nid = \"b\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n";
    let err = parse(twice).unwrap_err().to_string();
    assert!(err.contains("host \"b\"") && err.contains("127.0.0.1:1 is already used"), "{err}");
    let err = parse("[[host]]\nid = \"a\"\nbmc_address = \"127.0.0.1:1\"\n").unwrap_err().to_string();
    assert!(err.contains("key `vendor`"), "{err}");
}

const HOST: &str = "[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n";

#[test]
fn default_labels_are_merged_under_a_hosts_own() {
    let text = format!(
        "[defaults]\nlabels = {{ rack = \"r1\", site = \"lab\" }}\n{HOST}labels = {{ rack = \"r12\" }}\n\
         [[host]]\nid = \"b\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:2\"\n"
    );
    let roster = parse(&text).unwrap();
    let labels = |i: usize| roster.hosts[i].labels.as_ref().map(hostfw_model::labels_text);
    assert_eq!(labels(0).as_deref(), Some("rack=r12,site=lab"), "the host's own value wins, key by key");
    assert_eq!(labels(1).as_deref(), Some("rack=r1,site=lab"), "a host without labels takes the default ones");
    let err = parse(&format!("[defaults]\nlabels = {{ Rack = \"r1\" }}\n{HOST}")).unwrap_err().to_string();
    assert!(err.contains("key `labels`") && err.contains("Rack"), "{err}");
}

#[test]
fn an_unknown_host_key_names_the_host_and_the_key() {
    let err = parse(&format!("{HOST}serail = \"SN1\"\n")).unwrap_err().to_string();
    assert!(err.contains("host \"a\"") && err.contains("serail"), "{err}");
    let err = parse(&format!("[defaults]\nvendr = \"D\"\n{HOST}")).unwrap_err().to_string();
    assert!(err.contains("[defaults]") && err.contains("vendr"), "{err}");
}

#[test]
fn port_zero_is_refused_naming_the_host_and_the_key() {
    let err = parse(&HOST.replace("127.0.0.1:1", "127.0.0.1:0")).unwrap_err().to_string();
    assert!(err.contains("host \"a\"") && err.contains("key `bmc_address`") && err.contains("port 0"), "{err}");
}

#[test]
fn a_file_names_itself_in_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.toml");
    std::fs::write(&path, format!("{HOST}colour = 1\n")).unwrap();
    let err = FleetRoster::load(&path).unwrap_err().to_string();
    assert!(err.contains("site.toml") && err.contains("host \"a\"") && err.contains("colour"), "{err}");
    std::fs::write(&path, "[[host]\n").unwrap();
    let err = FleetRoster::load(&path).unwrap_err().to_string();
    assert!(err.contains("site.toml") && err.contains("line 1"), "{err}");
}
