//! Who a script runs as and what it inherits: the environment allow-list ([`INHERITED_ENV`]) and
//! the optional user a script is started as ([`RunAs`], resolved from `/etc/passwd` and NSS with
//! `getpwnam_r`). The runner starts every script with a cleared environment: only the variables
//! named here are taken from this process, the caller adds its own (`ScriptSpec::env`), and
//! nothing else of the worker's or Scout's environment (database URLs, the site key, Temporal
//! settings, API tokens) reaches a vendor script.

use std::ffi::{CStr, CString};

/// The variables a script inherits from this process, when they are set: where programs are
/// found, the locale and time zone its tools print in, and where temporary files go.
pub const INHERITED_ENV: &[&str] = &["PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TMPDIR"];

/// The `PATH` a script gets when this process has none.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A user a script is started as (its uid, primary gid, and no supplementary groups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl RunAs {
    /// Looks `name` up in the user database; a clear error when it is not there.
    pub fn lookup(name: &str) -> Result<RunAs, String> {
        let c_name = CString::new(name).map_err(|_| format!("user name {name:?} contains a NUL byte"))?;
        let mut buf = vec![0u8; 16 * 1024];
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; `buf` outlives the use of `pwd`'s fields.
        let rc =
            unsafe { libc::getpwnam_r(c_name.as_ptr(), &mut pwd, buf.as_mut_ptr().cast(), buf.len(), &mut result) };
        if rc != 0 {
            return Err(format!("looking up user {name:?}: {}", std::io::Error::from_raw_os_error(rc)));
        }
        if result.is_null() {
            return Err(format!("there is no user {name:?} on this host"));
        }
        // SAFETY: getpwnam_r filled `pwd` and its strings point into `buf`.
        let found = unsafe { CStr::from_ptr(pwd.pw_name) }.to_string_lossy().into_owned();
        Ok(RunAs { name: found, uid: pwd.pw_uid, gid: pwd.pw_gid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_nobody_are_found_and_a_stranger_is_not() {
        assert_eq!(RunAs::lookup("root").unwrap().uid, 0);
        let nobody = RunAs::lookup("nobody").unwrap();
        assert_ne!(nobody.uid, 0);
        let e = RunAs::lookup("no-such-user-hostfw").unwrap_err();
        assert!(e.contains("no user \"no-such-user-hostfw\""), "{e}");
        assert!(RunAs::lookup("a\0b").unwrap_err().contains("NUL"));
    }
}
