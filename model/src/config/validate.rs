//! Value checks on a parsed site config that serde's types cannot express (ranges, non-empty
//! strings, both-or-neither credentials, URL and timestamp shapes), plus the one file check:
//! the `[redfish] ca_bundle` PEM file is readable and holds certificates.
//!
//! Owns those rules and the key each one names. It must not parse the config, resolve paths,
//! read any other file or look at `[host_models.*]` (the catalog validates those).

use std::path::Path;
use std::time::Duration;

use super::SiteConfig;

/// A failed check: the dotted key and the problem.
pub(super) type Failure = (&'static str, String);

/// Checks the config; the first failure wins.
pub(super) fn check(c: &SiteConfig) -> Result<(), Failure> {
    non_empty("site.name", &c.site.name)?;

    http_url("temporal.address", &c.temporal.address)?;
    non_empty("temporal.namespace", &c.temporal.namespace)?;
    non_empty("temporal.task_queue", &c.temporal.task_queue)?;
    listen_addr("worker.metrics_listen", &c.worker.metrics_listen)?;
    listen_addr("worker.artifact_listen", &c.worker.artifact_listen)?;
    http_url("worker.artifact_base_url", &c.worker.artifact_base_url)?;
    listen_addr("api.listen", &c.api.listen)?;
    c.api.check()?;
    c.notifications.check()?;
    positive("worker.artifact_url_lifetime", c.worker.artifact_url_lifetime)?;
    if let Some(user) = &c.scripts.run_as {
        non_empty("scripts.run_as", user)?;
    }

    match (&c.credentials.default_username, &c.credentials.default_password) {
        (Some(user), Some(_)) => non_empty("credentials.default_username", user)?,
        (None, None) => {}
        (Some(_), None) => {
            return Err((
                "credentials.default_password",
                "missing: set both default_username and default_password, or neither".into(),
            ))
        }
        (None, Some(_)) => {
            return Err((
                "credentials.default_username",
                "missing: set both default_username and default_password, or neither".into(),
            ))
        }
    }

    positive("redfish.timeout", c.redfish.timeout)?;
    at_most("redfish.timeout", c.redfish.timeout, super::sections::MAX_REQUEST_TIMEOUT)?;
    positive("redfish.task_timeout", c.redfish.task_timeout)?;
    at_most("redfish.task_timeout", c.redfish.task_timeout, super::sections::MAX_TASK_TIMEOUT)?;
    if c.redfish.task_timeout < c.host_reprovision.task_poll_interval {
        return Err((
            "redfish.task_timeout",
            format!(
                "{:?} is shorter than host_reprovision.task_poll_interval ({:?}): a flash could not be polled even once",
                c.redfish.task_timeout, c.host_reprovision.task_poll_interval
            ),
        ));
    }
    let max_k = super::sections::MAX_INVENTORY_CONCURRENCY;
    if !(1..=max_k).contains(&c.redfish.inventory_concurrency) {
        return Err((
            "redfish.inventory_concurrency",
            format!("{} is out of range; must be 1..={max_k} (BMCs throttle)", c.redfish.inventory_concurrency),
        ));
    }
    step_wait("redfish.reset_task_timeout", c.redfish.reset_task_timeout)?;
    if c.redfish.max_response_bytes < super::sections::MIN_MAX_RESPONSE_BYTES {
        return Err((
            "redfish.max_response_bytes",
            format!(
                "{} is too small; must be at least {} (1 MiB): ordinary inventory documents would not fit",
                c.redfish.max_response_bytes,
                super::sections::MIN_MAX_RESPONSE_BYTES
            ),
        ));
    }

    let hr = &c.host_reprovision;
    if hr.lean_history.is_some() {
        return Err((
            "host_reprovision.lean_history",
            "was removed in hostfw 1.0: every host workflow takes the one history shape (docs/workflow-versions.md); \
             delete the key"
                .into(),
        ));
    }
    positive("host_reprovision.verify_poll_interval", hr.verify_poll_interval)?;
    positive("host_reprovision.approval_recheck", hr.approval_recheck)?;
    at_least_one("host_reprovision.verify_max_polls", hr.verify_max_polls)?;
    positive("host_reprovision.task_poll_interval", hr.task_poll_interval)?;
    at_least_one("host_reprovision.bmc_healthy_reads", hr.bmc_healthy_reads)?;
    positive("host_reprovision.script_timeout", hr.script_timeout)?;
    positive("host_reprovision.script_orphan_wait", hr.script_orphan_wait)?;
    if hr.heartbeat_timeout < std::time::Duration::from_secs(5) {
        return Err((
            "host_reprovision.heartbeat_timeout",
            "must be at least 5s: long activities heartbeat every 2 s".into(),
        ));
    }

    step_wait("host_reprovision.bmc_reachable_within", hr.bmc_reachable_within)?;
    step_wait("host_reprovision.power_state_within", hr.power_state_within)?;
    step_wait("host_reprovision.bmc_goes_down_within", hr.bmc_goes_down_within)?;

    let fg = &c.firmware_global;
    at_least_one("firmware_global.max_uploads", fg.max_uploads)?;
    positive("firmware_global.host_firmware_upgrade_retry_interval", fg.host_firmware_upgrade_retry_interval)?;

    let mu = &c.machine_updater;
    if let Some(p) = mu.max_concurrent_machine_updates_percent {
        if !(1..=100).contains(&p) {
            return Err((
                "machine_updater.max_concurrent_machine_updates_percent",
                format!("{p} is out of range; must be 1..=100"),
            ));
        }
    }
    for (key, limit) in &mu.max_concurrent_per_label {
        crate::labels::check_key(key).map_err(|e| ("machine_updater.max_concurrent_per_label", format!("{e}")))?;
        if *limit == 0 {
            return Err((
                "machine_updater.max_concurrent_per_label",
                format!(
                    "{key} = 0 would never update a host labelled {key}; use at least 1 (turn updates \
                     off with `hostfw machine auto-update --disable` instead)"
                ),
            ));
        }
    }
    if mu.error_budget_failed_percent > 100 {
        return Err((
            "machine_updater.error_budget_failed_percent",
            format!(
                "{} is out of range; must be 0..=100 (0 turns the percentage rule off)",
                mu.error_budget_failed_percent
            ),
        ));
    }
    if mu.error_budget_failed_percent > 0 {
        at_least_one("machine_updater.error_budget_min_hosts", mu.error_budget_min_hosts)?;
    }
    crate::gates::check_waves(&mu.canary_waves).map_err(|e| ("machine_updater.canary_waves", e))?;
    if mu.window_fit_min_samples > crate::gates::WINDOW_FIT_RUNS_KEPT {
        return Err((
            "machine_updater.window_fit_min_samples",
            format!(
                "{} is out of range; must be 0..={} (the past runs kept per model and component set; \
                 0 turns window fit off)",
                mu.window_fit_min_samples,
                crate::gates::WINDOW_FIT_RUNS_KEPT
            ),
        ));
    }
    if mu.approval_deadline > super::sections::APPROVAL_DEADLINE_MAX {
        return Err((
            "machine_updater.approval_deadline",
            format!(
                "{} is too long; at most 720h (30 days), or \"0s\" for no deadline",
                crate::duration::format_duration(mu.approval_deadline)
            ),
        ));
    }
    positive("machine_updater.machine_update_run_interval", mu.machine_update_run_interval)?;
    positive("site_explorer.run_interval", c.site_explorer.run_interval)?;
    at_least_one("site_explorer.concurrency", c.site_explorer.concurrency)?;
    Ok(())
}

/// The CA bundle at `path` (already resolved) can be read and holds at least one well-formed
/// PEM certificate block (`BEGIN`/`END CERTIFICATE` around base64). The DER inside is checked
/// by the TLS stack when a client trusts it.
pub(super) fn ca_bundle_file(key: &'static str, path: &Path) -> Result<(), Failure> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| (key, format!("cannot read CA bundle {shown}: {e}")))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| (key, format!("CA bundle {shown} is not PEM text")))?;
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut rest = text;
    let mut count = 0;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let end = after
            .find(END)
            .ok_or_else(|| (key, format!("CA bundle {shown}: certificate {} has no END line", count + 1)))?;
        let body: String = after[..end].split_whitespace().collect();
        let base64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=');
        if body.is_empty() || body.len() % 4 != 0 || !body.chars().all(base64) {
            return Err((key, format!("CA bundle {shown}: certificate {} is not valid base64", count + 1)));
        }
        count += 1;
        rest = &after[end + END.len()..];
    }
    if count == 0 {
        return Err((key, format!("CA bundle {shown} holds no PEM certificate ({BEGIN})")));
    }
    Ok(())
}

fn non_empty(key: &'static str, value: &str) -> Result<(), Failure> {
    if value.trim().is_empty() {
        return Err((key, "must not be empty".into()));
    }
    Ok(())
}

fn positive(key: &'static str, value: Duration) -> Result<(), Failure> {
    if value.is_zero() {
        return Err((key, "must be greater than zero".into()));
    }
    Ok(())
}

/// At most `cap`: a wait beyond its hard cap is a typo, and would stretch the activity timeout
/// derived from it.
fn at_most(key: &'static str, value: Duration, cap: Duration) -> Result<(), Failure> {
    if value > cap {
        return Err((key, format!("{value:?} is longer than the hard cap of {cap:?}")));
    }
    Ok(())
}

/// A wait inside one activation step: positive and at most `MAX_STEP_WAIT`.
fn step_wait(key: &'static str, value: Duration) -> Result<(), Failure> {
    positive(key, value)?;
    at_most(key, value, super::sections::MAX_STEP_WAIT)
}

fn at_least_one(key: &'static str, value: u32) -> Result<(), Failure> {
    if value == 0 {
        return Err((key, "must be at least 1".into()));
    }
    Ok(())
}

/// `host:port` with a non-empty host and a numeric port (`[::1]:9464` works too).
fn listen_addr(key: &'static str, value: &str) -> Result<(), Failure> {
    match value.rsplit_once(':') {
        Some((host, port)) if !host.trim().is_empty() && port.parse::<u16>().is_ok() => Ok(()),
        _ => Err((key, format!("`{value}` is not a host:port listen address"))),
    }
}

fn http_url(key: &'static str, value: &str) -> Result<(), Failure> {
    let rest = value.strip_prefix("http://").or_else(|| value.strip_prefix("https://"));
    match rest {
        Some(host) if !host.trim().is_empty() => Ok(()),
        _ => Err((key, format!("`{value}` is not an http:// or https:// URL"))),
    }
}
