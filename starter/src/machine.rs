//! `machine add|import|list`: registering the fleet in the site database, with each machine's
//! labels (`--label rack=r12`, a fleet host's `labels`; `machine label` changes them later).
//!
//! Registration parses every BMC address with `BmcAddress` (a bare address is https, port 443;
//! plain http only when written) and stores its canonical form. One BMC is one machine: a machine
//! whose BMC another machine already has (in any spelling, over either scheme) is refused naming
//! the address as given and the owner, and nothing is written. `import` registers a whole fleet
//! file in one transaction (all or nothing); registering the same machines again is a refresh
//! that keeps each known host's state and instance. A host being updated cannot be given another
//! state, instance or BMC by either command (refused, nothing written).

use anyhow::{anyhow, bail};
use hostfw_model::{BmcAddress, HostState, Scheme};
use hostfw_store::{Credentials, NewMachine, Registration, StoreError};

use crate::cli::MachineAddArgs;
use crate::context::Context;
use crate::output;

fn check_state(state: &str) -> anyhow::Result<HostState> {
    let parsed: HostState = state.parse().map_err(|e| anyhow!("--state {state:?}: {e}"))?;
    match parsed {
        HostState::Ready | HostState::Assigned => Ok(parsed),
        other => bail!("--state {other}: a machine is registered as Ready or Assigned"),
    }
}

/// The refusal of a BMC another machine has, naming the address as the operator gave it.
fn taken(e: StoreError, given: &str) -> anyhow::Error {
    match e {
        StoreError::BmcAddressTaken { address, owner, owned, .. } => anyhow!(
            "BMC address {given:?} ({address}) is already registered to machine {owner} (as {owned}): \
             one BMC is one machine; nothing was written"
        ),
        other => other.into(),
    }
}

/// `machine add`.
pub async fn add(ctx: &Context, args: &MachineAddArgs) -> anyhow::Result<()> {
    let state = check_state(&args.state)?;
    let address: BmcAddress = args.bmc.parse().map_err(|e| anyhow!("--bmc: {e}"))?;
    if state == HostState::Assigned && args.instance.is_none() {
        bail!("--state Assigned needs --instance <instance-id>");
    }
    let labels = if args.label.is_empty() {
        None
    } else {
        Some(hostfw_model::parse_labels(args.label.iter().map(String::as_str)).map_err(|e| anyhow!("--label: {e}"))?)
    };
    let login = match (&args.bmc_username, &args.bmc_password) {
        (Some(username), Some(password)) => {
            Some(Credentials { username: username.clone(), password: password.clone().into() })
        }
        _ => None,
    };
    let machine = NewMachine {
        id: args.machine.id().to_string(),
        bmc_address: address.clone(),
        vendor: None,
        model: None,
        state,
        instance_id: args.instance.clone(),
        labels: labels.clone(),
    };
    ctx.store
        .machines_register(&[Registration { machine, login, keep_state: false }])
        .await
        .map_err(|e| taken(e, &args.bmc))
        .map_err(|e| anyhow!("machine add --machine {}: {e}", args.machine.id()))?;
    let detail = match &labels {
        Some(l) => format!("bmc {address}, labels {}", hostfw_model::labels_text(l)),
        None => format!("bmc {address}"),
    };
    ctx.audit("machine add", args.machine.id(), &detail).await?;
    let json = serde_json::json!({ "machine_id": args.machine.id(), "bmc_address": address.to_string(), "labels": labels, "action": "machine add" });
    crate::output::result(ctx.format, &json, format!("machine {} registered (BMC {address})", args.machine.id()))?;
    Ok(())
}

/// `machine import --fleet`: every host of a bmc-sim fleet file (read as a [`hostfw_fleet::FleetRoster`]),
/// with its BMC login, all or nothing. Its hosts are registered as `https://ip:port`, like
/// `machine add`'s bare addresses, unless the file writes `tls = false` (`http://ip:port`).
pub async fn import(ctx: &Context, fleet: &std::path::Path) -> anyhow::Result<()> {
    let spec = hostfw_fleet::FleetRoster::load(fleet)?;
    import_roster(ctx, fleet, spec).await
}

/// `machine import` of fleet TOML text already read (`fleet` names the file it came from; the
/// API takes the text in its request body and never reads a path). `profile` folders are not
/// read here: they are relative to the client's file, and registration does not use them.
pub async fn import_text(ctx: &Context, fleet: &std::path::Path, text: &str) -> anyhow::Result<()> {
    let parsed: toml::Table = toml::from_str(text).map_err(|e| anyhow!("{}: not TOML: {e}", fleet.display()))?;
    let names_profile = |t: &toml::Value| t.as_table().is_some_and(|t| t.contains_key("profile"));
    let hosts = parsed.get("host").and_then(toml::Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if parsed.get("defaults").is_some_and(names_profile) || hosts.iter().any(names_profile) {
        bail!(
            "{}: names a `profile` folder: the sender resolves profiles (`hostfw -a URL machine import` does) and \
             sends vendor and model; nothing was imported",
            fleet.display()
        );
    }
    let spec = hostfw_fleet::FleetRoster::from_toml_str_in(text, std::path::Path::new("."))
        .map_err(|e| anyhow!("{}: {}", fleet.display(), hostfw_model::error_chain(&e)))?;
    import_roster(ctx, fleet, spec).await
}

async fn import_roster(ctx: &Context, fleet: &std::path::Path, spec: hostfw_fleet::FleetRoster) -> anyhow::Result<()> {
    let scheme = if spec.tls { Scheme::Https } else { Scheme::Http };
    let mut batch = Vec::with_capacity(spec.hosts.len());
    for host in &spec.hosts {
        let address = BmcAddress::from_socket_addr(scheme, host.bmc_address)
            .map_err(|e| anyhow!("{}: host {}: bmc_address: {e}", fleet.display(), host.id))?;
        batch.push(Registration {
            machine: NewMachine {
                id: host.id.clone(),
                bmc_address: address,
                vendor: Some(host.vendor.clone()),
                model: Some(host.model.clone()),
                state: HostState::Ready,
                instance_id: None,
                labels: host.labels.clone(),
            },
            login: Some(Credentials { username: host.username.clone(), password: host.password.clone().into() }),
            // Importing the fleet again refreshes BMCs and logins; it never resets what a known
            // host is doing (an Assigned host stays Assigned, an updating one keeps updating).
            keep_state: true,
        });
    }
    ctx.store.machines_register(&batch).await.map_err(|e| match e {
        StoreError::BmcAddressTaken { machine, address, owner, owned } => {
            let whose = if spec.hosts.iter().any(|h| h.id == owner) {
                format!("is also the BMC of host {owner} in this file")
            } else {
                format!("is already registered to machine {owner} (as {owned})")
            };
            anyhow!(
                "{}: host {machine}: BMC {address} {whose}: one BMC is one machine; nothing was imported",
                fleet.display()
            )
        }
        other => anyhow!("{}: {}; nothing was imported", fleet.display(), hostfw_model::error_chain(&other)),
    })?;
    ctx.audit("machine import", &fleet.display().to_string(), &format!("{} machines", batch.len())).await?;
    let ids: Vec<&str> = batch.iter().map(|b| b.machine.id.as_str()).collect();
    let json =
        serde_json::json!({ "action": "machine import", "file": fleet.display().to_string(), "machine_ids": ids });
    crate::output::result(ctx.format, &json, format!("{} machines registered from {}", batch.len(), fleet.display()))
}

/// The fleet file read and checked here (its `profile` folders resolved), as the TOML text
/// `machine import` sends to the API: every host with its vendor, model and login, no profile.
pub fn roster_text(fleet: &std::path::Path) -> anyhow::Result<String> {
    let spec = hostfw_fleet::FleetRoster::load(fleet)?;
    let mut hosts = toml::value::Array::new();
    for h in &spec.hosts {
        let mut t = toml::Table::new();
        t.insert("id".into(), h.id.clone().into());
        t.insert("bmc_address".into(), h.bmc_address.to_string().into());
        t.insert("vendor".into(), h.vendor.clone().into());
        t.insert("model".into(), h.model.clone().into());
        t.insert("username".into(), h.username.clone().into());
        t.insert("password".into(), h.password.clone().into());
        if let Some(labels) = &h.labels {
            let labels: toml::Table = labels.iter().map(|(k, v)| (k.clone(), toml::Value::from(v.clone()))).collect();
            t.insert("labels".into(), labels.into());
        }
        hosts.push(t.into());
    }
    let mut doc = toml::Table::new();
    doc.insert("tls".into(), spec.tls.into());
    doc.insert("host".into(), hosts.into());
    Ok(toml::to_string(&doc)?)
}

/// `machine list`.
pub async fn list(ctx: &Context) -> anyhow::Result<()> {
    let machines = ctx.store.machine_list().await?;
    let rows = machines
        .iter()
        .map(|m| {
            vec![
                m.id.clone(),
                m.bmc_address.to_string(),
                m.vendor.clone().unwrap_or_default(),
                m.model.clone().unwrap_or_default(),
                m.state.to_string(),
                m.substate.map(|s| s.to_string()).unwrap_or_default(),
                hostfw_model::labels_text(&m.labels),
            ]
        })
        .collect();
    output::print(ctx.format, &machines, &["MACHINE", "BMC", "VENDOR", "MODEL", "STATE", "SUBSTATE", "LABELS"], rows)
}
