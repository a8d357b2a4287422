//! libFuzzer entry of target `site_config`: the logic and properties are `hostfw_fuzz_targets::site_config`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::site_config::run(data));
