//! The API's handlers, one file per resource; each is mounted by the route table (`routes`).

pub mod budget;
pub mod openapi_doc;
pub mod reads;
pub mod tenant;
pub mod tokens;
pub mod verb;
pub mod whoami;
