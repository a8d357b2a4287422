//! Validation of one merged draft into a `HostModel`; every failure names the file and full key
//! where the offending value was written.
//!
//! Rules: every component has a matcher; every entry has a version; an entry with `url` has
//! `filename`/`filenames` (NICo uploads /dev/null otherwise); at most one managed `default = true`
//! entry (and at most one pre-ingestion-only one) per component; a non-empty `ordering` names only
//! configured components, each once, and lists every component that has a default (else that
//! component would count as drift but never be installed). This file must not merge or read files.

use std::collections::BTreeMap;

use crate::catalog::merge::{Draft, DraftComponent, Origin};
use crate::component::{Component, ComponentType, FirmwareEntry};
use crate::error::CatalogError;
use crate::host_model::HostModel;

/// Checks one draft; the first problem is returned.
pub(crate) fn validate(draft: Draft) -> Result<HostModel, CatalogError> {
    check_ordering(&draft)?;
    let mut components = BTreeMap::new();
    for (component, c) in draft.components {
        components.insert(component, validate_component(component, c)?);
    }
    Ok(HostModel {
        vendor: draft.vendor,
        model: draft.model,
        ordering: draft.ordering,
        explicit_start_needed: draft.explicit_start_needed,
        mnnvl_capable: draft.mnnvl_capable,
        lockdown: draft.lockdown,
        ac_cycle: draft.ac_cycle,
        components,
    })
}

fn validate_component(component: ComponentType, c: DraftComponent) -> Result<Component, CatalogError> {
    let Some(matcher) = c.matcher else {
        return Err(c.origin.error(
            "current_version_reported_as",
            format!(
                "missing: component `{component}` needs a regex matching its firmware inventory \
                 member Ids"
            ),
        ));
    };
    let mut first_default: [Option<&Origin>; 2] = [None, None];
    for (entry, origin) in &c.entries {
        check_entry(entry, origin)?;
        if !entry.default {
            continue;
        }
        let lane = usize::from(entry.preingestion_exclusive_config);
        if let Some(first) = first_default[lane] {
            return Err(origin.error(
                "default",
                format!(
                    "a second `default = true` entry{} for component `{component}`; the first is \
                     `{}` in {}",
                    if lane == 1 { " (pre-ingestion only)" } else { "" },
                    first.key,
                    first.file.display()
                ),
            ));
        }
        first_default[lane] = Some(origin);
    }
    Ok(Component {
        current_version_reported_as: matcher,
        preingest_upgrade_when_below: c.preingest_upgrade_when_below,
        known_firmware: c.entries.into_iter().map(|(e, _)| e).collect(),
        upload: c.upload,
    })
}

fn check_entry(entry: &FirmwareEntry, origin: &Origin) -> Result<(), CatalogError> {
    if entry.version.trim().is_empty() {
        return Err(origin.error("version", "must not be empty"));
    }
    check_sha256(entry, origin)?;
    let artifact_key = if entry.filenames.is_empty() { "filename" } else { "filenames" };
    let mut files: Vec<(&str, String)> = entry.artifacts().into_iter().map(|a| (artifact_key, a)).collect();
    files.extend(entry.script.iter().map(|s| ("script", s.clone())));
    for (key, file) in files {
        if let Some(problem) = outside_firmware_directory(&file) {
            return Err(origin
                .error(key, format!("{file:?} {problem}: artifacts and scripts lie under the firmware directory")));
        }
    }
    if entry.url.is_some() && entry.artifacts().is_empty() {
        return Err(origin.error(
            "url",
            "set without `filename` or `filenames`: the download would have no file to land in \
             (NICo uploads /dev/null here)",
        ));
    }
    Ok(())
}

/// Why `file` (a catalog `filename`, `filenames` element or `script`) does not name a path under
/// the firmware directory, if it does not: an absolute path, or one that climbs out with `..`.
/// A catalog file must not make the worker upload or run any other file of its host.
pub(crate) fn outside_firmware_directory(file: &str) -> Option<&'static str> {
    let path = std::path::Path::new(file);
    if file.trim().is_empty() {
        return Some("is empty");
    }
    if path.is_absolute() {
        return Some("is an absolute path");
    }
    if path.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Some("climbs out with `..`");
    }
    None
}

/// `sha256`: one 64-digit hex digest per artifact (of `filenames`, or of `filename`).
fn check_sha256(entry: &FirmwareEntry, origin: &Origin) -> Result<(), CatalogError> {
    if entry.sha256.is_empty() {
        return Ok(());
    }
    let artifacts = entry.artifacts();
    if entry.sha256.len() != artifacts.len() {
        return Err(origin.error(
            "sha256",
            format!(
                "lists {} digest(s) for {} artifact(s) ({}): give one per artifact, in order",
                entry.sha256.len(),
                artifacts.len(),
                if artifacts.is_empty() { "none".to_string() } else { artifacts.join(", ") }
            ),
        ));
    }
    for digest in &entry.sha256 {
        if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(origin.error("sha256", format!("{digest:?} is not a SHA-256 digest (64 hexadecimal digits)")));
        }
    }
    Ok(())
}

fn check_ordering(d: &Draft) -> Result<(), CatalogError> {
    if d.ordering.is_empty() {
        return Ok(());
    }
    let at = &d.ordering_origin;
    for (i, component) in d.ordering.iter().enumerate() {
        if d.ordering[..i].contains(component) {
            return Err(at.error("ordering", format!("lists `{component}` twice")));
        }
        if !d.components.contains_key(component) {
            return Err(at.error(
                "ordering",
                format!(
                    "names `{component}`, but vendor `{}` model `{}` has no `components.{component}` table",
                    d.vendor, d.model
                ),
            ));
        }
    }
    for (component, c) in &d.components {
        let has_default = c.entries.iter().any(|(e, _)| e.is_managed_default());
        if has_default && !d.ordering.contains(component) {
            return Err(at.error(
                "ordering",
                format!(
                    "does not list `{component}` (defined at `{}` in {}), which has a default \
                     entry: it would count as drift but never be installed; add it to `ordering`",
                    c.origin.key,
                    c.origin.file.display()
                ),
            ));
        }
    }
    Ok(())
}
