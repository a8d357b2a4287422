//! `hostfw man --out DIR`: one roff man page per command, generated from the argument
//! definitions in `cli`: `hostfw.1`, then `hostfw-<sub>.1` for every subcommand at every depth
//! (`hostfw-machine-add.1`, `hostfw-firmware-config-set.1`, ...).
//!
//! Owns walking the command tree and naming the pages. View one with `man -l DIR/hostfw.1`, or
//! install them under a `man1` directory of `MANPATH`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::CommandFactory;

use crate::cli::Cli;

/// Writes every page into `dir` (created if missing) and returns their paths, `hostfw.1` first.
pub fn write_pages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating the man page directory {}", dir.display()))?;
    let mut root = Cli::command();
    root.build();
    let mut written = Vec::new();
    write_tree(&root, "hostfw", dir, &mut written)?;
    Ok(written)
}

/// Writes the pages and says where (with `--format json`, a JSON object naming them).
pub fn write_all(dir: &Path, format: crate::cli::Format) -> anyhow::Result<()> {
    let written = write_pages(dir)?;
    let json = serde_json::json!({ "action": "man", "dir": dir, "pages": written });
    crate::output::result(format, &json, format!("wrote {} man pages to {}", written.len(), dir.display()))
}

/// The page of `cmd` (named `name`) and, recursively, of its subcommands.
fn write_tree(cmd: &clap::Command, name: &str, dir: &Path, written: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    // Titled with the full command name, so `man hostfw-machine-add` shows the right page.
    let mut roff = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(name.to_uppercase())
        .render(&mut roff)
        .with_context(|| format!("rendering the man page of {name}"))?;
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, roff).with_context(|| format!("writing {}", path.display()))?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_tree(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}
