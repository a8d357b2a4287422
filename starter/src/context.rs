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
    /// Who the audit trail records for mutations: the API's authenticated principal, or, for a
    /// command run on the site against the site database, `cli:<OS account>` ([`os_account`]).
    pub actor: String,
}

impl Context {
    pub async fn open(config: &Path, format: Format) -> anyhow::Result<Context> {
        let site = SiteConfig::load(config)?;
        let store = Store::open_site(&site)
            .await
            .with_context(|| format!("opening the site database {}", site.site.database_url))?;
        Ok(Context { site, store, format, actor: format!("cli:{}", os_account()) })
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

/// The OS account this process runs as, looked up from its real uid (`getpwuid_r`), never from the
/// environment (`$USER` is whatever the caller sets); `uid <n>` when the account has no name.
pub fn os_account() -> String {
    // SAFETY: getuid cannot fail; getpwuid_r writes only into the buffers given, and the name is
    // read only when it reports success with a non-null result pointing into `buf`.
    let uid = unsafe { libc::getuid() };
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) }.to_string_lossy().into_owned();
        if !name.is_empty() {
            return name;
        }
    }
    format!("uid {uid}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_os_account_comes_from_the_uid_not_from_user() {
        let before = super::os_account();
        // Whatever $USER says (it is not read); the account of uid 0 on this machine is root.
        assert!(!before.is_empty());
        if unsafe { libc::getuid() } == 0 {
            assert_eq!(before, "root");
        }
    }
}
