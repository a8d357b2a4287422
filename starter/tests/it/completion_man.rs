//! `hostfw completion SHELL` and `hostfw man --out DIR`: generated from the argument definitions,
//! so every command is in the completion script and has its man page. Neither needs a site.

use std::collections::BTreeSet;
use std::process::Command;

use clap::CommandFactory;
use hostfw_starter::cli::Cli;

/// `hostfw-<path>` of every command at every depth (`hostfw`, `hostfw-machine`, `hostfw-machine-add`, ...).
fn every_command() -> BTreeSet<String> {
    fn walk(cmd: &clap::Command, name: &str, out: &mut BTreeSet<String>) {
        out.insert(name.to_string());
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{name}-{}", sub.get_name()), out);
        }
    }
    let mut out = BTreeSet::new();
    walk(&Cli::command(), "hostfw", &mut out);
    out
}

fn hostfw(args: &[&str]) -> String {
    // No config file: these commands must not open a site.
    let out = Command::new(env!("CARGO_BIN_EXE_hostfw"))
        .args(["--config", "/nonexistent/site.toml"])
        .args(args)
        .output()
        .expect("run hostfw");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_completion_offers_every_subcommand() {
    let script = hostfw(&["completion", "bash"]);
    assert!(script.contains("complete -F") && script.contains("hostfw"), "{script}");
    for top in Cli::command().get_subcommands() {
        assert!(script.contains(top.get_name()), "{} missing from the bash completion", top.get_name());
    }
    for nested in ["firmware-config", "reset-host-reprovisioning", "mark-manual-upgrade-complete", "check"] {
        assert!(script.contains(nested), "{nested} missing from the bash completion");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        assert!(hostfw(&["completion", shell]).contains("hostfw"), "{shell}");
    }
}

#[test]
fn man_writes_one_roff_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = hostfw(&["man", "--out", dir.path().join("man1").to_str().unwrap()]);
    let pages: BTreeSet<String> = std::fs::read_dir(dir.path().join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".1").to_string())
        .collect();
    let expected: BTreeSet<String> = every_command().into_iter().filter(|n| !n.ends_with("-help")).collect();
    assert_eq!(pages, expected);
    assert!(out.contains(&format!("wrote {} man pages", expected.len())), "{out}");
    for page in &pages {
        let text = std::fs::read_to_string(dir.path().join("man1").join(format!("{page}.1"))).unwrap();
        assert!(text.lines().any(|l| l.starts_with(".TH ")), "{page}.1 has no .TH header");
        assert!(text.contains(&format!(".TH {} 1", page.to_uppercase())), "{page}.1 title");
        assert!(text.contains(".SH NAME"), "{page}.1 has no NAME section");
    }
    let add = std::fs::read_to_string(dir.path().join("man1/hostfw-machine-add.1")).unwrap();
    assert!(add.contains("\\-\\-bmc"), "options are documented:\n{add}");
}
