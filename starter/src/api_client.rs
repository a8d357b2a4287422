//! Talking to the hostfw API: which endpoint and token a command uses (`-a`, `--token-file`,
//! `HOSTFW_TOKEN`, the CLI config's context), and one request with the answer or the API's error
//! sentence.
//!
//! Owns the HTTP client (rustls; `--ca-file` adds trusted roots) and reading the token. It never
//! prints or logs a token, and must not decide what a command sends (that is `remote`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::cli::{Cli, Format};

/// The API's error answer: its sentence, and what the command printed before it stopped (a
/// preview, doctor's findings) and the question to confirm, when the answer carries them.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{sentence} [HTTP {status}]")]
pub struct ApiFailure {
    pub status: u16,
    pub sentence: String,
    pub output: Option<String>,
    pub confirm: Option<String>,
}

/// An API endpoint with its token.
pub struct Remote {
    base: String,
    /// The bearer token; `None` when a client certificate identifies the caller.
    token: Option<String>,
    http: reqwest::Client,
    pub format: Format,
}

/// The API a command line names (`-a`, or a context), if any.
pub fn selected(cli: &Cli) -> anyhow::Result<Option<Remote>> {
    let context = crate::cli_contexts::selected(cli.context.as_deref())?;
    let (base, context_token, context_ca, context_cert) = match (&cli.api, context) {
        (Some(api), _) => (api.clone(), None, None, None),
        (None, Some((_, c))) => (c.api, c.token_file, c.ca_file, c.client_cert),
        (None, None) => return Ok(None),
    };
    let client_cert = cli.client_cert.clone().or(context_cert);
    let token = match token(cli.token_file.as_deref(), context_token.as_deref()) {
        Ok(token) => Some(token),
        // With a client certificate (mTLS) the API knows the caller without a token.
        Err(_) if client_cert.is_some() && cli.token_file.is_none() => None,
        Err(e) => return Err(e),
    };
    let ca = cli.ca_file.clone().or(context_ca);
    Ok(Some(Remote::new(&base, token, ca.as_deref(), client_cert.as_deref(), cli.format)?))
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
    pub fn new(
        base: &str,
        token: Option<String>,
        ca_file: Option<&Path>,
        client_cert: Option<&Path>,
        format: Format,
    ) -> anyhow::Result<Remote> {
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
        if let Some(file) = client_cert {
            let pem =
                std::fs::read(file).with_context(|| format!("reading the client certificate {}", file.display()))?;
            let identity = reqwest::Identity::from_pem(&pem).with_context(|| {
                format!("the client certificate file {} needs a PEM certificate and its private key", file.display())
            })?;
            builder = builder.identity(identity);
        }
        Ok(Remote { base: base.to_string(), token, http: builder.build()?, format })
    }

    /// Send one request; the answer's body on success (JSON, or the table for `Format::Table`
    /// when `as_text`), else the API's error sentence.
    pub async fn send(&self, method: Method, path: &str, body: Option<Value>, as_text: bool) -> anyhow::Result<String> {
        let accept = if as_text && self.format == Format::Table { "text/plain" } else { "application/json" };
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method.clone(), &url).header("Accept", accept);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.with_context(|| format!("{method} {url}: the API did not answer"))?;
        let status = response.status();
        check_schema_version(response.headers().get("hostfw-schema-version"), &url)?;
        let text = response.text().await.with_context(|| format!("{method} {url}: reading the answer"))?;
        if status.is_success() {
            return Ok(text);
        }
        let body = serde_json::from_str::<Value>(&text).ok();
        let field = |name: &str| body.as_ref().and_then(|v| v[name].as_str().map(str::to_string));
        let hint = match status {
            StatusCode::UNAUTHORIZED => " (check the token: `hostfw whoami`)",
            StatusCode::FORBIDDEN => " (ask an admin for a token with that role)",
            _ => "",
        };
        Err(ApiFailure {
            status: status.as_u16(),
            sentence: format!("{}{hint}", field("error").unwrap_or(text.clone())),
            output: field("output"),
            confirm: field("confirm"),
        }
        .into())
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }
}

/// Refuse an answer written in another version of the JSON vocabulary than this CLI reads
/// (docs/cli-json.md "Schema version"): its fields could mean something else. An answer without
/// the header (a proxy's own error page) is read as it is.
fn check_schema_version(header: Option<&reqwest::header::HeaderValue>, url: &str) -> anyhow::Result<()> {
    let Some(value) = header else { return Ok(()) };
    let theirs = value.to_str().ok().and_then(|v| v.trim().parse::<u32>().ok());
    let ours = crate::json_contract::SCHEMA_VERSION;
    match theirs {
        Some(v) if v == ours => Ok(()),
        Some(v) => bail!(
            "{url}: the API answers in JSON schema version {v}, this hostfw CLI reads version {ours}: use a hostfw \
             CLI of the API's release"
        ),
        None => bail!("{url}: the API sent an unreadable Hostfw-Schema-Version header {value:?}"),
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

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::check_schema_version;

    #[test]
    fn an_answer_in_another_schema_version_is_refused_naming_both() {
        let ours = crate::json_contract::SCHEMA_VERSION.to_string();
        assert!(check_schema_version(Some(&HeaderValue::from_str(&ours).unwrap()), "u").is_ok());
        assert!(check_schema_version(None, "u").is_ok(), "a proxy's page has no header");
        let err = check_schema_version(Some(&HeaderValue::from_static("99")), "http://api/v1/plan").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("version 99") && text.contains(&format!("version {ours}")), "{text}");
        assert!(check_schema_version(Some(&HeaderValue::from_static("one")), "u").is_err());
    }
}
