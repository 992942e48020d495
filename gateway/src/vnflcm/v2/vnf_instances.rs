//! VnfInstancesController (v2).

pub mod create;
pub mod delete;
pub mod list;
pub mod modify;
pub mod show;
pub mod tasks;
