//! Merging catalog documents into one draft per vendor/model, keeping where every piece came from.
//!
//! Rules (NICo `merge_from_string`, nico-study §1.1): a new vendor/model is inserted whole; a
//! non-empty `ordering` replaces the old one; `explicit_start_needed` (and hostfw's
//! `mnnvl_capable`) are sticky once true; a component's matcher and `preingest_upgrade_when_below`
//! are overwritten when set; `known_firmware` is appended, and if the newer list has any
//! `default = true`, every older entry loses `default`. Two *static* tables for one vendor/model are
//! an error (NICo lets one win at random). This file must not validate the result (`validate`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::catalog::doc::HostModelDoc;
use crate::component::{ComponentType, FirmwareEntry};
use crate::error::CatalogError;
use crate::host_model::same_name;
use crate::matcher::Matcher;
use crate::toml_doc::join_key;

/// Where a piece of the catalog was written: a file and the key path inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub file: PathBuf,
    pub key: String,
}

impl Origin {
    pub fn new(file: impl Into<PathBuf>, key: impl Into<String>) -> Origin {
        Origin { file: file.into(), key: key.into() }
    }

    /// The origin of a sub-key (`suffix` may be `name` or `[i]`).
    pub fn at(&self, suffix: &str) -> Origin {
        Origin { file: self.file.clone(), key: join_key(&self.key, suffix) }
    }

    /// An `Invalid` error at `self.key` + `suffix`.
    pub fn error(&self, suffix: &str, problem: impl Into<String>) -> CatalogError {
        CatalogError::Invalid {
            file: self.file.clone(),
            key: join_key(&self.key, suffix),
            at: None,
            problem: problem.into(),
        }
    }
}

/// A vendor/model being assembled from documents.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    pub vendor: String,
    pub model: String,
    /// The document that first defined this vendor/model.
    pub origin: Origin,
    pub ordering: Vec<ComponentType>,
    /// The document whose `ordering` is in effect.
    pub ordering_origin: Origin,
    pub explicit_start_needed: bool,
    pub mnnvl_capable: bool,
    pub lockdown: Option<crate::lockdown::LockdownSetting>,
    pub ac_cycle: Option<crate::ac_cycle::AcCycleSetting>,
    pub components: BTreeMap<ComponentType, DraftComponent>,
}

/// A component being assembled; every entry keeps its own origin (`...known_firmware[i]`).
#[derive(Debug, Clone)]
pub(crate) struct DraftComponent {
    /// The `components.<type>` table that first defined the component.
    pub origin: Origin,
    pub matcher: Option<Matcher>,
    pub preingest_upgrade_when_below: Option<String>,
    pub upload: Option<crate::upload_setting::UploadSetting>,
    pub entries: Vec<(FirmwareEntry, Origin)>,
}

/// Collects drafts in insertion order (static tables first, then overlay documents).
#[derive(Debug, Default)]
pub(crate) struct Merger {
    drafts: Vec<Draft>,
}

impl Merger {
    /// Adds a `[host_models.<key>]` table; a second table for the same vendor/model is an error.
    pub fn insert_static(&mut self, doc: HostModelDoc, origin: Origin) -> Result<(), CatalogError> {
        let draft = new_draft(doc, origin)?;
        if let Some(other) = self.position(&draft.vendor, &draft.model).map(|i| &self.drafts[i]) {
            return Err(draft.origin.error(
                "model",
                format!(
                    "vendor `{}` model `{}` is already defined by `{}`; define each vendor/model once \
                     (the firmware directory overlay can extend it)",
                    draft.vendor, draft.model, other.origin.key
                ),
            ));
        }
        self.drafts.push(draft);
        Ok(())
    }

    /// Applies one overlay document with the merge rules above.
    pub fn overlay(&mut self, doc: HostModelDoc, origin: Origin) -> Result<(), CatalogError> {
        let newer = new_draft(doc, origin)?;
        match self.position(&newer.vendor, &newer.model) {
            None => self.drafts.push(newer),
            Some(i) => merge_into(&mut self.drafts[i], newer),
        }
        Ok(())
    }

    pub fn into_drafts(self) -> Vec<Draft> {
        self.drafts
    }

    fn position(&self, vendor: &str, model: &str) -> Option<usize> {
        self.drafts.iter().position(|d| same_name(&d.vendor, vendor) && same_name(&d.model, model))
    }
}

fn merge_into(old: &mut Draft, newer: Draft) {
    if !newer.ordering.is_empty() {
        old.ordering = newer.ordering;
        old.ordering_origin = newer.ordering_origin;
    }
    old.explicit_start_needed |= newer.explicit_start_needed;
    old.mnnvl_capable |= newer.mnnvl_capable;
    if newer.lockdown.is_some() {
        old.lockdown = newer.lockdown;
    }
    if newer.ac_cycle.is_some() {
        old.ac_cycle = newer.ac_cycle;
    }
    for (component, new_c) in newer.components {
        let Some(old_c) = old.components.get_mut(&component) else {
            old.components.insert(component, new_c);
            continue;
        };
        if new_c.matcher.is_some() {
            old_c.matcher = new_c.matcher;
        }
        if new_c.preingest_upgrade_when_below.is_some() {
            old_c.preingest_upgrade_when_below = new_c.preingest_upgrade_when_below;
        }
        if new_c.upload.is_some() {
            old_c.upload = new_c.upload;
        }
        if new_c.entries.iter().any(|(e, _)| e.default) {
            for (entry, _) in &mut old_c.entries {
                entry.default = false;
            }
        }
        old_c.entries.extend(new_c.entries);
    }
}

/// Turns one document into a draft: vendor/model present and non-empty, component names known.
fn new_draft(doc: HostModelDoc, origin: Origin) -> Result<Draft, CatalogError> {
    let vendor = required(doc.vendor, &origin, "vendor")?;
    let model = required(doc.model, &origin, "model")?;
    let mut components = BTreeMap::new();
    for (name, c) in doc.components {
        let c_origin = origin.at("components").at(&name);
        let component: ComponentType =
            name.parse().map_err(|e| origin.at("components").error(&name, format!("{e}")))?;
        let kf = c_origin.at("known_firmware");
        let entries =
            c.known_firmware.into_iter().enumerate().map(|(i, entry)| (entry, kf.at(&format!("[{i}]")))).collect();
        components.insert(
            component,
            DraftComponent {
                origin: c_origin,
                matcher: c.current_version_reported_as,
                preingest_upgrade_when_below: c.preingest_upgrade_when_below,
                upload: c.upload,
                entries,
            },
        );
    }
    Ok(Draft {
        vendor,
        model,
        ordering_origin: origin.clone(),
        origin,
        ordering: doc.ordering,
        explicit_start_needed: doc.explicit_start_needed,
        mnnvl_capable: doc.mnnvl_capable,
        lockdown: doc.lockdown,
        ac_cycle: doc.ac_cycle,
        components,
    })
}

fn required(value: Option<String>, origin: &Origin, key: &str) -> Result<String, CatalogError> {
    match value.as_deref().map(str::trim) {
        Some(v) if !v.is_empty() => Ok(v.to_string()),
        Some(_) => Err(origin.error(key, "must not be empty")),
        None => Err(origin.error(key, format!("missing: every host model needs `{key}`"))),
    }
}
