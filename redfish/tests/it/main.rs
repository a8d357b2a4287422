//! The integration tests of `hostfw-redfish`, one test binary: one module per concern
//! (each module's doc says what it covers).

mod common;

mod ac_cycle;
mod body_limit;
mod crawl_repeat;
mod edge_cases;
mod etags;
mod explore_auth;
mod foreign_links;
mod inventory_concurrency;
mod inventory_expand;
mod platform;
mod refusals;
mod reset_tasks;
mod reset_types;
mod resets;
mod running_tasks_captured;
mod simple_update_info;
mod systems;
mod task_link;
mod tls;
mod upload_matrix;
