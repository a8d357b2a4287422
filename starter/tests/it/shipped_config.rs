//! The shipped `config/site.toml` and its catalogs (captured and generic) load and name the
//! models the demo needs.

use std::path::Path;

#[tokio::test]
async fn the_shipped_site_config_and_catalog_load() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/site.toml");
    let mut site = hostfw_model::SiteConfig::load(&config).unwrap_or_else(|e| panic!("{e}"));
    let catalog = hostfw_model::Catalog::load(&site).unwrap_or_else(|e| panic!("{e}"));
    // The captured hardware (../shared/redfish/vendor-mockups), as those BMCs name themselves.
    for (vendor, model) in [
        ("Dell Inc.", "PowerEdge R750"),
        ("Supermicro", "SYS-821GE-TNHR"),
        ("NVIDIA", "DGXH100"),
        ("NVIDIA", "GB200 NVL"),
    ] {
        assert!(catalog.find(vendor, model).is_some(), "{vendor} {model} in {:?}", catalog.models());
    }
    let smc = catalog.find("Supermicro", "SYS-821GE-TNHR").unwrap();
    assert!(smc.explicit_start_needed, "the demo's explicit-start model");
    for (vendor, model) in [("Dell Inc.", "PowerEdge R750"), ("Supermicro", "SYS-821GE-TNHR"), ("NVIDIA", "DGXH100")] {
        assert!(catalog.find(vendor, model).unwrap().lockdown.is_some(), "{model}: lockdown setting");
    }
    assert!(catalog.find("NVIDIA", "GB200 NVL").unwrap().ac_cycle.is_some(), "GB200: ac_cycle setting");
    assert_eq!(site.machine_updater.max_concurrent_machine_updates_absolute, Some(8));

    // `make demo` without the captured trees: the generic fleet's catalog (firmware-generic/).
    site.firmware_global.firmware_directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/firmware-generic");
    let generic = hostfw_model::Catalog::load(&site).unwrap_or_else(|e| panic!("{e}"));
    for (vendor, model) in
        [("Dell", "PowerEdge R760"), ("Supermicro", "SYS-821GE-TNHR"), ("Nvidia", "DGX H100"), ("Nvidia", "GB200 NVL")]
    {
        assert!(generic.find(vendor, model).is_some(), "{vendor} {model} in {:?}", generic.models());
    }
    assert!(generic.find("Nvidia", "GB200 NVL").unwrap().ac_cycle.is_none(), "the generic GB200 needs no power drain");
}
