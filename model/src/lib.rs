//! solgate's domain types that more than one crate needs: the LCM operations and their
//! facts ([`operation`]), the Grant interface's documents ([`grant`]), and the infra driver interface with its plans and inventories
//! ([`infra`]). Owned here, not by drivers, so the domain (core) does not depend on the
//! infrastructure.

pub mod grant;
pub mod infra;
pub mod operation;

pub use operation::LcmOperation;
