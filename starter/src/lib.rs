//! The `hostfw` CLI (crate `hostfw-starter`, folder `starter/` as the project layout names it;
//! binary `hostfw`) as a library: argument definitions ([`cli`]) and [`run`], which the binary and
//! the end-to-end tests share.
//!
//! It builds the activity dependencies it reuses through `hostfw_activities::Deps::open`, connects
//! through `hostfw_connect`, and reads fleet files as a `hostfw_fleet::FleetRoster`: it links
//! neither the worker nor the simulator.

pub mod abort;
pub mod api_client;
pub mod audit;
pub mod auto_update;
pub mod bootstrap;
pub mod brakes;
pub mod budget;
pub mod catalog_approval;
pub mod catalog_change;
pub mod catalog_change_table;
pub mod catalog_commit;
pub mod catalog_fallback;
pub mod catalog_preview;
pub mod cli;
pub mod cli_contexts;
pub mod completion;
pub mod compliance;
pub mod config_check;
pub mod config_reload;
pub mod confirm;
pub mod context;
pub mod doctor;
pub mod explore;
pub mod firmware;
pub mod firmware_config;
pub mod host_show;
pub mod json_contract;
pub mod live_status;
pub mod machine;
pub mod machine_label;
pub mod machine_remove;
pub mod maintenance;
pub mod man_pages;
pub mod notifications;
pub mod output;
pub mod plan;
pub mod re_explore;
pub mod remote;
pub mod report_view;
pub mod reprovision;
pub mod reprovision_all;
pub mod scout_package;
pub mod signals;
pub mod site_key;
pub mod start_updates;
pub mod wake;
pub mod watch;
pub mod window_time;

use cli::{
    Cli, Command, FirmwareCmd, HostCmd, InstanceCmd, MachineCmd, ManagedHostCmd, ReportKind, ReprovisionCmd,
    ScoutPackageCmd, SiteExplorerCmd, SiteKeyCmd,
};
use cli::{ConfigCmd, FirmwareConfigCmd, NotificationsCmd};
use context::Context;

/// What `hostfw rollout` says (the name moved); on the site and through the API alike.
pub const ROLLOUT_MOVED: &str = "`hostfw rollout` is now `hostfw host reprovision all-drifted --bypass-ceiling`: it \
     requests every drifted host at once, bypassing the site ceiling (it asks first; --dry-run lists the hosts). For \
     the automatic rollout under the ceiling, run `hostfw watch`. Nothing was changed";

/// What a command that changes or reads the site says when no API is named.
pub const NO_API: &str = "this command goes through the hostfw API: name it with -a URL (and --token-file FILE or \
     HOSTFW_TOKEN), or a context (`hostfw context set NAME --api URL --token-file FILE`, then `hostfw context use \
     NAME`); the first admin token comes from `hostfw admin bootstrap` on the site. On the site itself, `--local` runs \
     it against the site database directly (break-glass, audited as the OS account). Nothing was done";

/// Dependencies of the activity functions the CLI reuses (exploration).
pub async fn deps(ctx: &Context) -> anyhow::Result<hostfw_activities::Deps> {
    Ok(hostfw_activities::Deps::open(&ctx.site, ctx.store.clone(), None).await?)
}

/// Run one command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    // Commands that need no site config, or must work before the site is usable.
    match &cli.command {
        Command::Config(ConfigCmd::Check) => return config_check::config_check(&cli.config, cli.format).await,
        Command::Completion { shell } => return completion::print(*shell, cli.format),
        Command::Man { out } => return man_pages::write_all(out, cli.format),
        Command::SiteKey(SiteKeyCmd::Generate { out }) => return site_key::generate(out, cli.format),
        Command::ScoutPackage(ScoutPackageCmd::Keygen { out }) => return scout_package::keygen(out, cli.format),
        Command::ScoutPackage(ScoutPackageCmd::Sign { key, version, not_after, artifacts, path }) => {
            let request = scout_package::SignRequest { version, not_after: not_after.as_deref(), artifacts };
            return scout_package::sign(key, &request, path, cli.format);
        }
        Command::Context(cmd) => return cli_contexts::context_cmd(cmd),
        _ => {}
    }
    if cli.local && cli.api.is_some() {
        anyhow::bail!("--local runs on the site against its database; -a sends to an API: give one of them");
    }
    // Through the API when one is named (`-a URL` or a context); the bootstrap is never sent, and
    // `--local` (break-glass on the site) never goes through it.
    if !matches!(cli.command, Command::Admin(_)) && !cli.local {
        if let Some(remote) = api_client::selected(&cli)? {
            // Boxed: the future of every served command is large (debug builds overflow the stack).
            return Box::pin(remote::run(&remote, &cli.command)).await;
        }
    }
    if matches!(cli.command, Command::Token(_) | Command::Whoami) {
        anyhow::bail!(
            "`hostfw token` and `hostfw whoami` go through the hostfw API: name it with -a URL (and --token-file \
             or HOSTFW_TOKEN), or a context (`hostfw context set NAME --api URL --token-file FILE`)"
        );
    }
    if !cli.local && !matches!(cli.command, Command::Admin(_)) {
        anyhow::bail!(NO_API);
    }
    let ctx = Context::open(&cli.config, cli.format).await?;
    match cli.command {
        Command::Machine(MachineCmd::Add(args)) => machine::add(&ctx, &args).await,
        Command::Machine(MachineCmd::Import { fleet }) => machine::import(&ctx, &fleet).await,
        Command::Machine(MachineCmd::List) => machine::list(&ctx).await,
        Command::Machine(MachineCmd::Label(args)) => machine_label::label(&ctx, &args).await,
        Command::Machine(MachineCmd::Show { machine, history_count }) => {
            host_show::machine_show(&ctx, machine.id(), history_count).await
        }
        Command::SiteExplorer(SiteExplorerCmd::Explore { machine, concurrency }) => {
            explore::explore_cmd(&ctx, machine.as_deref(), concurrency).await
        }
        Command::SiteExplorer(SiteExplorerCmd::GetReport { kind: ReportKind::ManagedHost { bmc_ip } }) => {
            explore::get_report(&ctx, &bmc_ip).await
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Set {
            machine,
            update_message,
            update_firmware: _,
            ignore_rollout_gates,
        })) => reprovision::set(&ctx, machine.id(), update_message, ignore_rollout_gates).await,
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::List)) => reprovision::list(&ctx).await,
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Clear { machine })) => {
            signals::clear(&ctx, machine.id()).await
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::Abort(args))) => abort::abort(&ctx, &args).await,
        Command::Machine(MachineCmd::Remove { machine, reason, yes }) => {
            machine_remove::remove(&ctx, machine.id(), &reason, yes).await
        }
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::MarkManualUpgradeComplete { machine })) => {
            signals::mark_manual_upgrade_complete(&ctx, machine.id()).await
        }
        Command::ManagedHost(ManagedHostCmd::ResetHostReprovisioning { machine }) => {
            signals::reset(&ctx, machine.id()).await
        }
        Command::Instance(InstanceCmd::Reboot { instance, apply_updates_on_reboot, custom_pxe: _ }) => {
            signals::instance_reboot(&ctx, &instance, apply_updates_on_reboot).await
        }
        Command::ManagedHost(ManagedHostCmd::Show { machine, history_count }) => {
            host_show::show(&ctx, machine.id(), history_count).await
        }
        Command::Firmware(FirmwareCmd::Show) => firmware::show(&ctx).await,
        Command::Rollout { .. } => anyhow::bail!(ROLLOUT_MOVED),
        Command::Host(HostCmd::Reprovision(ReprovisionCmd::AllDrifted(args))) => {
            reprovision_all::all_drifted(&ctx, &args).await
        }
        Command::Plan => plan::plan(&ctx).await,
        Command::Compliance => compliance::compliance(&ctx).await,
        Command::Budget(cmd) => budget::budget(&ctx, &cmd).await,
        Command::Freeze(args) => brakes::freeze(&ctx, &args).await,
        Command::Unfreeze(args) => brakes::unfreeze_cmd(&ctx, &args).await,
        Command::Watch { timeout_secs } => watch::watch(&ctx, timeout_secs).await,
        Command::SiteExplorer(SiteExplorerCmd::ReExplore { bmc_ip }) => re_explore::re_explore(&ctx, &bmc_ip).await,
        Command::Machine(MachineCmd::RotateKey { new_key_file }) => site_key::rotate(&ctx, &new_key_file).await,
        Command::SiteKey(SiteKeyCmd::Generate { out }) => site_key::generate(&out, ctx.format),
        Command::ScoutPackage(ScoutPackageCmd::Keygen { out }) => scout_package::keygen(&out, ctx.format),
        Command::ScoutPackage(ScoutPackageCmd::Sign { key, version, not_after, artifacts, path }) => {
            let request = scout_package::SignRequest {
                version: &version,
                not_after: not_after.as_deref(),
                artifacts: &artifacts,
            };
            scout_package::sign(&key, &request, &path, ctx.format)
        }
        Command::Machine(MachineCmd::AutoUpdate(args)) => auto_update::auto_update(&ctx, &args).await,
        Command::Machine(MachineCmd::Maintenance(args)) => maintenance::maintenance(&ctx, &args).await,
        Command::ManagedHost(ManagedHostCmd::StartUpdates(args)) => start_updates::start_updates(&ctx, &args).await,
        Command::Audit(args) => audit::audit(&ctx, &args).await,
        Command::Notifications(NotificationsCmd::List { limit }) => notifications::list(&ctx, limit).await,
        Command::Doctor { fix } => doctor::doctor(&ctx, fix).await,
        Command::FirmwareConfig(FirmwareConfigCmd::Set { file, change }) => {
            firmware_config::set(&ctx, &file, &change.flags()).await
        }
        Command::FirmwareConfig(FirmwareConfigCmd::Diff { file }) => firmware_config::diff(&ctx, &file).await,
        Command::FirmwareConfig(FirmwareConfigCmd::Unset { change }) => {
            firmware_config::unset(&ctx, &change.flags()).await
        }
        Command::FirmwareConfig(FirmwareConfigCmd::Rollback { to, change }) => {
            firmware_config::rollback(&ctx, to, &change.flags()).await
        }
        Command::FirmwareConfig(FirmwareConfigCmd::Approve { revision, yes }) => {
            firmware_config::approve(&ctx, revision, yes).await
        }
        Command::FirmwareConfig(FirmwareConfigCmd::Reject { revision, message }) => {
            firmware_config::reject(&ctx, revision, message.as_deref()).await
        }
        Command::FirmwareConfig(FirmwareConfigCmd::Pending) => firmware_config::pending(&ctx).await,
        Command::FirmwareConfig(FirmwareConfigCmd::Show) => firmware_config::show(&ctx).await,
        Command::FirmwareConfig(FirmwareConfigCmd::History { limit }) => firmware_config::history(&ctx, limit).await,
        Command::Config(ConfigCmd::Reload { wait }) => config_reload::config_reload(&ctx, wait).await,
        Command::Admin(cli::AdminCmd::Bootstrap { name, out }) => bootstrap::bootstrap(&ctx, &name, out.as_ref()).await,
        Command::Token(_) | Command::Whoami => unreachable!("refused above without an API"),
        Command::Context(_) | Command::Config(ConfigCmd::Check) | Command::Completion { .. } | Command::Man { .. } => {
            unreachable!("handled before the site is opened")
        }
    }
}
