//! Binds the site workflows' activities (scheduler pass, Site Explorer crawl, notifier round) to their contract
//! names in `hostfw-workflows`. Thin wrappers only.

use std::sync::Arc;

use hostfw_workflows::site_defs;
use hostfw_workflows::{
    CrawlRequest, CrawlSummary, NotifierRoundRequest, NotifierRoundSummary, PassRequest, PassSummary,
};
use temporalio_common::ActivityError;
use temporalio_macros::activities;
use temporalio_sdk::activities::ActivityContext;

use crate::heartbeat::with_heartbeat;
use crate::{crawl, manager_pass, notifier, Deps};

/// The implementation of `hostfw_workflows::SiteActivities`, registered on the worker.
pub struct SiteActivitiesImpl {
    deps: Deps,
}

impl SiteActivitiesImpl {
    pub fn new(deps: Deps) -> Self {
        SiteActivitiesImpl { deps }
    }
}

#[activities]
impl SiteActivitiesImpl {
    #[activity(definition = site_defs::ManagerPass)]
    pub async fn manager_pass(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: PassRequest,
    ) -> Result<PassSummary, ActivityError> {
        crate::activity_log::logged(&ctx, with_heartbeat(&ctx, "scheduler pass", manager_pass::pass(&self.deps, input)))
            .await
    }

    #[activity(definition = site_defs::ExplorerCrawl)]
    pub async fn explorer_crawl(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: CrawlRequest,
    ) -> Result<CrawlSummary, ActivityError> {
        crate::activity_log::logged(&ctx, with_heartbeat(&ctx, "site explorer crawl", crawl::crawl(&self.deps, input)))
            .await
    }

    #[activity(definition = site_defs::NotifierRound)]
    pub async fn notifier_round(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: NotifierRoundRequest,
    ) -> Result<NotifierRoundSummary, ActivityError> {
        with_heartbeat(&ctx, "webhook notifier round", notifier::round(&self.deps, input)).await
    }
}
