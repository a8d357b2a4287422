//! The typed site-config builder, [`SiteToml`]: it lives in `hostfw-fixtures` (so every crate's
//! tests share it); the kit re-exports it here under its old path. Must not grow a second builder.

pub use hostfw_fixtures::SiteToml;
