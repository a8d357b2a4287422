//! The activities of the two site workflows: the scheduler pass (`manager_pass`, reading the site
//! through `site_view_cache`, which keeps `site_view` up to date across passes, and starting hosts
//! through `site_link`), the repair of what the site
//! database and Temporal disagree on (`repair`, also behind `hostfw doctor`; `orphan_check` spaces the
//! scheduler's own look for orphaned requests), the Site Explorer crawl (`crawl`), the webhook
//! notifier's delivery round (`notifier`). The worker binds
//! them in `registry`. Beside them, the compliance view's read (`compliance_read`), which the CLI
//! and the worker's metrics share.

pub mod compliance_read;
pub mod crawl;
pub mod manager_pass;
pub mod notifier;
mod orphan_check;
pub(crate) mod registry;
pub mod repair;
pub mod site_link;
pub mod site_view;
pub mod site_view_cache;

pub use orphan_check::OrphanCheck;
