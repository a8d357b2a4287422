//! `machine add|import` and lookups by BMC address: the canonical form, https by default, one
//! BMC per machine in any spelling, an import all or nothing.

use crate::common::Site;

/// The stored BMC address of every machine, by id.
async fn stored_bmcs(site: &Site) -> Vec<(String, String)> {
    let store = site.store().await;
    let rows = store.machine_list().await.unwrap().into_iter().map(|m| (m.id, m.bmc_address.to_string())).collect();
    store.close().await;
    rows
}

#[tokio::test]
async fn machine_add_stores_the_canonical_form_and_a_bare_address_is_https() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "readme", "--bmc", "10.0.4.17:443"]).await;
    site.ok(&["machine", "add", "--id", "bare", "--bmc", "10.0.4.18"]).await;
    site.ok(&["machine", "add", "--id", "plain", "--bmc", "HTTP://10.0.4.19:8000/"]).await;
    site.ok(&["machine", "add", "--id", "named", "--bmc", "https://BMC-20.Example"]).await;
    assert_eq!(
        stored_bmcs(&site).await,
        [
            ("bare".to_string(), "https://10.0.4.18:443".to_string()),
            ("named".to_string(), "https://bmc-20.example:443".to_string()),
            ("plain".to_string(), "http://10.0.4.19:8000".to_string()),
            ("readme".to_string(), "https://10.0.4.17:443".to_string()),
        ]
    );
    let list = site.ok(&["machine", "list"]).await;
    assert!(list.contains("https://10.0.4.17:443") && list.contains("http://10.0.4.19:8000"), "{list}");
}

#[tokio::test]
async fn machine_add_refuses_bad_addresses_naming_them_and_writes_nothing() {
    let site = Site::new();
    for (bmc, why) in [
        ("ftp://10.0.0.1", "unknown scheme \"ftp\""),
        ("10.0.0.1:0", "port 0"),
        ("10.0.0.1:http", "not a number"),
        ("https://", "no host"),
        ("https://10.0.0.1/redfish?x=1", "query"),
        ("https://10.0.0.1#top", "fragment"),
    ] {
        let err = site.fails(&["machine", "add", "--id", "m1", "--bmc", bmc]).await;
        assert!(err.contains(&format!("{bmc:?}")) && err.contains(why), "{bmc}: {err}");
    }
    let err = site.fails(&["machine", "add", "--id", "m1", "--bmc", "https://root:hunter2@10.0.0.1"]).await;
    assert!(err.contains("user-info") && !err.contains("hunter2"), "{err}");
    assert!(stored_bmcs(&site).await.is_empty());
    assert_eq!(site.audit_count().await, 0);
}

/// Finding 11: one BMC written four ways was four machines. Now the first registration wins and
/// every other spelling (or the other scheme on the same port) is refused, naming the address as
/// given and the machine that has it; nothing is written.
#[tokio::test]
async fn machine_add_refuses_a_bmc_another_machine_has_in_any_spelling() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "first", "--bmc", "http://10.0.4.17:8000"]).await;
    for (n, bmc) in [
        "10.0.4.17:8000",
        "http://10.0.4.17:8000/",
        "HTTP://10.0.4.17:8000",
        "HTTP://10.0.4.17:8000/",
        "https://10.0.4.17:8000",
    ]
    .iter()
    .enumerate()
    {
        let id = format!("dup-{n}");
        let err = site.fails(&["machine", "add", "--id", &id, "--bmc", bmc]).await;
        assert!(err.contains(&format!("{bmc:?}")), "names the address as given: {err}");
        assert!(err.contains("registered to machine first") && err.contains("http://10.0.4.17:8000"), "{err}");
    }
    assert_eq!(stored_bmcs(&site).await, [("first".to_string(), "http://10.0.4.17:8000".to_string())]);
    assert_eq!(site.audit_count().await, 1, "only the first add is audited");

    // Re-adding the same machine with its own address (any spelling) stays a refresh.
    site.ok(&[
        "machine",
        "add",
        "--id",
        "first",
        "--bmc",
        "HTTP://10.0.4.17:8000/",
        "--state",
        "Assigned",
        "--instance",
        "i-1",
    ])
    .await;
    let store = site.store().await;
    let first = store.machine_get("first").await.unwrap().unwrap();
    assert_eq!(
        (first.bmc_address.to_string(), first.state.as_str()),
        ("http://10.0.4.17:8000".to_string(), "Assigned")
    );
    store.close().await;
    // A machine may not move onto another machine's BMC either.
    site.ok(&["machine", "add", "--id", "second", "--bmc", "10.0.4.18"]).await;
    let err = site.fails(&["machine", "add", "--id", "second", "--bmc", "http://10.0.4.17:8000"]).await;
    assert!(err.contains("registered to machine first"), "{err}");
    assert_eq!(stored_bmcs(&site).await[1], ("second".to_string(), "https://10.0.4.18:443".to_string()));
}

/// A fleet file in bmc-sim's format; `hosts` are `(id, listen address)`.
fn fleet_file(tls: bool, hosts: &[(&str, &str)]) -> String {
    let mut text = format!("tls = {tls}\n");
    for (id, addr) in hosts {
        text.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"{addr}\"\n\
             password = \"pw-{id}\"\nfirmware = [ {{ id = \"BMC\", version = \"1.0\" }} ]\n"
        ));
    }
    text
}

#[tokio::test]
async fn machine_import_writes_the_scheme_and_is_all_or_nothing() {
    let site = Site::new();
    let plain = site.write("plain.toml", &fleet_file(false, &[("a", "127.0.0.1:9001"), ("b", "127.0.0.1:9002")]));
    site.ok(&["machine", "import", "--fleet", plain.to_str().unwrap()]).await;
    let tls = site.write("tls.toml", &fleet_file(true, &[("t", "127.0.0.2:9443")]));
    site.ok(&["machine", "import", "--fleet", tls.to_str().unwrap()]).await;
    let expected = [
        ("a".to_string(), "http://127.0.0.1:9001".to_string()),
        ("b".to_string(), "http://127.0.0.1:9002".to_string()),
        ("t".to_string(), "https://127.0.0.2:9443".to_string()),
    ];
    assert_eq!(stored_bmcs(&site).await, expected, "tls = false registers plain http, the scheme written out");
    // Importing the same file again is a refresh.
    site.ok(&["machine", "import", "--fleet", plain.to_str().unwrap()]).await;
    assert_eq!(stored_bmcs(&site).await, expected);
    let audits = site.audit_count().await;

    // A host on a BMC another machine has: the whole file is refused, its other hosts included.
    let clash = site.write("clash.toml", &fleet_file(false, &[("c", "127.0.0.1:9003"), ("d", "127.0.0.1:9001")]));
    let err = site.fails(&["machine", "import", "--fleet", clash.to_str().unwrap()]).await;
    assert!(err.contains("clash.toml") && err.contains("host d") && err.contains("registered to machine a"), "{err}");
    assert!(err.contains("nothing was imported"), "{err}");
    // Two hosts of one file on one BMC: refused too (the fleet file itself forbids it).
    let twice = site.write("twice.toml", &fleet_file(false, &[("e", "127.0.0.1:9005"), ("f", "127.0.0.1:9005")]));
    let err = site.fails(&["machine", "import", "--fleet", twice.to_str().unwrap()]).await;
    assert!(err.contains("twice.toml") && err.contains("127.0.0.1:9005"), "{err}");
    // Port 0 (pick a free port) is a listen address, not one a BMC can be reached at.
    let zero = site.write("zero.toml", &fleet_file(false, &[("g", "127.0.0.1:9007"), ("h", "127.0.0.1:0")]));
    let err = site.fails(&["machine", "import", "--fleet", zero.to_str().unwrap()]).await;
    assert!(err.contains("host h") && err.contains("port 0"), "{err}");

    assert_eq!(stored_bmcs(&site).await, expected, "nothing of a refused file is written");
    let store = site.store().await;
    for id in ["c", "e", "g"] {
        assert_eq!(store.credentials_get(id).await.unwrap(), None, "no login of a refused file is stored");
    }
    assert_eq!(store.credentials_get("a").await.unwrap().unwrap().password.expose(), "pw-a");
    store.close().await;
    assert_eq!(site.audit_count().await, audits);

    // A file that does not say: https, as `machine add` means by a bare address.
    let said = fleet_file(false, &[("u", "127.0.0.3:9443")]);
    let unsaid = site.write("unsaid.toml", said.trim_start_matches("tls = false\n"));
    site.ok(&["machine", "import", "--fleet", unsaid.to_str().unwrap()]).await;
    let machines = stored_bmcs(&site).await;
    assert!(machines.contains(&("u".to_string(), "https://127.0.0.3:9443".to_string())), "{machines:?}");
}

/// Lookups by address accept any spelling: the stored (canonical) address is found from a bare
/// host, host:port, or a URL with a trailing slash.
#[tokio::test]
async fn get_report_finds_the_bmc_by_any_spelling_of_its_address() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "m1", "--bmc", "10.0.4.17:443"]).await;
    site.ok(&["machine", "add", "--id", "sim", "--bmc", "http://127.0.0.1:8000"]).await;
    let store = site.store().await;
    for m in store.machine_list().await.unwrap() {
        let report = hostfw_model::InventoryReport {
            vendor: "Dell".into(),
            model: "PowerEdge R760".into(),
            serial: None,
            power_state: None,
            members: vec![],
        };
        store.report_put(&m.bmc_address, Some(&m.id), &Ok(report)).await.unwrap();
    }
    store.close().await;
    for form in ["10.0.4.17", "10.0.4.17:443", "https://10.0.4.17", "HTTPS://10.0.4.17:443/"] {
        let out = site.ok(&["site-explorer", "get-report", "managed-host", form]).await;
        assert!(out.contains("BMC:         https://10.0.4.17:443") && out.contains("Machine:     m1"), "{form}: {out}");
    }
    for form in ["127.0.0.1:8000", "127.0.0.1", "http://127.0.0.1:8000/"] {
        let out = site.ok(&["site-explorer", "get-report", "managed-host", form]).await;
        assert!(out.contains("Machine:     sim"), "{form}: {out}");
    }
    let err = site.fails(&["site-explorer", "get-report", "managed-host", "https://127.0.0.1:8000"]).await;
    assert!(err.contains("no exploration report"), "a written scheme is taken at its word: {err}");
    let err = site.fails(&["site-explorer", "get-report", "managed-host", "ftp://10.0.4.17"]).await;
    assert!(err.contains("\"ftp://10.0.4.17\"") && err.contains("unknown scheme"), "{err}");
    let err = site.fails(&["site-explorer", "re-explore", "ftp://10.0.4.17"]).await;
    assert!(err.contains("unknown scheme"), "{err}");
}
