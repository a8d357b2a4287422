//! The API's handlers, one file per resource; each is mounted by the route table (`routes`).

pub mod abort;
pub mod brakes;
pub mod budget;
pub mod catalog;
pub mod explorer;
pub mod machine_remove;
pub mod machines;
pub mod openapi_doc;
pub mod reads;
pub mod requests;
pub mod site_ops;
pub mod tenant;
pub mod tokens;
pub mod verb;
pub mod watch;
pub mod whoami;
