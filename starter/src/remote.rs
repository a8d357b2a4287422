//! Commands sent to the hostfw API (`hostfw -a URL ...`, or a context): each served command is
//! one request, and the CLI prints the API's answer as it is (the same table or JSON document the
//! command prints on the site). Token commands and `whoami` exist only here.
//!
//! Owns the mapping of commands to routes and the printing of token documents. A command the API
//! does not serve yet is refused by name, with the way to run it on the site; nothing is sent.

use anyhow::bail;
use reqwest::Method;
use serde_json::{json, Value};

use crate::api_client::Remote;
use crate::cli::{
    BudgetCmd, Command, FirmwareCmd, Format, HostCmd, InstanceCmd, MachineCmd, ManagedHostCmd, ReprovisionCmd, TokenCmd,
};

/// Run `command` through the API.
pub async fn run(remote: &Remote, command: &Command) -> anyhow::Result<()> {
    let get = |path: String| async move { remote.send(Method::GET, &path, None, true).await };
    let text = match command {
        Command::Plan => get("/v1/plan".into()).await?,
        Command::Compliance => get("/v1/compliance".into()).await?,
        Command::Firmware(FirmwareCmd::Show) => get("/v1/firmware".into()).await?,
        Command::Machine(MachineCmd::List) => get("/v1/machines".into()).await?,
        Command::Machine(MachineCmd::Show { machine, history_count }) => {
            get(format!("/v1/machines/{}?history_count={history_count}", segment(machine.id()))).await?
        }
        Command::ManagedHost(ManagedHostCmd::Show { machine, history_count }) => {
            get(format!("/v1/managed-hosts/{}?history_count={history_count}", segment(machine.id()))).await?
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::List)) => get("/v1/reprovision-requests".into()).await?,
        Command::Budget(BudgetCmd::List) => get("/v1/budgets".into()).await?,
        Command::Budget(BudgetCmd::Resume(t)) => {
            let body = json!({"vendor": t.vendor, "model": t.model, "component": t.component, "version": t.version});
            remote.send(Method::POST, "/v1/budgets/resume", Some(body), true).await?
        }
        Command::Audit(args) => {
            let target = args.target.as_deref().map(|t| format!("&target={}", segment(t))).unwrap_or_default();
            get(format!("/v1/audit?limit={}{target}", args.limit)).await?
        }
        Command::Instance(InstanceCmd::Reboot { instance, apply_updates_on_reboot, custom_pxe: _ }) => {
            let body = json!({"apply_updates_on_reboot": apply_updates_on_reboot});
            let path = format!("/v1/instances/{}/reboot", segment(instance));
            remote.send(Method::POST, &path, Some(body), true).await?
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
    };
    crate::out!("{}", if text.ends_with('\n') { text } else { format!("{text}\n") });
    Ok(())
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
    fn segments_are_encoded() {
        assert_eq!(super::segment("m-1"), "m-1");
        assert_eq!(super::segment("a b/c"), "a%20b%2Fc");
    }
}
