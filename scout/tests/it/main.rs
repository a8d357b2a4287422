//! The integration tests of `hostfw-scout`, one test binary: one module per concern
//! (each module's doc says what it covers).

mod common;

mod downloads;
mod lifecycle;
mod once;
mod script_run;
mod signatures;
