//! Commands sent to the hostfw API (`hostfw -a URL ...`, or a context): each served command is
//! one request (`watch` polls), and the CLI prints the API's answer as it is (the same table or
//! JSON document the command prints on the site). Token commands and `whoami` exist only here.
//!
//! Files a command names are read here and their text sent; the API never reads a client's path.
//! A change that asks first is sent unconfirmed, its preview (the API's 422) printed, the question
//! asked on this terminal, then sent confirmed (docs/cli-json.md "Through the API").
//!
//! Owns the mapping of commands to routes and the printing of token documents. A command the API
//! does not serve is refused by name, with the way to run it on the site; nothing is sent.

use anyhow::bail;
use reqwest::Method;
use serde_json::{json, Value};

use crate::api_client::{ApiFailure, Remote};
use crate::cli::{
    AbortArgs, BudgetCmd, Command, ConfigCmd, FirmwareCmd, FirmwareConfigCmd, Format, FreezeCmd, HostCmd, InstanceCmd,
    MachineCmd, ManagedHostCmd, NotificationsCmd, ReportKind, ReprovisionCmd, SiteExplorerCmd, TokenCmd,
};

/// Run `command` through the API. When the API refuses with what the command had printed (a
/// preview, doctor's findings), that is printed before the error, as the command on the site does.
pub async fn run(remote: &Remote, command: &Command) -> anyhow::Result<()> {
    let text = match Box::pin(answer(remote, command)).await {
        Ok(text) => text,
        Err(e) => {
            if let Some(printed) = e.downcast_ref::<ApiFailure>().and_then(|f| f.output.as_deref()) {
                print_text(printed.to_string());
            }
            return Err(e);
        }
    };
    print_text(text);
    Ok(())
}

fn print_text(text: String) {
    if text.is_empty() {
        return;
    }
    crate::out!("{}", if text.ends_with('\n') { text } else { format!("{text}\n") });
}

async fn answer(remote: &Remote, command: &Command) -> anyhow::Result<String> {
    let get = |path: String| async move { remote.send(Method::GET, &path, None, true).await };
    let post = |path: &'static str, body: Value| async move { remote.send(Method::POST, path, Some(body), true).await };
    let on_machine = |id: &str, action: &str| format!("/v1/machines/{}/{action}", segment(id));
    Ok(match command {
        Command::Plan => get("/v1/plan".into()).await?,
        Command::Compliance => get("/v1/compliance".into()).await?,
        Command::Firmware(FirmwareCmd::Show) => get("/v1/firmware".into()).await?,
        Command::Machine(MachineCmd::List) => get("/v1/machines".into()).await?,
        Command::Machine(MachineCmd::Show { machine, history_count }) => {
            get(format!("/v1/machines/{}?history_count={history_count}", segment(machine.id()))).await?
        }
        Command::Machine(MachineCmd::Add(a)) => {
            let body = json!({
                "machine_id": a.machine.id(), "bmc": a.bmc, "state": a.state, "instance": a.instance,
                "bmc_username": a.bmc_username, "bmc_password": a.bmc_password, "labels": a.label,
            });
            post("/v1/machines", body).await?
        }
        Command::Machine(MachineCmd::Import { fleet }) => {
            // Read and resolved here (profile folders are the client's); the API gets the text.
            let text = crate::machine::roster_text(fleet)?;
            post("/v1/machines/import", json!({"file": fleet.display().to_string(), "fleet": text})).await?
        }
        Command::Machine(MachineCmd::RotateKey { new_key_file }) => {
            let key = std::fs::read_to_string(new_key_file).map_err(|e| {
                anyhow::anyhow!("reading the new site key file {}: {e}; nothing was changed", new_key_file.display())
            })?;
            post("/v1/machines/rotate-key", json!({"file": new_key_file.display().to_string(), "key": key.trim()}))
                .await?
        }
        Command::Machine(MachineCmd::Label(a)) => {
            let path = on_machine(a.machine.id(), "labels");
            remote.send(Method::POST, &path, Some(json!({"set": a.set, "remove": a.remove})), true).await?
        }
        Command::Machine(MachineCmd::AutoUpdate(a)) => {
            let policy = if a.enable {
                "enable"
            } else if a.disable {
                "disable"
            } else {
                "clear"
            };
            match &a.selector {
                Some(selector) => {
                    let body = json!({"selector": selector, "policy": policy, "dry_run": a.dry_run});
                    confirmed(remote, "/v1/machines/auto-update", body, a.yes, None).await?
                }
                None => {
                    let path = on_machine(a.machine.id().unwrap_or_default(), "auto-update");
                    remote.send(Method::POST, &path, Some(json!({"policy": policy})), true).await?
                }
            }
        }
        Command::Machine(MachineCmd::Maintenance(a)) => {
            let direction = if a.enter { "enter" } else { "exit" };
            let path = on_machine(a.machine.id(), "maintenance");
            remote.send(Method::POST, &path, Some(json!({"direction": direction, "reason": a.reason})), true).await?
        }
        Command::ManagedHost(ManagedHostCmd::Show { machine, history_count }) => {
            get(format!("/v1/managed-hosts/{}?history_count={history_count}", segment(machine.id()))).await?
        }
        Command::ManagedHost(ManagedHostCmd::ResetHostReprovisioning { machine }) => {
            let path = format!("/v1/managed-hosts/{}/reset", segment(machine.id()));
            remote.send(Method::POST, &path, Some(json!({})), true).await?
        }
        Command::ManagedHost(ManagedHostCmd::StartUpdates(a)) => {
            // Local times are the operator's: resolved here, sent as RFC 3339 UTC.
            let utc = |flag: &str, t: &Option<String>| -> anyhow::Result<Option<String>> {
                t.as_deref()
                    .map(|text| {
                        crate::window_time::parse_time(flag, text, crate::window_time::system_local)
                            .map(crate::window_time::rfc3339_utc)
                    })
                    .transpose()
            };
            let body = json!({
                "machines": a.machines, "start": utc("--start", &a.start)?, "end": utc("--end", &a.end)?,
                "cancel": a.cancel,
            });
            post("/v1/managed-hosts/start-updates", body).await?
        }
        Command::SiteExplorer(SiteExplorerCmd::Explore { machine, concurrency }) => {
            post("/v1/site-explorer/explore", json!({"machine_id": machine, "concurrency": concurrency})).await?
        }
        Command::SiteExplorer(SiteExplorerCmd::ReExplore { bmc_ip }) => {
            post("/v1/site-explorer/re-explore", json!({"bmc_ip": bmc_ip})).await?
        }
        Command::SiteExplorer(SiteExplorerCmd::GetReport { kind: ReportKind::ManagedHost { bmc_ip } }) => {
            get(format!("/v1/site-explorer/report?bmc={}", segment(bmc_ip))).await?
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::List)) => get("/v1/reprovision-requests".into()).await?,
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Set {
            machine,
            update_message,
            update_firmware: _,
            ignore_rollout_gates,
        })) => {
            let body = json!({
                "machine_id": machine.id(), "update_message": update_message,
                "ignore_rollout_gates": ignore_rollout_gates,
            });
            post("/v1/reprovision-requests", body).await?
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::AllDrifted(a))) => {
            let body = json!({
                "bypass_ceiling": a.bypass_ceiling, "dry_run": a.dry_run, "explore": a.explore,
                "update_message": a.update_message, "ignore_rollout_gates": a.ignore_rollout_gates,
            });
            // The confirmed request need not explore again: the preview just did.
            confirmed(remote, "/v1/reprovision-requests/all-drifted", body, a.yes, Some(("explore", json!(false))))
                .await?
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Clear { machine })) => {
            let path = format!("/v1/reprovision-requests/{}", segment(machine.id()));
            remote.send(Method::DELETE, &path, None, true).await?
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::MarkManualUpgradeComplete { machine })) => {
            let path = format!("/v1/reprovision-requests/{}/manual-upgrade-complete", segment(machine.id()));
            remote.send(Method::POST, &path, Some(json!({})), true).await?
        }
        Command::Budget(BudgetCmd::List) => get("/v1/budgets".into()).await?,
        Command::Budget(BudgetCmd::Resume(t)) => {
            let body = json!({"vendor": t.vendor, "model": t.model, "component": t.component, "version": t.version});
            post("/v1/budgets/resume", body).await?
        }
        Command::Budget(BudgetCmd::Pause(p)) => {
            let t = &p.target;
            let body = json!({
                "vendor": t.vendor, "model": t.model, "component": t.component, "version": t.version,
                "reason": p.reason,
            });
            post("/v1/budgets/pause", body).await?
        }
        Command::Freeze(a) => match (&a.cmd, &a.reason) {
            (Some(FreezeCmd::List), _) => get("/v1/freezes".into()).await?,
            (None, None) => {
                bail!("freeze: --reason is required (it is shown to everyone who sees the hold); nothing was changed")
            }
            (None, Some(reason)) => {
                post("/v1/freezes", json!({"reason": reason, "selector": a.selector, "drain": a.drain})).await?
            }
        },
        Command::Unfreeze(a) => post("/v1/freezes/lift", json!({"id": a.id, "selector": a.selector})).await?,
        Command::Audit(args) => {
            let target = args.target.as_deref().map(|t| format!("&target={}", segment(t))).unwrap_or_default();
            get(format!("/v1/audit?limit={}{target}", args.limit)).await?
        }
        Command::Doctor { fix: false } => get("/v1/doctor".into()).await?,
        Command::Doctor { fix: true } => post("/v1/doctor/fix", json!({})).await?,
        Command::Rollout { .. } => bail!(crate::ROLLOUT_MOVED),
        Command::Watch { timeout_secs } => {
            Box::pin(crate::watch::follow(&crate::watch::RemoteSite(remote), remote.format, *timeout_secs)).await?;
            String::new()
        }
        Command::FirmwareConfig(cmd) => Box::pin(firmware_config(remote, cmd)).await?,
        Command::Config(ConfigCmd::Reload { wait }) => post("/v1/config/reload", json!({"wait": wait})).await?,
        Command::Notifications(NotificationsCmd::List { limit }) => {
            get(format!("/v1/notifications?limit={limit}")).await?
        }
        Command::Instance(InstanceCmd::Reboot { instance, apply_updates_on_reboot, custom_pxe: _ }) => {
            let body = json!({"apply_updates_on_reboot": apply_updates_on_reboot});
            let path = format!("/v1/instances/{}/reboot", segment(instance));
            remote.send(Method::POST, &path, Some(body), true).await?
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Abort(args))) => abort(remote, args).await?,
        Command::Machine(MachineCmd::Remove { machine, reason, yes }) => {
            // Asked here, on the operator's terminal: the API never asks.
            crate::confirm::confirm(
                &format!(
                    "Remove machine {} from the site? Its BMC credentials are destroyed; its history and audit trail \
                     are kept.",
                    machine.id()
                ),
                *yes,
            )?;
            let path = format!("/v1/machines/{}/remove", segment(machine.id()));
            remote.send(Method::POST, &path, Some(json!({"reason": reason})), true).await?
        }
        Command::Whoami => {
            let me: Value = serde_json::from_str(&remote.send(Method::GET, "/v1/whoami", None, false).await?)?;
            match remote.format {
                Format::Json => pretty(&me)?,
                Format::Table => whoami_text(&me, remote.base()),
            }
        }
        Command::Token(cmd) => token(remote, cmd).await?,
        other => bail!(
            "`hostfw {}` is not served by the hostfw API yet: run it on the site itself, with the site config \
             (--config) and without -a or a context (`HOSTFW_CONTEXT=` empties the context); nothing was sent",
            verb_name(other)
        ),
    })
}

async fn firmware_config(remote: &Remote, cmd: &FirmwareConfigCmd) -> anyhow::Result<String> {
    let get = |path: String| async move { remote.send(Method::GET, &path, None, true).await };
    let change = |c: &crate::cli::ChangeArgs| json!({"dry_run": c.dry_run, "allow_downgrade": c.allow_downgrade, "message": c.message});
    let with = |mut body: Value, extra: Value| {
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        body
    };
    Ok(match cmd {
        FirmwareConfigCmd::Set { file, change: c } => {
            // The document is read here and sent; the API never reads a client's path.
            let document = crate::firmware_config::read_document(file)?;
            let body = with(change(c), json!({"file": file.display().to_string(), "document": document}));
            confirmed(remote, "/v1/firmware-config", body, c.yes, None).await?
        }
        FirmwareConfigCmd::Diff { file } => {
            let document = crate::firmware_config::read_document(file)?;
            let body = json!({"file": file.display().to_string(), "document": document});
            remote.send(Method::POST, "/v1/firmware-config/diff", Some(body), true).await?
        }
        FirmwareConfigCmd::Unset { change: c } => {
            confirmed(remote, "/v1/firmware-config/unset", change(c), c.yes, None).await?
        }
        FirmwareConfigCmd::Rollback { to, change: c } => {
            let body = with(change(c), json!({"to": to}));
            confirmed(remote, "/v1/firmware-config/rollback", body, c.yes, None).await?
        }
        FirmwareConfigCmd::Approve { revision, yes } => {
            confirmed(remote, "/v1/firmware-config/approve", json!({"revision": revision}), *yes, None).await?
        }
        FirmwareConfigCmd::Reject { revision, message } => {
            let body = json!({"revision": revision, "message": message});
            remote.send(Method::POST, "/v1/firmware-config/reject", Some(body), true).await?
        }
        FirmwareConfigCmd::Pending => get("/v1/firmware-config/pending".into()).await?,
        FirmwareConfigCmd::Show => get("/v1/firmware-config".into()).await?,
        FirmwareConfigCmd::History { limit } => get(format!("/v1/firmware-config/history?limit={limit}")).await?,
    })
}

/// A change the operator confirms. With `yes` it is sent confirmed. Without, it is sent
/// unconfirmed: the API changes nothing and answers 422 with the preview and the question (or
/// answers at once when there is nothing to confirm: a dry run, no change). The preview is
/// printed, the question asked on this terminal (`confirm`: refused when stdin is not one), and the confirmed request sent (with `on_confirm` set in its body); its answer is
/// printed without the preview lines already shown.
async fn confirmed(
    remote: &Remote,
    path: &str,
    mut body: Value,
    yes: bool,
    on_confirm: Option<(&str, Value)>,
) -> anyhow::Result<String> {
    body["yes"] = json!(yes);
    let first = remote.send(Method::POST, path, Some(body.clone()), true).await;
    let failure = match &first {
        Err(e) => e.downcast_ref::<ApiFailure>().filter(|f| f.confirm.is_some()).cloned(),
        Ok(_) => None,
    };
    let Some(failure) = failure else { return first };
    let preview = failure.output.clone().unwrap_or_default();
    print_text(preview.clone());
    // On the operator's terminal (or refused off one); never when this CLI's own output is captured.
    crate::confirm::confirm(failure.confirm.as_deref().unwrap_or_default(), false)?;
    body["yes"] = json!(true);
    if let Some((key, value)) = on_confirm {
        body[key] = value;
    }
    let text = remote.send(Method::POST, path, Some(body), true).await?;
    Ok(without_shown(&text, &preview))
}

/// `text` without its leading lines that `shown` (the preview) already printed.
fn without_shown(text: &str, shown: &str) -> String {
    let shown: std::collections::HashSet<&str> = shown.lines().collect();
    let rest: Vec<&str> = text.lines().skip_while(|l| shown.contains(l)).collect();
    if rest.is_empty() {
        String::new()
    } else {
        rest.join("\n") + "\n"
    }
}

/// `host reprovision abort`: one host is sent as it is; a selector's hosts are confirmed like
/// every other change (`confirmed`: the preview, the question on this terminal, or `--yes`).
async fn abort(remote: &Remote, args: &AbortArgs) -> anyhow::Result<String> {
    let body = json!({
        "machine_id": args.machine, "selector": args.selector, "reason": args.reason,
        "to_maintenance": args.to_maintenance, "dry_run": args.dry_run,
    });
    confirmed(remote, "/v1/aborts", body, args.yes, None).await
}

async fn token(remote: &Remote, cmd: &TokenCmd) -> anyhow::Result<String> {
    match cmd {
        TokenCmd::Create { name, role, instances, expires } => {
            let body = json!({"name": name, "role": role, "instances": instances, "expires": expires});
            let created: Value =
                serde_json::from_str(&remote.send(Method::POST, "/v1/tokens", Some(body), false).await?)?;
            Ok(match remote.format {
                Format::Json => pretty(&created)?,
                Format::Table => format!(
                    "token {} ({} role {}) created; this is the only time it is shown:\n{}\n",
                    created["token"]["id"].as_str().unwrap_or_default(),
                    name,
                    created["token"]["role"].as_str().unwrap_or_default(),
                    created["secret"].as_str().unwrap_or_default()
                ),
            })
        }
        TokenCmd::List => {
            let tokens: Value = serde_json::from_str(&remote.send(Method::GET, "/v1/tokens", None, false).await?)?;
            if remote.format == Format::Json {
                return pretty(&tokens);
            }
            let cell = |t: &Value, k: &str| t[k].as_str().unwrap_or("-").to_string();
            let rows: Vec<Vec<String>> = tokens
                .as_array()
                .map(|all| {
                    all.iter()
                        .map(|t| {
                            let instances = t["instances"]
                                .as_array()
                                .map(|i| i.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(","));
                            let state = if t["revoked_at"].is_string() { "revoked" } else { "live" };
                            vec![
                                cell(t, "id"),
                                cell(t, "name"),
                                cell(t, "role"),
                                instances.filter(|i| !i.is_empty()).unwrap_or_else(|| "-".into()),
                                cell(t, "created_at"),
                                cell(t, "expires_at"),
                                state.to_string(),
                            ]
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok(crate::output::table(&["ID", "NAME", "ROLE", "INSTANCES", "CREATED", "EXPIRES", "STATE"], &rows))
        }
        TokenCmd::Revoke { id } => {
            let path = format!("/v1/tokens/{}", segment(id));
            let revoked: Value = serde_json::from_str(&remote.send(Method::DELETE, &path, None, false).await?)?;
            Ok(match remote.format {
                Format::Json => pretty(&revoked)?,
                Format::Table => format!("token {id} revoked; it authenticates nothing from now on"),
            })
        }
    }
}

fn whoami_text(me: &Value, base: &str) -> String {
    let instances =
        me["instances"].as_array().map(|i| i.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "));
    let scope = instances.filter(|i| !i.is_empty()).map(|i| format!(", instances {i}")).unwrap_or_default();
    format!(
        "{} at {base}: role {}{scope}",
        me["actor"].as_str().unwrap_or_default(),
        me["role"].as_str().unwrap_or_default()
    )
}

fn pretty(v: &Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(v)?)
}

/// `s` percent-encoded as one path segment or query value.
fn segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The command's words for the refusal (`firmware-config set`).
fn verb_name(command: &Command) -> String {
    let debug = format!("{command:?}");
    let word = debug.split(['(', ' ', '{']).next().unwrap_or_default();
    let mut name = String::new();
    for (i, c) in word.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            name.push('-');
        }
        name.extend(c.to_lowercase());
    }
    name
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_confirmed_answer_leaves_out_the_preview_already_shown() {
        let preview = "UPGRADE a 1 -> 2\nhosts: 3\n";
        assert_eq!(
            super::without_shown("UPGRADE a 1 -> 2\nhosts: 3\nstored version 4\n", preview),
            "stored version 4\n"
        );
        assert_eq!(super::without_shown("stored\n", ""), "stored\n");
    }

    #[test]
    fn segments_are_encoded() {
        assert_eq!(super::segment("m-1"), "m-1");
        assert_eq!(super::segment("a b/c"), "a%20b%2Fc");
    }
}
