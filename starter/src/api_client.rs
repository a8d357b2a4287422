//! Talking to the hostfw API: which endpoint and token a command uses (`-a`, `--token-file`,
//! `HOSTFW_TOKEN`, the CLI config's context), and one request with the answer or the API's error
//! sentence.
//!
//! Owns the HTTP client (rustls; `--ca-file` adds trusted roots) and reading the token. It never
//! prints or logs a token, and must not decide what a command sends (that is `remote`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::cli::{Cli, Format};

/// An API endpoint with its token.
pub struct Remote {
    base: String,
    token: String,
    http: reqwest::Client,
    pub format: Format,
}

/// The API a command line names (`-a`, or a context), if any.
pub fn selected(cli: &Cli) -> anyhow::Result<Option<Remote>> {
    let context = crate::cli_contexts::selected(cli.context.as_deref())?;
    let (base, context_token, context_ca) = match (&cli.api, context) {
        (Some(api), _) => (api.clone(), None, None),
        (None, Some((_, c))) => (c.api, c.token_file, c.ca_file),
        (None, None) => return Ok(None),
    };
    let token = token(cli.token_file.as_deref(), context_token.as_deref())?;
    let ca = cli.ca_file.clone().or(context_ca);
    Ok(Some(Remote::new(&base, token, ca.as_deref(), cli.format)?))
}

fn token(flag: Option<&Path>, context: Option<&Path>) -> anyhow::Result<String> {
    let from_file = |file: &Path| -> anyhow::Result<String> {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading the token file {}", file.display()))?;
        Ok(text.trim().to_string())
    };
    let token = match (flag, std::env::var("HOSTFW_TOKEN").ok().filter(|t| !t.trim().is_empty()), context) {
        (Some(file), _, _) => from_file(file)?,
        (None, Some(token), _) => token.trim().to_string(),
        (None, None, Some(file)) => from_file(file)?,
        (None, None, None) => bail!(
            "no API token: pass --token-file FILE, set HOSTFW_TOKEN, or give the context a token_file \
             (`hostfw context set NAME --api URL --token-file FILE`)"
        ),
    };
    if token.is_empty() {
        bail!("the API token is empty");
    }
    Ok(token)
}

impl Remote {
    pub fn new(base: &str, token: String, ca_file: Option<&Path>, format: Format) -> anyhow::Result<Remote> {
        let base = base.trim_end_matches('/');
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            bail!("API URL {base:?} is not an http:// or https:// URL");
        }
        let mut builder = reqwest::Client::builder().use_rustls_tls().connect_timeout(Duration::from_secs(10));
        if let Some(ca) = ca_file {
            let pem = std::fs::read(ca).with_context(|| format!("reading the CA file {}", ca.display()))?;
            for cert in reqwest::Certificate::from_pem_bundle(&pem)
                .with_context(|| format!("the CA file {} holds no PEM certificate", ca.display()))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        Ok(Remote { base: base.to_string(), token, http: builder.build()?, format })
    }

    /// Send one request; the answer's body on success (JSON, or the table for `Format::Table`
    /// when `as_text`), else the API's error sentence.
    pub async fn send(&self, method: Method, path: &str, body: Option<Value>, as_text: bool) -> anyhow::Result<String> {
        let accept = if as_text && self.format == Format::Table { "text/plain" } else { "application/json" };
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method.clone(), &url).bearer_auth(&self.token).header("Accept", accept);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.with_context(|| format!("{method} {url}: the API did not answer"))?;
        let status = response.status();
        let text = response.text().await.with_context(|| format!("{method} {url}: reading the answer"))?;
        if status.is_success() {
            return Ok(text);
        }
        let sentence = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or(text);
        let hint = match status {
            StatusCode::UNAUTHORIZED => " (check the token: `hostfw whoami`)",
            StatusCode::FORBIDDEN => " (ask an admin for a token with that role)",
            _ => "",
        };
        Err(anyhow!("{sentence}{hint} [HTTP {}]", status.as_u16()))
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }
}

/// Write a new token file (mode 0600); never overwrites.
pub fn write_token_file(file: &PathBuf, token: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .with_context(|| format!("creating the token file {} (it must not exist yet)", file.display()))?;
    f.write_all(format!("{token}\n").as_bytes())?;
    Ok(())
}
