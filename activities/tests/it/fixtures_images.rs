//! The simulator images `hostfw-fixtures` writes are the ones bmc-sim recognises: the fixtures
//! crate may not depend on bmc-sim, so its copy of the image header is pinned here (a crate that
//! dev-depends on both).

#[test]
fn a_fixtures_image_starts_with_the_header_bmc_sim_builds() {
    assert_eq!(hostfw_fixtures::SIM_IMAGE_MAGIC, hostfw_bmc_sim::IMAGE_MAGIC);
    let dir = tempfile::tempdir().unwrap();
    hostfw_fixtures::write_image(dir.path(), "dell/bios.bin", "^BIOS$", "3.0");
    let written = std::fs::read(dir.path().join("dell/bios.bin")).unwrap();
    let header = hostfw_bmc_sim::firmware_image("^BIOS$", "3.0", 0);
    assert!(written.starts_with(&header), "{:?}", String::from_utf8_lossy(&written[..header.len().min(written.len())]));
    assert!(written.len() > header.len(), "an image has a payload");
}
