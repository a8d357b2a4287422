//! `machine add|import|list`: registering the fleet in the site database.

use anyhow::{anyhow, bail};
use hostfw_model::HostState;
use hostfw_store::NewMachine;

use crate::cli::MachineAddArgs;
use crate::context::Context;
use crate::output;

fn check_state(state: &str) -> anyhow::Result<String> {
    let parsed: HostState = state.parse().map_err(|e| anyhow!("--state {state:?}: {e}"))?;
    match parsed {
        HostState::Ready | HostState::Assigned => Ok(parsed.to_string()),
        other => bail!("--state {other}: a machine is registered as Ready or Assigned"),
    }
}

fn check_bmc(bmc: &str) -> anyhow::Result<()> {
    let rest = bmc.split_once("://").map(|(_, r)| r).unwrap_or(bmc);
    let Some((host, port)) = rest.trim_end_matches('/').rsplit_once(':') else {
        bail!("--bmc {bmc:?}: expected ip:port or http(s)://ip:port");
    };
    if host.is_empty() || port.parse::<u16>().map_or(true, |p| p == 0) {
        bail!("--bmc {bmc:?}: expected ip:port with a non-zero port");
    }
    Ok(())
}

/// `machine add`.
pub async fn add(ctx: &Context, args: &MachineAddArgs) -> anyhow::Result<()> {
    let state = check_state(&args.state)?;
    check_bmc(&args.bmc)?;
    if state == HostState::Assigned.to_string() && args.instance.is_none() {
        bail!("--state Assigned needs --instance <instance-id>");
    }
    let machine = NewMachine {
        id: args.id.clone(),
        bmc_address: args.bmc.clone(),
        vendor: None,
        model: None,
        state,
        instance_id: args.instance.clone(),
    };
    ctx.store.machine_upsert(&machine).await?;
    if let (Some(user), Some(password)) = (&args.bmc_username, &args.bmc_password) {
        ctx.store.credentials_put(&args.id, user, password).await?;
    }
    ctx.audit("machine add", &args.id, &format!("bmc {}", args.bmc)).await?;
    crate::outln!("machine {} registered (BMC {})", args.id, args.bmc);
    Ok(())
}

/// `machine import --fleet`: every host of a bmc-sim fleet file, with its BMC login.
pub async fn import(ctx: &Context, fleet: &std::path::Path) -> anyhow::Result<()> {
    let spec = hostfw_bmc_sim::FleetSpec::load(fleet).map_err(|e| anyhow!("{e}"))?;
    let hosts = spec.hosts;
    for host in &hosts {
        check_bmc(&host.bmc_address.to_string())
            .map_err(|e| anyhow!("{}: host {}: {e}", fleet.display(), host.id))?;
    }
    for host in &hosts {
        let machine = NewMachine {
            id: host.id.clone(),
            bmc_address: host.bmc_address.to_string(),
            vendor: Some(host.vendor.clone()),
            model: Some(host.model.clone()),
            state: HostState::Ready.to_string(),
            instance_id: None,
        };
        ctx.store.machine_upsert(&machine).await?;
        ctx.store.credentials_put(&host.id, &host.username, &host.password).await?;
    }
    ctx.audit("machine import", &fleet.display().to_string(), &format!("{} machines", hosts.len())).await?;
    crate::outln!("{} machines registered from {}", hosts.len(), fleet.display());
    Ok(())
}

/// `machine list`.
pub async fn list(ctx: &Context) -> anyhow::Result<()> {
    let machines = ctx.store.machine_list().await?;
    let rows = machines
        .iter()
        .map(|m| {
            vec![
                m.id.clone(),
                m.bmc_address.clone(),
                m.vendor.clone().unwrap_or_default(),
                m.model.clone().unwrap_or_default(),
                m.state.clone(),
                m.substate.clone().unwrap_or_default(),
            ]
        })
        .collect();
    output::print(ctx.format, &machines, &["MACHINE", "BMC", "VENDOR", "MODEL", "STATE", "SUBSTATE"], rows)
}
