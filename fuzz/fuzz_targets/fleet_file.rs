//! libFuzzer entry of target `fleet_file`: the logic and properties are `hostfw_fuzz_targets::fleet_file`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::fleet_file::run(data));
