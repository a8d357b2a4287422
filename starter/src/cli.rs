//! The command line of `hostfw`: verbs and flags follow the seed's `nico-admin-cli` commands.
//!
//! Only argument definitions live here (clap derive); each command's behaviour is in its own file.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(name = "hostfw", version, about = "Operate hostfw: fleet host-firmware updates on Temporal")]
pub struct Cli {
    /// Site config file (Temporal address, site database, catalog).
    #[arg(long, global = true, env = "HOSTFW_CONFIG", default_value = "config/site.toml")]
    pub config: PathBuf,
    /// Output format of read commands.
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The hostfw API to send the command to (`https://api.site:9443`), as the operator
    /// document's `-a <core-api-url>`. Without it, the current context of the CLI config
    /// (`hostfw context use`) names one.
    #[arg(short = 'a', long = "api", env = "HOSTFW_API", value_name = "URL")]
    pub api: Option<String>,
    /// Break-glass, on the site itself: run the command against the site database and Temporal
    /// named by the site config (--config), not through the API (say, while the API is down).
    /// Needs read access to the site config, its database credentials and site key; audited as
    /// `cli:<OS account>`. Ignores the CLI config's contexts.
    #[arg(long, global = true, env = "HOSTFW_LOCAL")]
    pub local: bool,
    /// File holding the API token (`hfw_...`). `HOSTFW_TOKEN` in the environment gives the token
    /// itself; the context's `token_file` is used when neither is set.
    #[arg(long, global = true, env = "HOSTFW_TOKEN_FILE", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// PEM certificate(s) to trust for the API's https (its CA), besides the system's.
    #[arg(long, global = true, env = "HOSTFW_CA_FILE", value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// PEM file with a client certificate (chain) and its private key, for an API that maps
    /// client certificates to tokens (`[api] client_principals`, mTLS); no token is needed then.
    #[arg(long, global = true, env = "HOSTFW_CLIENT_CERT", value_name = "FILE")]
    pub client_cert: Option<PathBuf>,
    /// Use this context of the CLI config instead of its current one.
    #[arg(long, global = true, env = "HOSTFW_CONTEXT", value_name = "NAME")]
    pub context: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

/// The one machine a command works on. Every such command takes it the same ways: `--machine
/// ID`, its seed spellings `--id ID` and `-i ID`, or the id alone.
#[derive(Args, Debug, Clone)]
#[group(required = true, multiple = false)]
pub struct MachineSelector {
    /// Machine id.
    #[arg(long = "machine", short = 'i', visible_alias = "id", value_name = "MACHINE_ID")]
    flag: Option<String>,
    /// Machine id (the same as --machine).
    #[arg(value_name = "MACHINE_ID")]
    positional: Option<String>,
}

impl MachineSelector {
    /// The selector of machine `id` (a command built by the API rather than parsed).
    pub fn new(id: impl Into<String>) -> MachineSelector {
        MachineSelector { flag: Some(id.into()), positional: None }
    }

    /// The machine id given.
    pub fn id(&self) -> &str {
        self.flag.as_deref().or(self.positional.as_deref()).unwrap_or_default()
    }
}

/// One machine, or none where a command can take a selector instead (`machine auto-update`): the
/// same spellings as [`MachineSelector`], not required.
#[derive(Args, Debug, Clone, Default)]
#[group(required = false, multiple = false)]
pub struct OptionalMachine {
    /// Machine id.
    #[arg(long = "machine", short = 'i', visible_alias = "id", value_name = "MACHINE_ID")]
    flag: Option<String>,
    /// Machine id (the same as --machine).
    #[arg(value_name = "MACHINE_ID")]
    positional: Option<String>,
}

impl OptionalMachine {
    /// Machine `id` (a command built by the API rather than parsed).
    pub fn new(id: impl Into<String>) -> OptionalMachine {
        OptionalMachine { flag: Some(id.into()), positional: None }
    }

    /// The machine id given, if any.
    pub fn id(&self) -> Option<&str> {
        self.flag.as_deref().or(self.positional.as_deref())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Register and inspect machines.
    #[command(subcommand)]
    Machine(MachineCmd),
    /// Read BMC inventories (Site Explorer).
    #[command(subcommand, name = "site-explorer")]
    SiteExplorer(SiteExplorerCmd),
    /// Host reprovisioning requests.
    #[command(subcommand)]
    Host(HostCmd),
    /// Managed-host state.
    #[command(subcommand, name = "managed-host")]
    ManagedHost(ManagedHostCmd),
    /// The firmware catalog.
    #[command(subcommand)]
    Firmware(FirmwareCmd),
    /// Tenant instance operations.
    #[command(subcommand)]
    Instance(InstanceCmd),
    /// Moved: `hostfw host reprovision all-drifted --bypass-ceiling` (this name only says so).
    #[command(hide = true, disable_help_flag = true)]
    Rollout {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    },
    /// Follow the automatic rollout (live bar) until every host is compliant, then report.
    Watch {
        /// Give up after this many seconds (exit status 1).
        #[arg(long, default_value_t = 1800)]
        timeout_secs: u64,
    },
    /// Dry run of the scheduler's next pass: the ceiling, what is in flight, which hosts would
    /// start, and why every other drifted host would not. Changes nothing.
    Plan,
    /// Firmware compliance per vendor/model and component: the desired (catalog default)
    /// version, each version the fleet runs with its host count, and the hosts that are
    /// compliant, drifted, pending (the scheduler would start them, or holds them only for the
    /// ceiling or their window), active (started, retry budget left; failed ones included),
    /// failed (waiting for their retry) and exhausted. From the stored inventories; changes nothing.
    Compliance,
    /// Error budgets per rollout target (a catalog model's component at its desired version):
    /// which targets are paused, which hosts failed them and why; resume one after fixing it.
    #[command(subcommand)]
    Budget(BudgetCmd),
    /// Freeze the site, or a model or label (`--selector`): no new host starts in scope; hosts
    /// in flight finish the component they are flashing, then hold before the next one (`--drain`
    /// lets them finish). `hostfw freeze list` lists the freezes in force.
    Freeze(FreezeArgs),
    /// Lift a freeze: by `--id`, or every freeze on `--selector` (neither: the site freeze).
    Unfreeze(UnfreezeArgs),
    /// The audit trail: who changed what, when, newest first.
    Audit(AuditArgs),
    /// Webhook notifications (`[notifications]`): the recent events and each delivery's state.
    #[command(subcommand)]
    Notifications(NotificationsCmd),
    /// Every disagreement between the site database and Temporal (a request whose workflow is
    /// gone, a host protected with no request, ...), with its fix. Exit status 1 while any is left.
    Doctor {
        /// Apply the fixes (each one is audited).
        #[arg(long)]
        fix: bool,
    },
    /// The runtime layer of the firmware catalog (Host Firmware Config API), versioned in the
    /// site database and applied over the static config and the firmware directory.
    #[command(subcommand, name = "firmware-config")]
    FirmwareConfig(FirmwareConfigCmd),
    /// The site key that encrypts BMC passwords at rest and signs artifact URLs.
    #[command(subcommand, name = "site-key")]
    SiteKey(SiteKeyCmd),
    /// Signing Scout packages (Scout runs only packages signed by the key it trusts).
    #[command(subcommand, name = "scout-package")]
    ScoutPackage(ScoutPackageCmd),
    /// The site config file.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// API tokens (admin): create one per person or system, list, revoke. Through the API only.
    #[command(subcommand)]
    Token(TokenCmd),
    /// Who the API takes you for: your token's name, role and (for a tenant) instances.
    Whoami,
    /// Named API endpoints in the CLI config (like kubectl contexts).
    #[command(subcommand)]
    Context(ContextCmd),
    /// Run on the site itself: commands that read the site config and database directly.
    #[command(subcommand)]
    Admin(AdminCmd),
    /// Print the shell completion script for SHELL (e.g. `hostfw completion bash > /etc/bash_completion.d/hostfw`).
    Completion {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write one man page per command (hostfw.1, hostfw-machine-add.1, ...) into a directory.
    Man {
        /// Directory the pages are written to (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum ScoutPackageCmd {
    /// Write a new ed25519 key pair into DIR: `scout-signing.key` (private, mode 0600) and
    /// `scout-signing.pub` (give it to every Scout: `--trusted-key`). Never overwrites. Needs no
    /// site config.
    Keygen {
        /// Directory to write the two files into (created if needed).
        #[arg(long)]
        out: PathBuf,
    },
    /// Write `upgrade.manifest` and `upgrade.sig` beside the `metadata.toml` of the package at
    /// PATH (a `<vendor>/<model>/<component>` directory, or a scripts root holding only that one
    /// package), signed for the firmware version it installs: Scout then runs it only on a host
    /// of that vendor and model, for that component and target version, and (with --not-after)
    /// only until then. Sign again after any change to a script or its metadata, and for every
    /// new target version. Needs no site config.
    Sign {
        /// The private key file (`scout-signing.key`).
        #[arg(long)]
        key: PathBuf,
        /// The firmware version the package installs, exactly as the catalog's target version
        /// (e.g. `28.43.1014`).
        #[arg(long, value_name = "VERSION")]
        version: String,
        /// Scout refuses the package after this instant: an RFC 3339 time
        /// (`2026-06-30T18:00:00Z`) or a date (`2026-06-30`: through 23:59:59 UTC that day).
        #[arg(long, value_name = "TIME_OR_DATE")]
        not_after: Option<String>,
        /// An artifact the task must fetch (its file name and SHA-256 are signed); repeatable.
        #[arg(long = "artifact", value_name = "FILE")]
        artifacts: Vec<PathBuf>,
        /// A package directory (or a scripts root holding one package).
        path: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum SiteKeyCmd {
    /// Write a new random site key (base64 of 32 bytes) to a new file, mode 0600. Never
    /// overwrites. Needs no site config. Name the file in `[site] secret_key_file`.
    Generate {
        /// The file to create.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum ConfigCmd {
    /// Check the site config: it loads, the catalog loads and its default artifacts match,
    /// directories exist, the site database and Temporal answer. One line per check (ok, WARN,
    /// FAIL); exit status 1 if any FAILs. Changes nothing.
    Check,
    /// Ask every running worker to re-read its site config file (a request in the site
    /// database; SIGHUP does the same for one worker). Live keys take effect at once; a file
    /// that changes a key needing a restart, or does not load, is refused whole and the worker
    /// keeps its running config. Prints each worker's answer; exit status 1 unless every
    /// running worker applied it (or had nothing to change).
    Reload {
        /// How long to wait for the running workers' answers, in seconds.
        #[arg(long, default_value_t = 30, value_name = "SECONDS")]
        wait: u64,
    },
}

#[derive(Subcommand, Debug)]
pub enum InstanceCmd {
    /// Reboot an instance; with --apply-updates-on-reboot the tenant approves pending firmware updates.
    Reboot {
        #[arg(long, short = 'i')]
        instance: String,
        #[arg(long, short = 'a')]
        apply_updates_on_reboot: bool,
        /// Accepted for compatibility; hostfw does not change the instance's boot source.
        #[arg(long, short = 'c')]
        custom_pxe: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum MachineCmd {
    /// Register (or update) one machine.
    Add(MachineAddArgs),
    /// Register every host of a bmc-sim fleet file, with its BMC login.
    Import {
        /// The bmc-sim fleet file.
        #[arg(long)]
        fleet: PathBuf,
    },
    /// List registered machines.
    List,
    /// Set or remove a machine's labels (failure domains such as rack=r12).
    Label(LabelArgs),
    /// One machine: state, overrides and state history with times and reasons.
    Show {
        #[command(flatten)]
        machine: MachineSelector,
        /// History entries shown.
        #[arg(long, default_value_t = 10)]
        history_count: u32,
    },
    /// Enable or disable automatic firmware updates of one host, or return it to the site default.
    #[command(name = "auto-update")]
    AutoUpdate(AutoUpdateArgs),
    /// Put a host into maintenance (it takes a slot of the site ceiling and is never selected for
    /// an update) or take it out again (back to Ready, or Assigned when it carries an instance).
    Maintenance(MaintenanceArgs),
    /// Decommission: the machine leaves the site (refused while it has a reprovisioning
    /// request: abort it first); its BMC credentials are destroyed, its history and audit kept.
    Remove {
        #[command(flatten)]
        machine: MachineSelector,
        /// Why (kept in the audit trail).
        #[arg(long)]
        reason: String,
        /// Do not ask.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Re-encrypt every stored BMC password (legacy plaintext ones too) with a new site key, in
    /// one audited transaction; then point `[site] secret_key_file` at the new key.
    #[command(name = "rotate-key")]
    RotateKey {
        /// The new site key file (`hostfw site-key generate --out FILE`).
        #[arg(long)]
        new_key_file: PathBuf,
    },
}

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("direction").required(true).args(["enter", "exit"])))]
pub struct MaintenanceArgs {
    #[command(flatten)]
    pub machine: MachineSelector,
    /// Enter maintenance (refused while the host has a reprovisioning request).
    #[arg(long)]
    pub enter: bool,
    /// Leave maintenance.
    #[arg(long)]
    pub exit: bool,
    /// Why (recorded in the host's history and the audit trail).
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("policy").required(true).args(["enable", "disable", "clear"])))]
pub struct AutoUpdateArgs {
    #[command(flatten)]
    pub machine: OptionalMachine,
    /// Every registered machine on this selector instead of one: `model=<vendor>/<model>`,
    /// `model=<model>` or `label=<key>=<value>` (previewed and confirmed, as `all-drifted`).
    #[arg(long, required_unless_present_any = ["flag", "positional"], conflicts_with_all = ["flag", "positional"])]
    pub selector: Option<String>,
    /// With --selector: list the machines and their policy before and after, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --selector: do not ask.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Per-machine override: always eligible for automatic updates.
    #[arg(long)]
    pub enable: bool,
    /// Per-machine override: never selected for automatic updates.
    #[arg(long)]
    pub disable: bool,
    /// Remove the override: follow `firmware_global.autoupdate` again.
    #[arg(long)]
    pub clear: bool,
}

#[derive(Args, Debug)]
pub struct MachineAddArgs {
    #[command(flatten)]
    pub machine: MachineSelector,
    /// BMC address: `[http(s)://]host[:port][/prefix]`. A bare address is https (port 443 when
    /// absent); write `http://` for a BMC that serves plain HTTP. Stored in canonical form; a BMC
    /// another machine already has (in any spelling) is refused.
    #[arg(long)]
    pub bmc: String,
    /// Lifecycle state: Ready or Assigned.
    #[arg(long, default_value = "Ready")]
    pub state: String,
    /// Instance running on the host (assigned hosts).
    #[arg(long)]
    pub instance: Option<String>,
    /// BMC login stored in the credential store.
    #[arg(long, requires = "bmc_password")]
    pub bmc_username: Option<String>,
    #[arg(long, requires = "bmc_username", env = "HOSTFW_BMC_PASSWORD", hide_env_values = true)]
    pub bmc_password: Option<String>,
    /// A label `key=value` naming a failure domain (`--label rack=r12 --label power_domain=p4`),
    /// capped by `[machine_updater] max_concurrent_per_label`. Given: replaces the machine's
    /// labels; absent: keeps them.
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
}

#[derive(Args, Debug)]
pub struct LabelArgs {
    #[command(flatten)]
    pub machine: MachineSelector,
    /// Labels to set, `key=value` (a key already set takes the new value).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Label keys to remove.
    #[arg(long = "remove", value_name = "KEY")]
    pub remove: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum BudgetCmd {
    /// Every target on record since its last resume: hosts attempted and failed, and whether its
    /// budget is spent (paused). Changes nothing.
    List,
    /// Resume a paused target: its record is cleared (the budget starts again from nothing) and
    /// the resume is audited; the scheduler starts its hosts again at once. It also lifts a pause
    /// set by `budget pause`.
    Resume(BudgetTargetArgs),
    /// Pause a target by hand: no new host starts on it until `budget resume` (hosts in flight go
    /// on). Audited.
    Pause(BudgetPauseArgs),
}

/// `hostfw budget pause`: the target and why.
#[derive(Args, Debug, Clone)]
pub struct BudgetPauseArgs {
    #[command(flatten)]
    pub target: BudgetTargetArgs,
    /// Why (required; shown in `plan` and every host's reason).
    #[arg(long)]
    pub reason: String,
}

/// `hostfw freeze`.
#[derive(Args, Debug, Clone)]
#[command(args_conflicts_with_subcommands = true)]
pub struct FreezeArgs {
    #[command(subcommand)]
    pub cmd: Option<FreezeCmd>,
    /// Why (required to set a freeze; shown in `plan` and on every held host).
    #[arg(long)]
    pub reason: Option<String>,
    /// Only `model=<vendor>/<model>`, `model=<model>` or `label=<key>=<value>` (default: the whole site).
    #[arg(long)]
    pub selector: Option<String>,
    /// Hosts in flight finish all their components instead of holding before the next one.
    #[arg(long)]
    pub drain: bool,
}

#[derive(Subcommand, Debug, Clone)]
pub enum FreezeCmd {
    /// The freezes in force: id, scope, who set it, since when, drain, reason. Changes nothing.
    List,
}

/// `hostfw unfreeze`.
#[derive(Args, Debug, Clone)]
pub struct UnfreezeArgs {
    /// The freeze's id (`hostfw freeze list`).
    #[arg(long)]
    pub id: Option<i64>,
    /// Every freeze in force on this selector (`model=...`, `label=...`).
    #[arg(long)]
    pub selector: Option<String>,
}

/// One rollout target, named as `hostfw budget list` and `hostfw plan` print it.
#[derive(Args, Debug, Clone)]
pub struct BudgetTargetArgs {
    /// The catalog entry's vendor (may be left out when only one catalog model has this name).
    #[arg(long)]
    pub vendor: Option<String>,
    /// The catalog entry's model.
    #[arg(long)]
    pub model: String,
    /// The component (bmc, uefi, ...).
    #[arg(long)]
    pub component: String,
    /// The target (desired) version.
    #[arg(long)]
    pub version: String,
}

#[derive(Subcommand, Debug)]
pub enum SiteExplorerCmd {
    /// Explore every registered machine's BMC now (or only `--machine`).
    Explore {
        /// Only this machine.
        #[arg(long, short = 'i', visible_alias = "id", value_name = "MACHINE_ID")]
        machine: Option<String>,
        /// BMCs explored at once.
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
    },
    /// Ask the Site Explorer workflow to explore one BMC now.
    #[command(name = "re-explore")]
    ReExplore {
        /// BMC address in any form (`10.0.4.17`, `10.0.4.17:443`, `https://10.0.4.17:443/`); a
        /// bare host finds the only machine on that host.
        bmc_ip: String,
    },
    /// Show a stored exploration report.
    #[command(name = "get-report")]
    GetReport {
        #[command(subcommand)]
        kind: ReportKind,
    },
}

#[derive(Subcommand, Debug)]
pub enum ReportKind {
    /// The report of a managed host, by BMC address in any form (`10.0.4.17`,
    /// `10.0.4.17:443`, `https://10.0.4.17:443/`).
    #[command(name = "managed-host")]
    ManagedHost { bmc_ip: String },
}

#[derive(Subcommand, Debug)]
pub enum HostCmd {
    /// Host reprovisioning requests.
    #[command(subcommand)]
    Reprovision(ReprovisionCmd),
}

#[derive(Subcommand, Debug)]
pub enum ReprovisionCmd {
    /// Request reprovisioning of one host now (bypasses the scheduler).
    Set {
        #[command(flatten)]
        machine: MachineSelector,
        /// Ticket or maintenance reference.
        #[arg(long, alias = "maintenance-reference")]
        update_message: Option<String>,
        /// Accepted for compatibility; firmware checking always runs.
        #[arg(long, short = 'u')]
        update_firmware: bool,
        /// Request it even when the rollout gates hold it (a target paused by its error budget
        /// or canary wave, a full canary wave); the audit row says so.
        #[arg(long)]
        ignore_rollout_gates: bool,
    },
    /// Request reprovisioning of EVERY drifted host now, bypassing the site ceiling (asks first;
    /// --dry-run lists them), then follow progress and report.
    #[command(name = "all-drifted")]
    AllDrifted(AllDriftedArgs),
    /// List pending and active requests.
    List,
    /// Remove a request that has not started (refused once it has).
    Clear {
        #[command(flatten)]
        machine: MachineSelector,
    },
    /// Take back an update: it stops at its next safe point (a flash in progress finishes), the
    /// platform and host are restored, the request cleared and the slot freed. Works on exhausted
    /// hosts; --to-maintenance leaves the host in maintenance for hands-on repair (a dead BMC).
    Abort(AbortArgs),
    /// Confirm the approved manual platform procedure is done (MNNVL hosts, e.g. GB200).
    #[command(name = "mark-manual-upgrade-complete")]
    MarkManualUpgradeComplete {
        #[command(flatten)]
        machine: MachineSelector,
    },
}

/// `hostfw host reprovision abort`: one host (`--id`) or every host with a request in a
/// selector's scope (`--selector`, previewed with `--dry-run`, confirmed or `--yes`).
#[derive(Args, Debug, Clone)]
pub struct AbortArgs {
    /// The host whose update to take back.
    #[arg(long = "id", short = 'i', visible_alias = "machine", value_name = "MACHINE_ID")]
    pub machine: Option<String>,
    /// Every host with a request on this selector: `model=<vendor>/<model>`, `model=<model>` or
    /// `label=<key>=<value>`.
    #[arg(long, conflicts_with = "machine")]
    pub selector: Option<String>,
    /// Why (recorded in the host's history and the audit trail).
    #[arg(long)]
    pub reason: String,
    /// Leave the host in maintenance, marked for repair, instead of its prior state.
    #[arg(long)]
    pub to_maintenance: bool,
    /// With --selector: list the hosts, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --selector: do not ask.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Subcommand, Debug)]
pub enum ManagedHostCmd {
    /// State, substate, component, target and recent history of one host.
    Show {
        #[command(flatten)]
        machine: MachineSelector,
        /// History entries shown.
        #[arg(long, default_value_t = 10)]
        history_count: u32,
    },
    /// Restart firmware checking of a host and clear its retry count (after fixing the cause).
    #[command(name = "reset-host-reprovisioning")]
    ResetHostReprovisioning {
        #[command(flatten)]
        machine: MachineSelector,
    },
    /// Open (or cancel) the firmware update window of hosts whose model needs an explicit start.
    /// Opens a scheduler gate only: it creates no update request.
    #[command(name = "start-updates")]
    StartUpdates(StartUpdatesArgs),
}

#[derive(Args, Debug)]
pub struct StartUpdatesArgs {
    /// Machine ids (every one must be registered).
    #[arg(long, required = true, num_args = 1.., visible_alias = "machine", value_name = "MACHINE_ID")]
    pub machines: Vec<String>,
    /// Window start: RFC 3339 (`2026-12-01T22:00:00Z`, `...+02:00`), YYYY-MM-DDTHH:MM:SS+0000
    /// (explicit offset) or YYYY-MM-DDTHH:MM:SS (local time). Default: now.
    #[arg(long, conflicts_with = "cancel")]
    pub start: Option<String>,
    /// Window end, same forms. Default: start + 24 h.
    #[arg(long, conflicts_with = "cancel")]
    pub end: Option<String>,
    /// Remove the machines' window instead.
    #[arg(long)]
    pub cancel: bool,
}

#[derive(Subcommand, Debug)]
pub enum FirmwareCmd {
    /// The effective catalog: default version per vendor, model and component.
    Show,
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Entries shown (newest first).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,
    /// Only entries about this target (a machine id, `firmware-config`, ...).
    #[arg(long)]
    pub target: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum NotificationsCmd {
    /// The most recent events, newest first, with each webhook's delivery state (pending with
    /// its next attempt, delivered, gave up) and last error.
    List {
        /// Events shown (newest first).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
        limit: u32,
    },
}

#[derive(Subcommand, Debug)]
pub enum FirmwareConfigCmd {
    /// Validate a TOML document of `[host_models.<key>]` tables against the whole effective
    /// catalog and, if valid and different from the current one, store it as the next version.
    ///
    /// It replaces the runtime layer whole: a model left out goes back to its static default.
    /// Every artifact of a default it changes must exist and match its `sha256`. Every default
    /// that moves (UPGRADE, DOWNGRADE, ADDED, REMOVED, CHANGE, with its host count) and the hosts
    /// the next pass would start are shown first; a downgrade needs `--allow-downgrade`; then it
    /// asks (or takes `--yes`).
    Set {
        /// The document (same schema as the site config's `host_models`).
        #[arg(long)]
        file: PathBuf,
        #[command(flatten)]
        change: ChangeArgs,
    },
    /// Show what `set --file` would change (the same rows), without storing anything or asking.
    /// Exit status 0 whether or not something changes.
    Diff {
        /// The document (same schema as the site config's `host_models`).
        #[arg(long)]
        file: PathBuf,
    },
    /// Remove the runtime layer (back to the static config and the firmware directory), stored
    /// as the next version, with the same preview, downgrade rule and confirmation as `set`.
    Unset {
        #[command(flatten)]
        change: ChangeArgs,
    },
    /// Store an earlier version's document again as the next version (audited), with the same
    /// checks, preview, downgrade rule and confirmation as `set`.
    Rollback {
        /// The version to restore (see `firmware-config history`; restoring a version made by
        /// `unset` removes the layer again).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
        to: i64,
        #[command(flatten)]
        change: ChangeArgs,
    },
    /// Approve a pending change (`require_second_admin`): it is previewed again against the
    /// catalog in effect and stored as the next version. Refused for its proposer.
    Approve {
        /// The pending change (see `firmware-config pending`).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
        revision: i64,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Reject a pending change (`require_second_admin`; its proposer may withdraw it).
    Reject {
        /// The pending change (see `firmware-config pending`).
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
        revision: i64,
        /// Why, for the audit trail.
        #[arg(long, short = 'm')]
        message: Option<String>,
    },
    /// Changes waiting for a second admin's approval (`require_second_admin`), oldest first.
    Pending,
    /// The current version (number, when, who, message) and the effective catalog.
    Show,
    /// Stored versions, newest first, with their messages.
    History {
        /// Versions shown.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
        limit: u32,
    },
}

/// The flags of every change of the runtime catalog layer.
#[derive(Args, Debug)]
pub struct ChangeArgs {
    /// Show the changes and the hosts that would start, then stop: nothing is stored.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Accept that some default moves to an older version (refused without it).
    #[arg(long)]
    pub allow_downgrade: bool,
    /// The change ticket, stored with the version and in the audit trail (`history` shows it).
    #[arg(long, short = 'm')]
    pub message: Option<String>,
}

impl ChangeArgs {
    pub fn flags(&self) -> crate::firmware_config::ChangeFlags {
        crate::firmware_config::ChangeFlags {
            dry_run: self.dry_run,
            yes: self.yes,
            allow_downgrade: self.allow_downgrade,
            message: self.message.clone(),
        }
    }
}

#[derive(Args, Debug)]
pub struct AllDriftedArgs {
    /// Required: say that these direct requests bypass the scheduler's site ceiling, update
    /// windows and auto-update policy (failure-domain caps still apply).
    #[arg(long, required = true)]
    pub bypass_ceiling: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// Only list the hosts that would be requested.
    #[arg(long)]
    pub dry_run: bool,
    /// Explore every BMC first.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub explore: bool,
    /// Give up waiting after this many seconds.
    #[arg(long, default_value_t = 1800)]
    pub timeout_secs: u64,
    /// Message recorded on each request.
    #[arg(long, default_value = "hostfw host reprovision all-drifted")]
    pub update_message: String,
    /// Also request the drifted hosts the rollout gates hold (a paused target, a full canary
    /// wave); without it they are listed and left out. The prompt and the audit row say so.
    #[arg(long)]
    pub ignore_rollout_gates: bool,
    /// Return once the hosts are requested instead of following them (the API serves it so: a
    /// request does not hold a connection for the rollout; the CLI follows with `watch`).
    #[arg(skip)]
    pub no_follow: bool,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_legacy_update_firmware_flag_is_accepted() {
        let cli =
            Cli::try_parse_from(["hostfw", "host", "reprovision", "set", "--id", "m1", "--update-firmware"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Host(HostCmd::Reprovision(ReprovisionCmd::Set { ref machine, update_firmware: true, .. }))
                if machine.id() == "m1"
        ));
    }

    #[test]
    fn missing_and_unknown_arguments_are_refused() {
        let err = Cli::try_parse_from(["hostfw", "host", "reprovision", "set"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        let err = Cli::try_parse_from(["hostfw", "machine", "add", "--id", "x", "--bmc", "1.2.3.4:1", "--bogus"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
        let err = Cli::try_parse_from(["hostfw", "--format", "yaml", "machine", "list"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
    }

    /// Every command about one machine, with the arguments it needs besides the machine.
    const ONE_MACHINE: &[&[&str]] = &[
        &["machine", "add", "--bmc", "10.0.0.1"],
        &["machine", "show"],
        &["host", "reprovision", "set"],
        &["host", "reprovision", "clear"],
        &["host", "reprovision", "mark-manual-upgrade-complete"],
        &["managed-host", "show"],
        &["managed-host", "reset-host-reprovisioning"],
        &["machine", "maintenance", "--enter"],
        &["machine", "remove", "--reason", "decommissioned"],
    ];

    fn selector(cli: &Cli) -> &MachineSelector {
        match &cli.command {
            Command::Machine(MachineCmd::Add(a)) => &a.machine,
            Command::Machine(MachineCmd::Show { machine, .. }) => machine,
            Command::Host(HostCmd::Reprovision(ReprovisionCmd::Set { machine, .. })) => machine,
            Command::Host(HostCmd::Reprovision(ReprovisionCmd::Clear { machine })) => machine,
            Command::Host(HostCmd::Reprovision(ReprovisionCmd::MarkManualUpgradeComplete { machine })) => machine,
            Command::ManagedHost(ManagedHostCmd::Show { machine, .. }) => machine,
            Command::ManagedHost(ManagedHostCmd::ResetHostReprovisioning { machine }) => machine,
            Command::Machine(MachineCmd::Maintenance(a)) => &a.machine,
            Command::Machine(MachineCmd::Remove { machine, .. }) => machine,
            other => panic!("not a one-machine command: {other:?}"),
        }
    }

    #[test]
    fn every_one_machine_command_takes_the_machine_the_same_ways() {
        for command in ONE_MACHINE {
            for form in [&["--machine", "m-7"][..], &["--id", "m-7"], &["-i", "m-7"], &["m-7"]] {
                let args: Vec<&str> = ["hostfw"].iter().chain(command.iter()).chain(form.iter()).copied().collect();
                let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
                assert_eq!(selector(&cli).id(), "m-7", "{args:?}");
            }
            let none: Vec<&str> = ["hostfw"].iter().chain(command.iter()).copied().collect();
            assert!(Cli::try_parse_from(&none).is_err(), "{none:?} without a machine must be refused");
            let both: Vec<&str> = none.iter().copied().chain(["--machine", "a", "b"]).collect();
            assert!(Cli::try_parse_from(&both).is_err(), "{both:?}: two machines must be refused");
        }
    }

    /// `machine auto-update` takes one machine the same ways, or a selector instead (not both).
    #[test]
    fn auto_update_takes_the_machine_the_same_ways_or_a_selector() {
        for form in [&["--machine", "m-7"][..], &["--id", "m-7"], &["-i", "m-7"], &["m-7"]] {
            let args: Vec<&str> =
                ["hostfw", "machine", "auto-update", "--enable"].iter().chain(form).copied().collect();
            let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let Command::Machine(MachineCmd::AutoUpdate(a)) = cli.command else { panic!() };
            assert_eq!((a.machine.id(), a.selector), (Some("m-7"), None), "{args:?}");
        }
        let cli = Cli::try_parse_from(["hostfw", "machine", "auto-update", "--clear", "--selector", "label=rack=r1"])
            .unwrap();
        let Command::Machine(MachineCmd::AutoUpdate(a)) = cli.command else { panic!() };
        assert_eq!((a.machine.id(), a.selector.as_deref()), (None, Some("label=rack=r1")));
        let err = Cli::try_parse_from(["hostfw", "machine", "auto-update", "--clear", "m-7", "--selector", "model=x"]);
        assert_eq!(err.unwrap_err().kind(), clap::error::ErrorKind::ArgumentConflict);
        let err = Cli::try_parse_from(["hostfw", "machine", "auto-update", "--clear"]);
        assert_eq!(err.unwrap_err().kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn start_updates_takes_machine_as_well_as_machines() {
        for flag in ["--machines", "--machine"] {
            let cli = Cli::try_parse_from(["hostfw", "managed-host", "start-updates", flag, "a", "b"]).unwrap();
            let Command::ManagedHost(ManagedHostCmd::StartUpdates(args)) = cli.command else { panic!() };
            assert_eq!(args.machines, ["a", "b"]);
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum TokenCmd {
    /// Create a token and print it once (it cannot be shown again).
    Create {
        /// A name for the holder (`alice`, `provisioning`); unique among live tokens.
        #[arg(long)]
        name: String,
        /// viewer, operator, admin or tenant.
        #[arg(long)]
        role: String,
        /// A tenant token's instance; repeatable (required for a tenant).
        #[arg(long = "instance", value_name = "INSTANCE_ID")]
        instances: Vec<String>,
        /// Lifetime: `90d`, `12h`, `30m`. Without it the token lives until revoked.
        #[arg(long)]
        expires: Option<String>,
    },
    /// Every token (never their secrets), newest first.
    List,
    /// Revoke a token by id: it authenticates nothing from now on.
    Revoke {
        /// The token's id (`hostfw token list`).
        id: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum ContextCmd {
    /// Add or change a context.
    Set {
        name: String,
        /// The API's base URL (`https://api.site:9443`).
        #[arg(long)]
        api: String,
        /// File holding the token.
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// PEM certificate(s) to trust for the API's https.
        #[arg(long)]
        ca_file: Option<PathBuf>,
        /// PEM client certificate and key (mTLS), instead of a token.
        #[arg(long)]
        client_cert: Option<PathBuf>,
    },
    /// Make a context the current one.
    Use { name: String },
    /// The contexts, the current one marked.
    List,
}

#[derive(Subcommand, Debug)]
pub enum AdminCmd {
    /// Create the site's first admin token, reading the site config and database directly (run it
    /// on the site). Refused once an admin token exists: make further tokens with `hostfw token
    /// create`.
    Bootstrap {
        /// The token's name.
        #[arg(long, default_value = "admin")]
        name: String,
        /// Write the token to this new file (mode 0600) instead of printing it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}
