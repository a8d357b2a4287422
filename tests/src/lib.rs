//! End-to-end test crate: see tests/.
