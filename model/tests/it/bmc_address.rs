//! `BmcAddress` and `BmcLookup`: every accepted form and its canonical text, every refusal with the
//! input and the reason in its message, serde, and the lookup candidates.

use std::net::SocketAddr;

use hostfw_model::{BmcAddress, BmcAddressError, BmcAddressProblem, BmcLookup, Scheme};

fn canon(input: &str) -> String {
    input.parse::<BmcAddress>().unwrap_or_else(|e| panic!("{input:?} should parse: {e}")).to_string()
}

fn refused(input: &str) -> BmcAddressError {
    match input.parse::<BmcAddress>() {
        Ok(a) => panic!("{input:?} should be refused, parsed as {a}"),
        Err(e) => e,
    }
}

#[test]
fn a_bare_address_means_https_on_443() {
    let a: BmcAddress = "10.0.4.17".parse().unwrap();
    assert_eq!((a.scheme(), a.host(), a.port(), a.path_prefix()), (Scheme::Https, "10.0.4.17", 443, ""));
    assert_eq!(a.to_string(), "https://10.0.4.17:443");
    assert_eq!(a.origin(), "https://10.0.4.17:443");
    assert_eq!(a.authority(), "10.0.4.17:443");
    // docs/operations.md's example: a bare ip:port is https too (the password never goes out in clear).
    assert_eq!(canon("10.0.4.17:443"), "https://10.0.4.17:443");
    assert_eq!(canon("10.0.4.17:8000"), "https://10.0.4.17:8000");
}

#[test]
fn http_only_when_written_with_port_80_by_default() {
    let a: BmcAddress = "http://127.0.0.1".parse().unwrap();
    assert_eq!((a.scheme(), a.port()), (Scheme::Http, 80));
    assert_eq!(a.to_string(), "http://127.0.0.1:80");
    assert_eq!(canon("http://127.0.0.1:8000"), "http://127.0.0.1:8000");
    assert_eq!(canon("https://10.0.0.1"), "https://10.0.0.1:443");
}

#[test]
fn every_spelling_of_one_bmc_is_one_address() {
    for input in [
        "http://10.0.4.17:8000",
        "http://10.0.4.17:8000/",
        "HTTP://10.0.4.17:8000",
        "Http://10.0.4.17:8000///",
        "  http://10.0.4.17:8000  ",
    ] {
        assert_eq!(canon(input), "http://10.0.4.17:8000", "{input:?}");
    }
    for input in ["10.0.4.17", "10.0.4.17:443", "10.0.4.17:443/", "https://10.0.4.17", "HTTPS://10.0.4.17:443/"] {
        assert_eq!(canon(input), "https://10.0.4.17:443", "{input:?}");
    }
    assert_eq!(
        "HTTP://BMC-17.Example.NET:8000".parse::<BmcAddress>().unwrap(),
        "http://bmc-17.example.net:8000".parse::<BmcAddress>().unwrap()
    );
}

#[test]
fn host_names_and_ipv6() {
    assert_eq!(canon("bmc-17.example.net:8443"), "https://bmc-17.example.net:8443");
    assert_eq!(canon("BMC_17"), "https://bmc_17:443");
    assert_eq!(canon("[fe80::1]:8443"), "https://[fe80::1]:8443");
    assert_eq!(canon("[FE80:0:0::1]"), "https://[fe80::1]:443");
    assert_eq!(canon("http://[::1]:9000/"), "http://[::1]:9000");
    assert_eq!(canon("fe80::1"), "https://[fe80::1]:443", "a bare IPv6 address has no port");
    let v6: BmcAddress = "[fe80::1]:8443".parse().unwrap();
    assert_eq!((v6.host(), v6.authority()), ("fe80::1", "[fe80::1]:8443".to_string()));
}

#[test]
fn a_path_prefix_is_kept_without_its_trailing_slash() {
    let a: BmcAddress = "http://127.0.0.1:9000/bmc/H1/".parse().unwrap();
    assert_eq!(a.path_prefix(), "/bmc/H1", "paths keep their case");
    assert_eq!(a.origin(), "http://127.0.0.1:9000");
    assert_eq!(a.to_string(), "http://127.0.0.1:9000/bmc/H1");
    assert_eq!(canon("127.0.0.1:9000/bmc/h1"), "https://127.0.0.1:9000/bmc/h1");
    assert_ne!(canon("http://127.0.0.1:9000/bmc/h1"), canon("http://127.0.0.1:9000/bmc/h2"));
}

#[test]
fn canonical_text_parses_to_itself() {
    for input in ["10.0.0.1", "http://h:1", "[::1]:2/x/y", "https://a.b:65535/p%20q"] {
        let once = canon(input);
        assert_eq!(canon(&once), once, "{input:?}");
    }
}

#[test]
fn from_a_listener_address() {
    let addr: SocketAddr = "127.0.0.1:8000".parse().unwrap();
    assert_eq!(BmcAddress::from_socket_addr(Scheme::Http, addr).unwrap().to_string(), "http://127.0.0.1:8000");
    let v6: SocketAddr = "[::1]:8443".parse().unwrap();
    assert_eq!(BmcAddress::from_socket_addr(Scheme::Https, v6).unwrap().to_string(), "https://[::1]:8443");
    let zero: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let e = BmcAddress::from_socket_addr(Scheme::Http, zero).unwrap_err();
    assert_eq!(e.problem, BmcAddressProblem::PortZero);
}

#[test]
fn serde_is_the_canonical_string() {
    let a: BmcAddress = "HTTP://10.0.0.1:8000/".parse().unwrap();
    assert_eq!(serde_json::to_string(&a).unwrap(), r#""http://10.0.0.1:8000""#);
    let back: BmcAddress = serde_json::from_str(r#""10.0.0.1""#).unwrap();
    assert_eq!(back.to_string(), "https://10.0.0.1:443");
    let e = serde_json::from_str::<BmcAddress>(r#""ftp://x""#).unwrap_err();
    assert!(e.to_string().contains("ftp"), "{e}");
}

#[test]
fn empty_input_or_host_is_refused() {
    for input in ["", "   "] {
        assert_eq!(refused(input).problem, BmcAddressProblem::Empty, "{input:?}");
    }
    for input in ["https://", "http://:80", ":443", "https:///redfish", "[]:443"] {
        assert_eq!(refused(input).problem, BmcAddressProblem::EmptyHost, "{input:?}");
    }
}

#[test]
fn bad_ports_are_refused_naming_the_port() {
    let e = refused("10.0.0.1:0");
    assert_eq!(e.problem, BmcAddressProblem::PortZero);
    assert!(e.to_string().contains("\"10.0.0.1:0\"") && e.to_string().contains("port 0"), "{e}");
    for (input, port) in
        [("10.0.0.1:https", "https"), ("10.0.0.1:65536", "65536"), ("10.0.0.1:", ""), ("10.0.0.1:-1", "-1")]
    {
        let e = refused(input);
        assert_eq!(e.problem, BmcAddressProblem::PortNotANumber { port: port.into() }, "{input:?}");
        assert!(e.to_string().contains(input) && e.to_string().contains("not a number"), "{e}");
    }
}

#[test]
fn unknown_schemes_are_refused_naming_the_scheme() {
    for (input, scheme) in [("ftp://10.0.0.1", "ftp"), ("redfish://bmc:443", "redfish"), ("://10.0.0.1", "")] {
        let e = refused(input);
        assert_eq!(e.problem, BmcAddressProblem::UnknownScheme { scheme: scheme.into() }, "{input:?}");
        assert!(e.to_string().contains(input) && e.to_string().contains("http:// or https://"), "{e}");
    }
}

#[test]
fn user_info_is_refused_without_echoing_the_password() {
    for input in ["https://root:hunter2@10.0.0.1", "root:hunter2@10.0.0.1:443", "http://root@10.0.0.1"] {
        let e = refused(input);
        assert_eq!(e.problem, BmcAddressProblem::UserInfo, "{input:?}");
        let text = e.to_string();
        assert!(!text.contains("hunter2") && !text.contains("root"), "{text}");
        assert!(text.contains("***@10.0.0.1") && text.contains("user-info"), "{text}");
    }
}

#[test]
fn query_and_fragment_are_refused() {
    let e = refused("https://10.0.0.1/redfish?x=1");
    assert_eq!(e.problem, BmcAddressProblem::Query);
    assert!(e.to_string().contains("?x=1"), "{e}");
    assert_eq!(refused("10.0.0.1:443#top").problem, BmcAddressProblem::Fragment);
}

#[test]
fn bad_hosts_and_paths_are_refused_with_the_reason() {
    for (input, host) in [
        ("10.0.0.256", "10.0.0.256"),
        ("1.2.3", "1.2.3"),
        ("bad host", "bad host"),
        ("-bmc.example", "-bmc.example"),
        ("bmc..example", "bmc..example"),
        ("fe80::1:443:x", "fe80::1:443:x"),
        ("[fe80::1", "[fe80::1"),
        ("[fe80::zz]:443", "fe80::zz"),
        ("[::1]x", "[::1]x"),
        ("bmç", "bmç"),
    ] {
        match refused(input).problem {
            BmcAddressProblem::InvalidHost { host: h, reason } => {
                assert_eq!(h, host, "{input:?}");
                assert!(!reason.is_empty());
            }
            other => panic!("{input:?}: expected InvalidHost, got {other:?}"),
        }
    }
    for input in ["https://10.0.0.1/a b", "https://10.0.0.1/%zz", "https://10.0.0.1/<x>"] {
        assert!(matches!(refused(input).problem, BmcAddressProblem::InvalidPath { .. }), "{input:?}");
    }
}

#[test]
fn lookup_candidates_of_a_bare_host() {
    let l: BmcLookup = "10.0.4.17".parse().unwrap();
    assert_eq!(l.address().to_string(), "https://10.0.4.17:443");
    let exact: Vec<String> = l.exact_candidates().iter().map(ToString::to_string).collect();
    assert_eq!(exact, ["https://10.0.4.17:443", "http://10.0.4.17:80"]);
    assert_eq!(l.host_prefixes(), ["https://10.0.4.17:", "http://10.0.4.17:"]);
    let v6: BmcLookup = "fe80::1".parse().unwrap();
    assert_eq!(v6.host_prefixes(), ["https://[fe80::1]:", "http://[fe80::1]:"]);
}

#[test]
fn lookup_candidates_of_written_parts() {
    let exact = |input: &str| -> (Vec<String>, Vec<String>) {
        let l: BmcLookup = input.parse().unwrap();
        (l.exact_candidates().iter().map(ToString::to_string).collect(), l.host_prefixes())
    };
    // A port but no scheme: that listener over either scheme, https first; no host-only match.
    assert_eq!(
        exact("10.0.4.17:8000"),
        (vec!["https://10.0.4.17:8000".into(), "http://10.0.4.17:8000".into()], vec![])
    );
    // A written scheme is taken at its word.
    assert_eq!(exact("https://10.0.4.17:443/"), (vec!["https://10.0.4.17:443".into()], vec![]));
    assert_eq!(exact("HTTP://10.0.4.17"), (vec!["http://10.0.4.17:80".into()], vec![]));
    // A path makes it more than a host.
    assert_eq!(exact("10.0.4.17/bmc/1").1, Vec::<String>::new());
    // From a stored address: that address only.
    let stored: BmcAddress = "http://10.0.4.17:8000".parse().unwrap();
    let l = BmcLookup::from(stored.clone());
    assert_eq!((l.exact_candidates(), l.host_prefixes()), (vec![stored], vec![]));
    assert!("ftp://x".parse::<BmcLookup>().is_err());
}
