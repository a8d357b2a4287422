//! Choosing a component's installation route (seed "Installation route", in precedence order):
//! a packaged Scout script for the vendor, model and component; else the entry's Core-local
//! `script`; else Redfish. For Scout, also builds the task: signed script and artifact URLs on the
//! worker's artifact server, with the SHA-256 digests Scout must verify, and what the task is for
//! (the package directory's normalised vendor and model, the component, the target version),
//! which the package's signed manifest must name.

use hostfw_workflows::scout::{ScoutFile, ScoutTask};
use hostfw_workflows::{InstallRoute, RouteQuery};
use temporalio_common::ActivityError;

use crate::artifacts;
use crate::error;
use crate::host::scout_package;
use crate::Deps;

/// Decide the route; errors (a Scout package without metadata, an artifact that cannot be
/// served) fail the attempt instead of silently falling back to another route.
pub fn plan_route(deps: &Deps, query: &RouteQuery) -> Result<InstallRoute, ActivityError> {
    let settings = &deps.settings;
    let package = match scout_package::find_package(
        &settings.scout_scripts_dir,
        &query.vendor,
        &query.model,
        &query.component.to_string(),
    ) {
        Ok(p) => p,
        // A vendor or model name that cannot be a package directory (e.g. "Dell Inc.") has no
        // Scout package by construction: the next route applies.
        Err(
            e @ (scout_package::ScoutPackageError::EmptySegment { .. }
            | scout_package::ScoutPackageError::BadCharacter { .. }),
        ) => {
            tracing::debug!(machine_id = %query.machine_id, reason = %e, "no Scout package possible");
            None
        }
        Err(e) => return Err(error::bad_input(hostfw_model::error_chain(&e))),
    };
    if let Some(package) = package {
        let script = ScoutFile {
            url: deps.artifact_urls.scout_script(&package.relative_path),
            sha256: package.script_sha256.clone(),
            file_name: "upgrade.sh".to_string(),
        };
        let mut files = Vec::new();
        for (i, artifact) in query.entry.artifacts().into_iter().enumerate() {
            let resolved = artifacts::resolve(settings, &artifact)?;
            let url = resolved.url(&deps.artifact_urls).ok_or_else(|| {
                error::bad_input(format!(
                    "artifact {artifact} lies outside the firmware directory, so Scout cannot download it"
                ))
            })?;
            let expected = query.entry.sha256.get(i).map(String::as_str);
            let sha256 = artifacts::digest(&artifact, &resolved.path, expected)
                .map_err(artifacts::ArtifactError::into_activity_error)?;
            let file_name = resolved
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "artifact".to_string());
            files.push(ScoutFile { url, sha256, file_name });
        }
        return Ok(InstallRoute::Scout(ScoutTask {
            upgrade_task_id: uuid::Uuid::new_v4().to_string(),
            machine_id: query.machine_id.clone(),
            vendor: package.vendor.clone(),
            model: package.model.clone(),
            component: query.component,
            target_version: query.target_version.clone(),
            script,
            artifacts: files,
            execution_timeout_secs: package.metadata.execution_timeout_seconds.get(),
            artifact_download_timeout_secs: package.metadata.artifact_download_timeout_seconds.get(),
            manifest: package.manifest.clone(),
            signature: package.signature.clone(),
        }));
    }
    if let Some(script) = &query.entry.script {
        return Ok(InstallRoute::Script { script: script.clone() });
    }
    Ok(InstallRoute::Redfish)
}
