//! VNF LCM in the conductor: claiming operation occurrences and running them through
//! the domain's state machine ([`solgate_core`]) and the infra drivers.

pub mod engine;
pub mod grant;
mod granting;
mod job;
pub mod scripts;
pub(crate) mod views;

use solgate_db::repo::lcm::OpOccRecord;
use solgate_model::LcmOperation;

/// The operation of an occurrence (`None`: a name no row has, which the API never stores).
pub(crate) fn operation_of(op: &OpOccRecord) -> Option<LcmOperation> {
    op.operation()
}
