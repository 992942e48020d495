//! VnfInstancesController (v2).

pub mod create;
pub mod delete;
pub mod list;
pub mod modify;
pub mod select_depl_mods;
pub mod show;
pub mod tasks;
