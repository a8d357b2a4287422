//! libFuzzer entry of target `redfish_replies`: the logic and properties are `hostfw_fuzz_targets::redfish_replies`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::redfish_replies::run(data));
