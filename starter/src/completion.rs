//! `hostfw completion SHELL`: the shell completion script, generated from the argument
//! definitions in `cli` (so it always matches the commands), printed to stdout.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hostfw", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Print the completion script for `shell` (with `--format json`, inside a JSON object:
/// `{"shell", "script"}`).
pub fn print(shell: Shell, format: crate::cli::Format) -> anyhow::Result<()> {
    match format {
        crate::cli::Format::Json => {
            let json = serde_json::json!({ "shell": shell.to_string(), "script": script(shell) });
            crate::outln!("{}", crate::json_contract::to_json(&json)?);
        }
        crate::cli::Format::Table => crate::out!("{}", script(shell)),
    }
    Ok(())
}
