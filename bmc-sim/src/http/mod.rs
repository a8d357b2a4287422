//! The HTTP side every simulated BMC shares: the route table and request-wide layers
//! (`router`), DSP0266 protocol rules (`protocol`), who may call (`auth`, `sessions`), the
//! shapes of Redfish answers (`error` for refusals, `json` for successes, `reject` for
//! refusing a request whose body is still unread) and the OData documents (`odata`). It must not
//! decide what a resource holds or what an action does: those live in `resources`, `update`,
//! `tasks`, `power` and `profile`, which the router only wires.

pub mod auth;
pub mod error;
pub mod json;
pub mod odata;
pub mod protocol;
pub mod reject;
pub mod router;
pub mod sessions;
