//! What the v1 and v2 controllers share: presentation (credential scrubbing, `_links`,
//! rendering for the negotiated minor, selectors), list execution, and task acceptance.

pub mod instances;
pub mod nfvo_packages;
pub mod ops;
pub mod present;
pub mod subscriptions;
pub mod tasks;

use solgate_db::DbError;
use solgate_db::repo::lcm::LcmMajor;

use crate::error::ApiError;
use crate::sol013::Negotiated;

/// The tables of the negotiated major.
pub fn major_of(negotiated: &Negotiated) -> Result<LcmMajor, ApiError> {
    LcmMajor::from_major(negotiated.major)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("no LCM tables for major {}", negotiated.major)))
}

/// Database errors are ours, not the client's; the log names the caller's location.
#[track_caller]
pub fn db_error(error: DbError) -> ApiError {
    ApiError::internal(error)
}

/// Validates a request body against the negotiated version's schema (400 naming the
/// failing JSON pointers and rules).
pub fn validate(negotiated: &Negotiated, schema: &str, body: &serde_json::Value) -> Result<(), ApiError> {
    negotiated.entry.dictionary.validate(schema, body).map_err(|failures| ApiError::bad_request(failures.to_string()))
}
