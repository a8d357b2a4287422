//! libFuzzer entry of target `catalog_files`: the logic and properties are `hostfw_fuzz_targets::catalog_files`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hostfw_fuzz_targets::catalog_files::run(data));
