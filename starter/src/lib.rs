//! The `hostfw` CLI as a library: argument definitions ([`cli`]) and [`run`], which the binary
//! and the end-to-end tests share.

pub mod cli;
pub mod context;
pub mod explore;
pub mod firmware;
pub mod host_show;
pub mod machine;
pub mod output;
pub mod reprovision;
pub mod rollout;
pub mod signals;

use cli::{
    Cli, Command, FirmwareCmd, HostCmd, InstanceCmd, MachineCmd, ManagedHostCmd, ReportKind, ReprovisionCmd,
    SiteExplorerCmd,
};
use context::Context;

/// Dependencies of the activity functions the CLI reuses (exploration).
pub async fn deps(ctx: &Context) -> anyhow::Result<hostfw_activities::Deps> {
    Ok(hostfw_activities::Deps {
        store: ctx.store.clone(),
        catalog: std::sync::Arc::new(ctx.catalog()?),
        settings: hostfw_worker::activity_settings(&ctx.site),
    })
}

/// Run one command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let ctx = Context::open(&cli.config, cli.format).await?;
    match cli.command {
        Command::Machine(MachineCmd::Add(args)) => machine::add(&ctx, &args).await,
        Command::Machine(MachineCmd::Import { fleet }) => machine::import(&ctx, &fleet).await,
        Command::Machine(MachineCmd::List) => machine::list(&ctx).await,
        Command::Machine(MachineCmd::Show { machine_id, history_count }) => {
            host_show::machine_show(&ctx, &machine_id, history_count).await
        }
        Command::SiteExplorer(SiteExplorerCmd::Explore { machine, concurrency }) => {
            explore::explore_cmd(&ctx, machine.as_deref(), concurrency).await
        }
        Command::SiteExplorer(SiteExplorerCmd::GetReport { kind: ReportKind::ManagedHost { bmc_ip } }) => {
            explore::get_report(&ctx, &bmc_ip).await
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Set { id, update_message, update_firmware: _ })) => {
            reprovision::set(&ctx, &id, update_message).await
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::List)) => reprovision::list(&ctx).await,
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Clear { id })) => signals::clear(&ctx, &id).await,
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::MarkManualUpgradeComplete { id })) => {
            signals::mark_manual_upgrade_complete(&ctx, &id).await
        }
        Command::ManagedHost(ManagedHostCmd::ResetHostReprovisioning { machine }) => {
            signals::reset(&ctx, &machine).await
        }
        Command::Instance(InstanceCmd::Reboot { instance, apply_updates_on_reboot, custom_pxe: _ }) => {
            signals::instance_reboot(&ctx, &instance, apply_updates_on_reboot).await
        }
        Command::ManagedHost(ManagedHostCmd::Show { machine_id, history_count }) => {
            host_show::show(&ctx, &machine_id, history_count).await
        }
        Command::Firmware(FirmwareCmd::Show) => firmware::show(&ctx).await,
        Command::Rollout(args) => rollout::rollout(&ctx, &args).await,
    }
}
