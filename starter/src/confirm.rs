//! Asking before a command changes what the fleet will do. `--yes` answers for the operator;
//! without it the question is asked on the terminal, and a command whose stdin is not a terminal
//! (a script, a pipe, CI) is refused rather than guessed at.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::bail;

/// Go on when `yes` is given or the operator answers `y`/`yes`; otherwise an error saying that
/// nothing was changed.
pub fn confirm(question: &str, yes: bool) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!("{question} Not confirmed: stdin is not a terminal, so pass --yes (or preview with --dry-run); nothing was changed");
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if is_yes(&answer) {
        Ok(())
    } else {
        bail!("not confirmed; nothing was changed")
    }
}

fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_an_explicit_yes_confirms() {
        for yes in ["y", "Y", "yes", " YES \n"] {
            assert!(super::is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "no", "yep", "ja"] {
            assert!(!super::is_yes(no), "{no:?}");
        }
    }
}
