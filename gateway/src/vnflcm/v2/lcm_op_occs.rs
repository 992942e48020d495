//! VnfLcmOpOccsController (v2).

pub mod list;
pub mod show;
pub mod tasks;
