//! Update tasks: the Task resource (`task`), running one (`runner`: progress, apply or stage,
//! free the update slot), the vendor styles of async answers and task monitors (`style`), and
//! the TaskService routes (`routes`). It must not accept uploads (that is `update`).

pub mod routes;
pub mod runner;
pub mod style;
pub mod task;
