//! libFuzzer entry of target `scout_package`: the logic and properties are `hostfw_fuzz_targets::scout_package`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::scout_package::run(data));
