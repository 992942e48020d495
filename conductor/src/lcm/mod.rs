//! VNF LCM in the conductor: one driver per major API version (`VnflcmDriverV1`,
//! `VnflcmDriverV2`), separate types that do not depend on each other. What they share —
//! claiming work, the SOL003 state machine, plans, instance info, notifications — is in
//! [`engine`] and [`crate::common`], which both call with their own shape adapter.

pub mod engine;
pub mod v1;
pub mod v2;

use serde_json::Value;
use solgate_db::repo::lcm::LcmMajor;
use solgate_drivers::VimConnection;

pub use v1::VnflcmDriverV1;
pub use v2::VnflcmDriverV2;

/// The parts of LCM whose shapes differ between majors.
pub trait LcmShapes: Send + Sync {
    fn major(&self) -> LcmMajor;
    /// The VIM connections in a `vimConnectionInfo` value (v1: an array of objects with
    /// `id`; v2: a map keyed by id).
    fn vim_connections(&self, vim_connection_info: &Value) -> Vec<VimConnection>;
    /// Merges a request's `vimConnectionInfo` into an instance document's.
    fn merge_vim_connections(&self, instance: &mut Value, requested: &Value);
}
