//! libFuzzer entry of target `redfish_models`: the logic and properties are `hostfw_fuzz_targets::redfish_models`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::redfish_models::run(data));
