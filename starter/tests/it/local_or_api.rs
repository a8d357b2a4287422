//! The API or `--local` (issue 27): a site command without `-a`, a context or `--local` is
//! refused naming the ways and opens nothing; `--local` with `-a` is refused too.

use crate::common::Site;

/// Issue 27: a command that reads or changes the site goes through the API; without `-a`, a
/// context or the break-glass `--local`, it is refused naming the ways, and opens nothing (no site
/// database is created). `--local` with `-a` is refused too.
#[test]
fn without_an_api_or_local_a_site_command_is_refused_and_opens_nothing() {
    let site = Site::new();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hostfw"))
            .env("HOSTFW_CLI_CONFIG", site.dir.join("no-cli.toml"))
            .env_remove("HOSTFW_API")
            .env_remove("HOSTFW_CONTEXT")
            .env_remove("HOSTFW_LOCAL")
            .args(["--config", site.config.to_str().unwrap()])
            .args(args)
            .output()
            .expect("hostfw runs")
    };
    for args in [&["machine", "list"][..], &["machine", "add", "--id", "m1", "--bmc", "10.0.0.1"], &["plan"]] {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains("goes through the hostfw API") && stderr.contains("--local"), "{args:?}: {stderr}");
    }
    assert!(!site.dir.join("site.db").exists(), "the site database was not opened");
    let both = run(&["-a", "http://127.0.0.1:1", "--local", "plan"]);
    assert!(String::from_utf8_lossy(&both.stderr).contains("give one of them"), "{both:?}");
    let local = run(&["--local", "machine", "list"]);
    assert!(local.status.success(), "{}", String::from_utf8_lossy(&local.stderr));
}
