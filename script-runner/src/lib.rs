//! Running one firmware script on this host, the one way both script routes do it: Scout's
//! packaged `upgrade.sh` on a tenant host and the Core-local route's `script` on the worker.
//!
//! - [`run`]: the script in its own process group, stdin closed, a cleared environment with only
//!   the caller's variables and the few of [`INHERITED_ENV`], optionally as another user
//!   ([`RunAs`]), an optional hard deadline enforced by coreutils
//!   `timeout` even if this process dies, the whole group SIGKILLed at the timeout, when the
//!   script exits (no straggler outlives it) and when the run is dropped (cancelled); the tails
//!   of stdout and stderr kept in bounded memory, with secrets scrubbed;
//! - [`process`]: the identity of a process on this host (`/proc/<pid>/stat`, the boot id) and
//!   the group kill, which Scout's task records and the Core-local script lock judge runs by.
//!
//! A crate of its own because its users share no other crate that may hold it: Scout must not
//! link the activities (sqlx, the site database), and `hostfw-model` is pure.

mod identity;
pub mod process;
mod run;
mod scrub;
mod tail;

pub use identity::{RunAs, DEFAULT_PATH, INHERITED_ENV};
pub use run::{run, Ending, ScriptError, ScriptEvent, ScriptRun, ScriptSpec};
pub use scrub::{forms as secret_forms, scrub};
pub use tail::last_chars;
