//! libFuzzer entry of target `time_args`: the logic and properties are `hostfw_fuzz_targets::time_args`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::time_args::run(data));
