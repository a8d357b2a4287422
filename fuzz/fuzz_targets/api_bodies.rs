//! libFuzzer entry of target `api_bodies`: the logic and properties are `hostfw_fuzz_targets::api_bodies`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::api_bodies::run(data));
