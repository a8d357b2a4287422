//! Asking before a command changes what the fleet will do. `--yes` answers for the operator;
//! without it the question is asked on the terminal, and a command whose stdin is not a terminal
//! (a script, a pipe, CI) is refused rather than guessed at.
//!
//! A command whose output is captured (`output::capture`: the hostfw API serving it, or an
//! embedding caller) never reads stdin: nobody could see the preview it printed. It is refused
//! with [`ConfirmationNeeded`], which the API answers as a 422 carrying the preview and the
//! question; the CLI shows both on the operator's terminal and sends the confirmed request.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::bail;

/// A change that needs the operator's confirmation was not confirmed; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{question} Not confirmed: pass --yes (through the API, `\"yes\": true`); nothing was changed")]
pub struct ConfirmationNeeded {
    /// The question the operator answers.
    pub question: String,
}

/// Go on when `yes` is given or the operator answers `y`/`yes`; otherwise an error saying that
/// nothing was changed.
pub fn confirm(question: &str, yes: bool) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    if crate::output::capturing() {
        return Err(ConfirmationNeeded { question: question.to_string() }.into());
    }
    ask(question)
}

/// Ask the operator on the terminal (the CLI side of a confirmation the API asked for).
pub fn ask(question: &str) -> anyhow::Result<()> {
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

    #[tokio::test]
    async fn a_captured_command_is_refused_without_reading_stdin() {
        let (result, _) = crate::output::capture(async { super::confirm("store it?", false) }).await;
        let e = result.unwrap_err();
        let needed = e.downcast_ref::<super::ConfirmationNeeded>().expect("ConfirmationNeeded");
        assert_eq!(needed.question, "store it?");
        let (result, _) = crate::output::capture(async { super::confirm("store it?", true) }).await;
        assert!(result.is_ok());
    }
}
