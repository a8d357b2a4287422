//! The hostfw API: HTTP/JSON under `/v1` (OpenAPI 3.1 at `/v1/openapi.json`), the one way
//! operators, tenants and other systems change a site. Every caller presents a bearer token
//! (`hostfw token create`, the first by `hostfw admin bootstrap`); every route declares the role
//! it needs in one table (`routes`); every change is audited under the caller's name.
//!
//! `hostfw-worker` serves it in-process (`[api] enabled`); the `hostfw-api` binary serves it
//! alone, stateless (several replicas behind a load balancer share the site database and
//! Temporal). Commands run here through the CLI's own code (`hostfw-starter`), so the CLI and the
//! API print the same documents.

pub mod access;
pub mod auth;
pub mod change_answer;
pub mod error;
pub mod handlers;
pub mod openapi;
pub mod openapi_times;
pub mod principal;
pub mod routes;
pub mod server;
pub mod state;
pub mod tls;

pub use server::{ApiServer, ApiStartError};
