//! The benchmarks' sites, built with the test kit's typed site config: the kit's site with
//! benchmark timings (Redfish timeout 10 s, task timeout 5 min), and the catalog every benchmark
//! fleet is measured against (the Dell R760, BMC and BIOS both to 2.0).

use std::path::{Path, PathBuf};

use hostfw_model::SiteConfig;
use hostfw_tests::fixtures::r760;
use hostfw_tests::{free_port, Firmware, HostModel, SiteToml};

/// The R760 with both targets at 2.0, images under `bench/`.
pub fn r760_bench() -> HostModel {
    r760().component("bmc", "^BMC$", [Firmware::file("2.0", "bench/bmc.bin")]).component(
        "uefi",
        "^BIOS$",
        [Firmware::file("2.0", "bench/bios.bin")],
    )
}

/// The images of [`r760_bench`].
pub const IMAGES: &[(&str, &str, &str)] = &[("bench/bmc.bin", "^BMC$", "2.0"), ("bench/bios.bin", "^BIOS$", "2.0")];

/// A benchmark site on the dev server at `temporal_port`, task queue `task_queue`, its artifact
/// server on a free port, SQLite `site.db` in the site directory, no site workflows.
pub fn config(temporal_port: u16, task_queue: &str) -> SiteToml {
    SiteToml::new("bench")
        .temporal_port(temporal_port)
        .task_queue(task_queue)
        .artifact_port(free_port())
        .redfish("timeout", "10s")
        .redfish("task_timeout", "5m")
}

/// The end-to-end tests' short host-workflow timings, with a longer verification and heartbeat.
pub fn short_reprovision(config: SiteToml) -> SiteToml {
    config.short_host_polls().host_reprovision("verify_max_polls", 30).heartbeat_timeout("10s")
}

/// Write the site into `dir` (config, firmware images); the config as loaded.
pub fn write(dir: &Path, config: &SiteToml, images: &[(&str, &str, &str)]) -> anyhow::Result<(PathBuf, SiteConfig)> {
    hostfw_tests::site::write_dir(dir, config, images, &[])
}
