//! The fixtures of the e2e tests: the catalogs, simulator images, flash scripts and fleets of
//! `hostfw-fixtures` (re-exported here under the kit's old paths), and what only the e2e tests
//! read (the token line `hostfw token create` prints). Must not grow second copies of what
//! `hostfw-fixtures` owns.

pub use hostfw_fixtures::catalog::*;
pub use hostfw_fixtures::fleets::*;
pub use hostfw_fixtures::images::*;

/// The secret line `hostfw token create` prints (the `hfw_...` line after its sentence).
pub fn token_secret(printed: &str) -> String {
    printed.lines().find(|l| l.starts_with("hfw_")).unwrap_or_else(|| panic!("no token in {printed}")).to_string()
}
