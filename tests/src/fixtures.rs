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
    pub fn component(
        mut self,
        kind: &str,
        reported_as: &str,
        firmware: impl IntoIterator<Item = Firmware>,
    ) -> HostModel {
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

/// A model's `lockdown` setting for bmc-sim's generic shape (`Oem.Hostfw.Lockdown` of its
/// System): with it, an assigned host's update turns lockdown off and then on again.
pub fn sim_lockdown() -> Value {
    strings(&[
        ("resource", "/redfish/v1/Systems/System.Embedded.1"),
        ("property", "Oem/Hostfw/Lockdown"),
        ("enabled", "Enabled"),
        ("disabled", "Disabled"),
    ])
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
    HostModel::new("r760", "Dell", "PowerEdge R760").ordering(&["uefi"]).component(
        "uefi",
        "^BIOS$",
        [Firmware::file("3.0", "dell/bios.bin")],
    )
}

/// A Supermicro SYS-821GE-TNHR with its BIOS only, to the same image as [`r760_bios`]: BIOS 3.0
/// (`dell/bios.bin`): a second model for rollouts of one image on two models.
pub fn smc_bios() -> HostModel {
    HostModel::new("smc", "Supermicro", "SYS-821GE-TNHR").ordering(&["uefi"]).component(
        "uefi",
        "^BIOS$",
        [Firmware::file("3.0", "dell/bios.bin")],
    )
}

/// A bmc-sim fleet of `hosts` (id, vendor, model), each reporting BIOS 1.0, with 0.3 s update
/// tasks, Dell task monitors, multipart uploads and images applied at once.
pub fn bios_fleet(hosts: &[(&str, &str, &str)]) -> String {
    let mut fleet = String::from(
        "[defaults]\ntask_seconds = 0.3\nreset_seconds = 0.2\nupload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"Immediate\"\n",
    );
    for (id, vendor, model) in hosts {
        fleet.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"{vendor}\"\nmodel = \"{model}\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    fleet
}

/// The images of [`r760`] and [`r760_bios`]: (path under the firmware dir, applies_to, version).
pub const R760_IMAGES: &[(&str, &str, &str)] = &[("dell/bmc.bin", "^BMC$", "2.0"), ("dell/bios.bin", "^BIOS$", "3.0")];

/// The Nvidia DGX H100 (`[host_models.dgx]`): NIC 28.43 (`dgx/nic.bin`, member `NIC_0`), which a
/// Scout package for `nvidia/dgx_h100/nic` installs.
pub fn dgx_h100() -> HostModel {
    HostModel::new("dgx", "Nvidia", "DGX H100").ordering(&["nic"]).component(
        "nic",
        "^NIC_0$",
        [Firmware::file("28.43", "dgx/nic.bin")],
    )
}

/// The Lenovo SR630 (`[host_models.sr630]`): BIOS 3.0 by the Core-local script `script` (a path
/// under the firmware directory, e.g. `scripts/slow-flash.sh`).
pub fn sr630_script(script: &str) -> HostModel {
    HostModel::new("sr630", "Lenovo", "SR630").ordering(&["uefi"]).component(
        "uefi",
        "^BIOS$",
        [Firmware::script("3.0", script)],
    )
}

/// [`multipart_flash_script`] that logs `start <component>` to `<site>/flashes.log`; a BIOS
/// (`uefi`) flash then waits for the file `<site>/release` before it pushes the image, so a test
/// decides when that flash ends, without timing.
pub fn gated_flash_script() -> String {
    multipart_flash_script(
        "finish() { exit \"$1\"; }\n\
         echo \"start $COMPONENT_TYPE\" >>\"$site/flashes.log\"\n\
         if [ \"$COMPONENT_TYPE\" = uefi ]; then while [ ! -e \"$site/release\" ]; do sleep 0.1; done; fi",
        200,
    )
}

/// A Core-local flash script (under `<site>/firmware/scripts/`) that writes only to files (its
/// stdout goes to `<site>/script.log`: a pipe would die with the worker): `prelude` (shell lines
/// that define `finish <code>`, and may log and sleep) runs first; then it pushes
/// `firmware/lenovo/<component>-<target>.bin` to the BMC by multipart with the login from its
/// environment, and follows the task, `polls` times 0.1 s apart, to `finish 0` (3 if it never
/// completes, 1 without a task).
pub fn multipart_flash_script(prelude: &str, polls: u32) -> String {
    format!(
        r#"#!/bin/sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
site=$(dirname "$(dirname "$here")")
exec >>"$site/script.log" 2>&1
{prelude}
auth() {{ printf 'user = "%s:%s"\n' "$BMC_USERNAME" "$BMC_PASSWORD"; }}
image="$here/../lenovo/$COMPONENT_TYPE-$TARGET_VERSION.bin"
location=$(auth | curl -sS -K - -o /dev/null -D - \
    -F 'UpdateParameters={{}};type=application/json' \
    -F "UpdateFile=@$image;type=application/octet-stream" \
    "$BMC_URL/redfish/v1/UpdateService/upload" | tr -d '\r' | sed -n 's/^[Ll]ocation: *//p')
[ -n "$location" ] || finish 1
task=${{location##*/}}
i=0
while [ "$i" -lt {polls} ]; do
    body=$(auth | curl -sS -K - "$BMC_URL/redfish/v1/TaskService/Tasks/$task")
    if printf '%s' "$body" | grep -Eq '"TaskState": *"Completed"'; then finish 0; fi
    i=$((i + 1))
    sleep 0.1
done
finish 3
"#
    )
}

/// A Core-local script that flashes `firmware/dell/bios.bin` through the BMC's multipart push
/// with the BMC address and login from its environment, and follows the task (200 polls 0.1 s
/// apart; exit 4 if it never completes). With `echo_login` it prints the login, as careless vendor
/// scripts do (what the redaction tests need).
pub fn dell_bios_flash_script(echo_login: bool) -> String {
    let (login_line, failed) = if echo_login { ("echo \"logging in as $auth\"\n", " (login $auth)") } else { ("", "") };
    format!(
        r#"#!/bin/sh
set -eu
img="$(dirname "$0")/../dell/bios.bin"
auth="$BMC_USERNAME:$BMC_PASSWORD"
{login_line}loc=$(curl -sS -u "$auth" -D - -o /dev/null \
  -F 'UpdateParameters={{}};type=application/json' -F "UpdateFile=@$img;type=application/octet-stream" \
  "$BMC_URL/redfish/v1/UpdateService/upload" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
task="${{loc##*/}}"
i=0
while [ $i -lt 200 ]; do
  state=$(curl -sS -u "$auth" "$BMC_URL/redfish/v1/TaskService/Tasks/$task")
  case "$state" in *'"Completed"'*) echo "flashed $COMPONENT_TYPE $TARGET_VERSION"; exit 0;; esac
  i=$((i+1)); sleep 0.1
done
echo "task $task never completed{failed}" >&2
exit 4
"#
    )
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

/// The secret line `hostfw token create` prints (the `hfw_...` line after its sentence).
pub fn token_secret(printed: &str) -> String {
    printed.lines().find(|l| l.starts_with("hfw_")).unwrap_or_else(|| panic!("no token in {printed}")).to_string()
}
