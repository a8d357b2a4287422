//! `[site] database_password_file`: the site database password kept out of the config file (a
//! Docker or systemd secret) and put into the PostgreSQL `database_url` when the config loads.
//!
//! Owns checking that the URL can take a password (PostgreSQL, a user name, no password of its
//! own) and inserting it percent-encoded. It must not read files (`config::load` does) nor log.

/// Why the password cannot go into the URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum PasswordUrlError {
    #[error("only a postgres:// or postgresql:// database_url takes a password")]
    NotPostgres,
    #[error("database_url needs a user name (postgres://USER@host/db) to take the password")]
    NoUser,
    #[error("database_url already has a password: remove it or remove database_password_file")]
    HasPassword,
    #[error("the password file is empty")]
    Empty,
}

/// Check that `url` can take a password (at config load, before any file is read).
pub(super) fn check_url(url: &str) -> Result<(), PasswordUrlError> {
    let (_, rest) = split_scheme(url)?;
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let Some((userinfo, _host)) = authority.rsplit_once('@') else { return Err(PasswordUrlError::NoUser) };
    if userinfo.contains(':') {
        return Err(PasswordUrlError::HasPassword);
    }
    if userinfo.is_empty() {
        return Err(PasswordUrlError::NoUser);
    }
    Ok(())
}

/// `postgres://user@host/db` + `pw` → `postgres://user:<pw percent-encoded>@host/db`. The file's
/// text is the password without its trailing line break.
pub(super) fn insert(url: &str, file_text: &str) -> Result<String, PasswordUrlError> {
    check_url(url)?;
    let password = file_text.trim_end_matches(['\n', '\r']);
    if password.is_empty() {
        return Err(PasswordUrlError::Empty);
    }
    let (scheme, rest) = split_scheme(url)?;
    let at = rest.find('@').ok_or(PasswordUrlError::NoUser)?;
    let (user, host) = rest.split_at(at);
    Ok(format!("{scheme}://{user}:{}{host}", percent_encode(password)))
}

fn split_scheme(url: &str) -> Result<(&str, &str), PasswordUrlError> {
    match url.split_once("://") {
        Some((scheme @ ("postgres" | "postgresql"), rest)) => Ok((scheme, rest)),
        _ => Err(PasswordUrlError::NotPostgres),
    }
}

/// Every byte but RFC 3986's unreserved characters as `%XX`.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_goes_in_encoded() {
        let url = "postgres://hostfw@postgresql:5432/hostfw?sslmode=disable";
        assert_eq!(
            insert(url, "p@ss:w/rd%\n").unwrap(),
            "postgres://hostfw:p%40ss%3Aw%2Frd%25@postgresql:5432/hostfw?sslmode=disable"
        );
        assert_eq!(insert("postgresql://u@h/d", "plain").unwrap(), "postgresql://u:plain@h/d");
    }

    #[test]
    fn urls_that_cannot_take_one_are_refused() {
        assert_eq!(check_url("sqlite://data/h.db"), Err(PasswordUrlError::NotPostgres));
        assert_eq!(check_url("postgres://h/d"), Err(PasswordUrlError::NoUser));
        assert_eq!(check_url("postgres://@h/d"), Err(PasswordUrlError::NoUser));
        assert_eq!(check_url("postgres://u:x@h/d"), Err(PasswordUrlError::HasPassword));
        assert_eq!(insert("postgres://u@h/d", "\n"), Err(PasswordUrlError::Empty));
    }
}
