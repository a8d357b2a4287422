//! Fixtures: firmware catalogs built with types ([`HostModel`], [`Firmware`], [`Catalog`]) and
//! rendered by [`crate::SiteToml::catalog`]; the catalogs the tests use again and again (the Dell
//! PowerEdge R760 ones); and simulator firmware images (what a catalog points at and bmc-sim
//! understands).

use std::path::Path;

use toml::{Table, Value};

/// One `[host_models.<key>]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct HostModel {
    key: String,
    table: Table,
}

impl HostModel {
    /// `[host_models.<key>]` for `vendor` / `model`, with no component yet.
    pub fn new(key: &str, vendor: &str, model: &str) -> HostModel {
        let mut table = Table::new();
        table.insert("vendor".into(), vendor.into());
        table.insert("model".into(), model.into());
        HostModel { key: key.into(), table }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same model under another key (two variants of one model in one catalog).
    pub fn with_key(mut self, key: &str) -> HostModel {
        self.key = key.into();
        self
    }

    pub(crate) fn table(&self) -> &Table {
        &self.table
    }

    /// The install order of the components, e.g. `["bmc", "uefi"]`.
    pub fn ordering(self, components: &[&str]) -> HostModel {
        let list: Vec<Value> = components.iter().map(|c| Value::from(*c)).collect();
        self.set("ordering", list)
    }

    /// Any other key of the model table (`explicit_start_needed`, `lockdown`, …).
    pub fn set(mut self, key: &str, value: impl Into<Value>) -> HostModel {
        self.table.insert(key.into(), value.into());
        self
    }

    /// Component `kind` (e.g. `bmc`), recognised in the inventory by the regex `reported_as`, with
    /// its known firmware entries.
    pub fn component(mut self, kind: &str, reported_as: &str, firmware: impl IntoIterator<Item = Firmware>) -> HostModel {
        let mut component = Table::new();
        component.insert("current_version_reported_as".into(), reported_as.into());
        let entries: Vec<Value> = firmware.into_iter().map(|f| Value::Table(f.0)).collect();
        component.insert("known_firmware".into(), Value::Array(entries));
        let components = self
            .table
            .entry("components")
            .or_insert_with(|| Value::Table(Table::new()))
            .as_table_mut()
            .expect("components is a table");
        components.insert(kind.into(), Value::Table(component));
        self
    }

    /// Set `key` of component `kind` (added before with [`HostModel::component`]).
    pub fn component_set(mut self, kind: &str, key: &str, value: impl Into<Value>) -> HostModel {
        let component = self
            .table
            .get_mut("components")
            .and_then(|c| c.get_mut(kind))
            .and_then(Value::as_table_mut)
            .unwrap_or_else(|| panic!("{}: no component {kind}", self.key));
        component.insert(key.into(), value.into());
        self
    }
}

/// One `known_firmware` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Firmware(Table);

impl Firmware {
    /// The default version `version`, an image file under the firmware directory.
    pub fn file(version: &str, filename: &str) -> Firmware {
        Firmware(Table::new()).set("version", version).set("default", true).set("filename", filename)
    }

    /// The default version `version`, installed by a Core-local script (path under the site dir).
    pub fn script(version: &str, script: &str) -> Firmware {
        Firmware(Table::new()).set("version", version).set("default", true).set("script", script)
    }

    /// A known version that is not the default.
    pub fn not_default(self) -> Firmware {
        self.set("default", false)
    }

    /// Any other key of the entry (`preingestion_exclusive_config`, `install_only_specified`, …).
    pub fn set(mut self, key: &str, value: impl Into<Value>) -> Firmware {
        self.0.insert(key.into(), value.into());
        self
    }
}

/// An inline table of strings, e.g. a model's `lockdown = { resource = "...", ... }`.
pub fn strings(pairs: &[(&str, &str)]) -> Value {
    Value::Table(pairs.iter().map(|(k, v)| (k.to_string(), Value::from(*v))).collect())
}

/// Host models of a site's catalog.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog(Vec<HostModel>);

impl Catalog {
    pub fn of(models: impl IntoIterator<Item = HostModel>) -> Catalog {
        Catalog(models.into_iter().collect())
    }

    pub fn with(mut self, model: HostModel) -> Catalog {
        self.0.push(model);
        self
    }

    pub fn models(&self) -> &[HostModel] {
        &self.0
    }
}

impl From<HostModel> for Catalog {
    fn from(m: HostModel) -> Catalog {
        Catalog(vec![m])
    }
}

/// The Dell PowerEdge R760 (`[host_models.r760]`): BMC 2.0 (`dell/bmc.bin`, inventory member
/// `BMC`) then BIOS 3.0 (`dell/bios.bin`, member `BIOS`), both by Redfish upload.
pub fn r760() -> HostModel {
    HostModel::new("r760", "Dell", "PowerEdge R760")
        .ordering(&["bmc", "uefi"])
        .component("bmc", "^BMC$", [Firmware::file("2.0", "dell/bmc.bin")])
        .component("uefi", "^BIOS$", [Firmware::file("3.0", "dell/bios.bin")])
}

/// The R760 with its BIOS only: BIOS 3.0 (`dell/bios.bin`).
pub fn r760_bios() -> HostModel {
    HostModel::new("r760", "Dell", "PowerEdge R760")
        .ordering(&["uefi"])
        .component("uefi", "^BIOS$", [Firmware::file("3.0", "dell/bios.bin")])
}

/// The images of [`r760`] and [`r760_bios`]: (path under the firmware dir, applies_to, version).
pub const R760_IMAGES: &[(&str, &str, &str)] = &[("dell/bmc.bin", "^BMC$", "2.0"), ("dell/bios.bin", "^BIOS$", "3.0")];

/// The Nvidia DGX H100 (`[host_models.dgx]`): NIC 28.43 (`dgx/nic.bin`, member `NIC_0`), which a
/// Scout package for `nvidia/dgx_h100/nic` installs.
pub fn dgx_h100() -> HostModel {
    HostModel::new("dgx", "Nvidia", "DGX H100")
        .ordering(&["nic"])
        .component("nic", "^NIC_0$", [Firmware::file("28.43", "dgx/nic.bin")])
}

/// The Lenovo SR630 (`[host_models.sr630]`): BIOS 3.0 by the Core-local script `script` (a path
/// under the firmware directory, e.g. `scripts/slow-flash.sh`).
pub fn sr630_script(script: &str) -> HostModel {
    HostModel::new("sr630", "Lenovo", "SR630")
        .ordering(&["uefi"])
        .component("uefi", "^BIOS$", [Firmware::script("3.0", script)])
}

/// Write a simulator firmware image `dir/rel` that applies to the inventory members matching
/// `applies_to` and installs `version` (bmc-sim's image format, 2 KiB of payload).
pub fn write_image(dir: &Path, rel: &str, applies_to: &str, version: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("an image path has a parent")).expect("image directory created");
    let mut body = format!("{} applies_to={applies_to} version={version}\n", hostfw_bmc_sim::IMAGE_MAGIC).into_bytes();
    body.extend(std::iter::repeat_n(b'x', 2048));
    std::fs::write(path, body).expect("image written");
}
