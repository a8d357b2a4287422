//! `UploadSetting`: a per-component override of how its image is handed to the BMC, written in
//! the catalog (`[host_models.<key>.components.<type>] upload = {...}`), for vendor quirks the
//! service's own description does not reveal. Without it, the route is chosen from what the
//! UpdateService advertises and the multipart form carries only `UpdateParameters` and
//! `UpdateFile`.
//!
//! ```toml
//! # Supermicro: real Targets, and the OemParameters part naming the image type
//! upload = { targets = "matched", multipart_parts = { OemParameters = '{"ImageType": "BMC"}' } }
//! # force a route the BMC advertises, and name the targets
//! upload = { route = "simpleupdate", targets = ["/redfish/v1/UpdateService/FirmwareInventory/BIOS"] }
//! ```
//!
//! Pure data and its validation (a part's text must be JSON, part names must not replace the
//! standard ones); the client applies it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An upload route an operator may force (it must still be advertised by the BMC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UploadRouteName {
    Multipart,
    Httppush,
    Simpleupdate,
}

/// Which `Targets` the update names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UploadTargets {
    /// `"matched"`: the inventory members the component's matcher selects.
    Keyword(TargetsKeyword),
    /// These URIs, as written.
    List(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetsKeyword {
    Matched,
}

/// How one component's image is uploaded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawUpload")]
pub struct UploadSetting {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<UploadRouteName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<UploadTargets>,
    /// Extra multipart parts: name → JSON text (sent as `application/json`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub multipart_parts: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUpload {
    #[serde(default)]
    route: Option<UploadRouteName>,
    #[serde(default)]
    targets: Option<UploadTargets>,
    #[serde(default)]
    multipart_parts: BTreeMap<String, String>,
}

/// Why an `upload` catalog setting is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadSettingError {
    #[error("upload.multipart_parts: {0:?} is not an extra part name")]
    PartName(String),
    #[error("upload.multipart_parts.{name}: not JSON ({problem}): {text:?}")]
    PartNotJson { name: String, text: String, problem: String },
    #[error("upload.targets: {0:?} is not a /redfish/v1/ URI")]
    Target(String),
    #[error("upload.multipart_parts needs the multipart route")]
    PartsNeedMultipart,
}

impl TryFrom<RawUpload> for UploadSetting {
    type Error = UploadSettingError;
    fn try_from(raw: RawUpload) -> Result<Self, UploadSettingError> {
        for (name, text) in &raw.multipart_parts {
            if matches!(name.as_str(), "UpdateParameters" | "UpdateFile") || name.trim().is_empty() {
                return Err(UploadSettingError::PartName(name.clone()));
            }
            serde_json::from_str::<serde_json::Value>(text).map_err(|e| UploadSettingError::PartNotJson {
                name: name.clone(),
                text: text.clone(),
                problem: e.to_string(),
            })?;
        }
        if let Some(UploadTargets::List(list)) = &raw.targets {
            if let Some(bad) = list.iter().find(|t| !t.starts_with("/redfish/v1/")) {
                return Err(UploadSettingError::Target(bad.clone()));
            }
        }
        if !raw.multipart_parts.is_empty()
            && matches!(raw.route, Some(UploadRouteName::Httppush | UploadRouteName::Simpleupdate))
        {
            return Err(UploadSettingError::PartsNeedMultipart);
        }
        Ok(UploadSetting { route: raw.route, targets: raw.targets, multipart_parts: raw.multipart_parts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<UploadSetting, String> {
        #[derive(Deserialize)]
        struct Doc {
            upload: UploadSetting,
        }
        toml::from_str::<Doc>(text).map(|d| d.upload).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_the_supermicro_quirk_and_a_forced_route() {
        let smc =
            parse(r#"upload = { targets = "matched", multipart_parts = { OemParameters = '{"ImageType": "BMC"}' } }"#)
                .unwrap();
        assert_eq!(smc.targets, Some(UploadTargets::Keyword(TargetsKeyword::Matched)));
        assert_eq!(smc.multipart_parts["OemParameters"], r#"{"ImageType": "BMC"}"#);
        let forced = parse(
            r#"upload = { route = "simpleupdate", targets = ["/redfish/v1/UpdateService/FirmwareInventory/BIOS"] }"#,
        )
        .unwrap();
        assert_eq!(forced.route, Some(UploadRouteName::Simpleupdate));
    }

    #[test]
    fn refuses_what_cannot_work() {
        let e = parse(r#"upload = { multipart_parts = { OemParameters = '{"ImageType": ' } }"#).unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
        let e = parse(r#"upload = { multipart_parts = { UpdateFile = '{}' } }"#).unwrap_err();
        assert!(e.contains("UpdateFile"), "{e}");
        let e = parse(r#"upload = { targets = ["BMC"] }"#).unwrap_err();
        assert!(e.contains("upload.targets"), "{e}");
        let e = parse(r#"upload = { route = "httppush", multipart_parts = { A = '{}' } }"#).unwrap_err();
        assert!(e.contains("multipart route"), "{e}");
        let e = parse(r#"upload = { route = "ftp" }"#).unwrap_err();
        assert!(e.contains("ftp") || e.contains("variant"), "{e}");
    }
}
