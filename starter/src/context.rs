//! What every command needs: the site config, the site database, and (on demand) a Temporal
//! client. Bad config is reported with the file and key before anything is touched.

use std::path::Path;

use anyhow::Context as _;
use hostfw_model::SiteConfig;
use hostfw_store::Store;
use temporalio_client::Client;

use crate::cli::Format;

pub struct Context {
    pub site: SiteConfig,
    pub store: Store,
    pub format: Format,
    /// Who the audit trail records for mutations.
    pub actor: String,
}

impl Context {
    pub async fn open(config: &Path, format: Format) -> anyhow::Result<Context> {
        let site = SiteConfig::load(config)?;
        let store = Store::open_site(&site)
            .await
            .with_context(|| format!("opening the site database {}", site.site.database_url))?;
        let actor = std::env::var("USER").unwrap_or_else(|_| "unknown".to_string());
        Ok(Context { site, store, format, actor: format!("cli:{actor}") })
    }

    /// The context of one API request: the serving process's site config and database, the
    /// format the caller asked for, and the authenticated principal as the audit actor.
    pub fn for_api(site: SiteConfig, store: Store, format: Format, actor: String) -> Context {
        Context { site, store, format, actor }
    }

    /// A Temporal client for the site's server.
    pub async fn temporal(&self) -> anyhow::Result<Client> {
        let endpoint = hostfw_connect::Endpoint::configured(&self.site.temporal.address, &self.site.temporal.namespace);
        Ok(hostfw_connect::connect(endpoint, "hostfw-cli").await?)
    }

    /// Record a mutation in the audit trail.
    pub async fn audit(&self, action: &str, target: &str, detail: &str) -> anyhow::Result<()> {
        self.store.audit_append(&self.actor, action, target, detail).await.context("writing the audit trail")?;
        Ok(())
    }
}
