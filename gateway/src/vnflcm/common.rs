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
/// failing JSON pointers and rules). A member that only a later minor of the major defines
/// is refused too, naming it: accepting it would store what the client's version cannot
/// show, and the client would believe it was honoured.
pub fn validate(negotiated: &Negotiated, schema: &str, body: &serde_json::Value) -> Result<(), ApiError> {
    let dictionary = &negotiated.entry.dictionary;
    dictionary.validate(schema, body).map_err(|failures| ApiError::bad_request(failures.to_string()))?;
    if std::sync::Arc::ptr_eq(dictionary, &negotiated.stored_shape) {
        return Ok(());
    }
    let later = dictionary.members_only_in(&negotiated.stored_shape, schema, body);
    if later.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "{} {} not defined in version {}; a later version of the API defines {}.",
        later.iter().map(|pointer| format!("'{pointer}'")).collect::<Vec<_>>().join(", "),
        if later.len() == 1 { "is" } else { "are" },
        negotiated.version(),
        if later.len() == 1 { "it" } else { "them" },
    )))
}
