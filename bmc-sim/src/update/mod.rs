//! Firmware updates as a BMC takes them: the UpdateService and what it advertises (`service`),
//! the upload routes (`push`: multipart and HttpPushUri, `simple`: SimpleUpdate), the
//! parameters they share (`params`), one update at a time (`slot`), the simulated image format
//! (`image`) and its SimpleUpdate download (`image_fetch`), the in-band flash tool on the host
//! (`host_flash`), and which event activates a staged version (`activation`). Running the
//! update task is `tasks`; this folder must not progress or answer tasks itself.

pub mod activation;
pub mod host_flash;
pub mod image;
pub mod image_fetch;
pub mod params;
pub mod push;
pub mod service;
pub mod simple;
pub mod slot;
