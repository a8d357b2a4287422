//! Integration tests of hostfw-logging.

mod lines;
