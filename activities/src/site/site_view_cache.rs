//! `SiteViewCache`: the scheduler's view of the site held across reads, so a pass re-reads only
//! the machines and explored reports that changed since the last one.
//!
//! Owns the per-row memory (each machine's [`MachineFacts`], each report's [`ReportFacts`]) and
//! bringing it up to date: read the store's view revision, then the rows stamped after the one
//! held (an index range, `hostfw_store` `revisions`), forget the rows that are gone (when a table's
//! count differs from what is held, its keys are listed), and read every report again when the
//! catalog is another one (a report's firmware status depends on it). Requests and health reports
//! are read whole every time (a few rows: hosts in flight or in trouble). The view is built by
//! `site_view::assemble`, the one the full `site_view::read` uses, so both give the same
//! `SiteView`. It must not decide anything (that is `gates::plan`) nor write to the store.
//!
//! One cache serves one site database: clones share it; reads take turns.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use hostfw_model::{Catalog, SiteConfig};
use hostfw_store::{Store, StoreError};
use tokio::sync::Mutex;

use super::site_view::{assemble, read_records, MachineFacts, ReportFacts, SiteView};

/// What one read had to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Refresh {
    /// Nothing was held: the first read, or the one after a failed read. Everything was read.
    pub first: bool,
    /// The catalog is another one than last time: every report was read again.
    pub catalog_changed: bool,
    /// Machine rows read (written since the last read, or all).
    pub machines_read: usize,
    /// Machines forgotten (no longer stored).
    pub machines_gone: usize,
    /// Report rows read (written since the last read, or all).
    pub reports_read: usize,
    /// Reports forgotten (no longer stored).
    pub reports_gone: usize,
}

/// The view's rows as last read, the view revision they are read up to, and the catalog the
/// report facts were computed under.
struct Held {
    catalog: Arc<Catalog>,
    revision: i64,
    /// By machine id (byte order: the view's host order).
    machines: BTreeMap<String, MachineFacts>,
    /// By BMC address as stored.
    reports: HashMap<String, ReportFacts>,
}

/// The site view, kept up to date across reads. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct SiteViewCache {
    held: Arc<Mutex<Option<Held>>>,
}

impl SiteViewCache {
    pub fn new() -> SiteViewCache {
        SiteViewCache::default()
    }

    /// The site at `now_ms`, as `site_view::read` would read it, reading only the machines and
    /// reports written since the last read.
    pub async fn read(
        &self,
        store: &Store,
        catalog: &Arc<Catalog>,
        site: &SiteConfig,
        now_ms: i64,
    ) -> Result<(SiteView, Refresh), StoreError> {
        let mut guard = self.held.lock().await;
        let mut refresh = Refresh::default();
        // Read first: every row stamped up to it is visible to the reads below (`revisions`).
        let revision = store.view_revision().await?;
        // A failed read leaves nothing held: the next one starts over.
        let mut held = match guard.take() {
            Some(held) => held,
            None => {
                refresh.first = true;
                Held { catalog: catalog.clone(), revision: 0, machines: BTreeMap::new(), reports: HashMap::new() }
            }
        };
        // Holding the catalog keeps its allocation alive, so a new one never has its address.
        if !Arc::ptr_eq(&held.catalog, catalog) {
            refresh.catalog_changed = true;
            held.catalog = catalog.clone();
            held.reports.clear();
        }

        // Both tables at once: on a first read they are every row (two connections).
        let machines_since = (!refresh.first).then_some(held.revision);
        let reports_since = (!refresh.first && !refresh.catalog_changed).then_some(held.revision);
        let (machines, reports) =
            tokio::try_join!(store.machines_since(machines_since), store.reports_since(reports_since))?;
        for row in machines {
            refresh.machines_read += 1;
            held.machines.insert(row.key, MachineFacts::of(&row.row));
        }
        for row in reports {
            refresh.reports_read += 1;
            let facts = ReportFacts::of(&held.catalog, &row.row);
            held.reports.insert(row.key, facts);
        }
        held.revision = revision;

        // Deleted rows carry no stamp: a count that differs from what is held says to look.
        let (machines, reports) = store.view_row_counts().await?;
        if machines != held.machines.len() as u64 {
            let ids: HashSet<String> = store.machine_ids().await?.into_iter().collect();
            let before = held.machines.len();
            held.machines.retain(|id, _| ids.contains(id));
            refresh.machines_gone = before - held.machines.len();
        }
        if reports != held.reports.len() as u64 {
            let addresses: HashSet<String> = store.report_addresses().await?.into_iter().collect();
            let before = held.reports.len();
            held.reports.retain(|address, _| addresses.contains(address));
            refresh.reports_gone = before - held.reports.len();
        }

        let requests = store.request_list().await?;
        let health = store.health_report_list().await?;
        let records = read_records(store).await?;
        let held = guard.insert(held);
        let view = assemble(
            held.machines.iter().map(|(id, m)| (id.as_str(), m)),
            held.reports.iter().map(|(address, r)| (address.as_str(), r)),
            requests,
            &health,
            records,
            site,
            now_ms,
        );
        Ok((view, refresh))
    }
}
