//! The CLI config: named API endpoints (contexts) and the current one, in
//! `$HOSTFW_CLI_CONFIG` or `~/.config/hostfw/cli.toml`:
//!
//! ```toml
//! current = "site-b"
//! [contexts.site-b]
//! api = "https://api.site-b:9443"
//! token_file = "/home/alice/.config/hostfw/site-b.token"
//! ca_file = "/etc/hostfw/site-b-ca.pem"
//! ```
//!
//! Owns reading and writing that file (written whole through a temporary file, so a failed write
//! leaves the old one) and the `hostfw context` commands. It holds no token, only where one is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _};
use serde::{Deserialize, Serialize};

use crate::cli::ContextCmd;

/// One named endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiContext {
    pub api: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// A PEM client certificate and key (mTLS) the API maps to a token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<PathBuf>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CliConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    #[serde(default)]
    pub contexts: BTreeMap<String, ApiContext>,
}

/// Where the CLI config is.
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOSTFW_CLI_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("hostfw").join("cli.toml"))
}

/// The CLI config at `file` (empty when the file does not exist).
pub fn load(file: &Path) -> anyhow::Result<CliConfig> {
    match std::fs::read_to_string(file) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("the CLI config {} is not valid", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CliConfig::default()),
        Err(e) => Err(e).with_context(|| format!("reading the CLI config {}", file.display())),
    }
}

fn save(file: &Path, config: &CliConfig) -> anyhow::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = toml::to_string(config)?;
    let tmp = file.with_extension("toml.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("replacing {}", file.display()))?;
    Ok(())
}

/// The context a command uses: `--context NAME`, else the file's current one, else none.
pub fn selected(name: Option<&str>) -> anyhow::Result<Option<(String, ApiContext)>> {
    let Some(file) = path() else { return Ok(None) };
    let config = load(&file)?;
    let Some(name) = name.map(str::to_string).or(config.current.clone()) else { return Ok(None) };
    let context = config
        .contexts
        .get(&name)
        .cloned()
        .ok_or_else(|| anyhow!("no context {name:?} in {} (`hostfw context list` shows them)", file.display()))?;
    Ok(Some((name, context)))
}

/// `hostfw context ...`.
pub fn context_cmd(cmd: &ContextCmd) -> anyhow::Result<()> {
    let file = path().ok_or_else(|| anyhow!("no CLI config path: set HOSTFW_CLI_CONFIG or HOME"))?;
    let mut config = load(&file)?;
    match cmd {
        ContextCmd::Set { name, api, token_file, ca_file, client_cert } => {
            if !(api.starts_with("https://") || api.starts_with("http://")) {
                bail!("--api {api:?} is not an http:// or https:// URL; nothing was changed");
            }
            let absolute = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
            let context = ApiContext {
                api: api.trim_end_matches('/').to_string(),
                token_file: token_file.as_ref().map(absolute),
                ca_file: ca_file.as_ref().map(absolute),
                client_cert: client_cert.as_ref().map(absolute),
            };
            config.contexts.insert(name.clone(), context);
            if config.current.is_none() {
                config.current = Some(name.clone());
            }
            save(&file, &config)?;
            crate::outln!("context {name} set in {}", file.display());
        }
        ContextCmd::Use { name } => {
            if !config.contexts.contains_key(name) {
                bail!("no context {name:?} in {}; add it with `hostfw context set {name} --api URL`", file.display());
            }
            config.current = Some(name.clone());
            save(&file, &config)?;
            crate::outln!("using context {name}");
        }
        ContextCmd::List => {
            let rows = config
                .contexts
                .iter()
                .map(|(name, c)| {
                    let mark = if config.current.as_deref() == Some(name) { "*" } else { "" };
                    let token = c.token_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
                    vec![mark.to_string(), name.clone(), c.api.clone(), token]
                })
                .collect::<Vec<_>>();
            crate::out!("{}", crate::output::table(&["CURRENT", "NAME", "API", "TOKEN FILE"], &rows));
        }
    }
    Ok(())
}
