//! PM jobs (SOL003 clauses 6.4.2 to 6.4.4): one file per operation, and their reports.

pub mod create;
pub mod delete;
pub mod list;
pub mod modify;
pub mod report;
pub mod show;

use serde_json::Value;
use solgate_core::pm;
use solgate_db::AnyConnection;
use solgate_db::repo::vnfpm::{self, PmRecord};
use solgate_sol013::SelectorSpec;

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::present;

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("PmJob {id} not found."))
}

/// The job, if the request may see it (404 otherwise, as for a missing one).
pub fn find(conn: &mut AnyConnection, tenant: &Tenant, id: &str) -> ApiResult<PmRecord> {
    vnfpm::find_job(conn, id)?.filter(|record| tenant.sees(&record.project)).ok_or_else(|| not_found(id))
}

/// The PmJob a client sees: rendered for the negotiated version, `reports` and `_links`
/// absolute.
pub fn rendered(state: &AppState, negotiated: &Negotiated, record: &PmRecord) -> Value {
    let document = pm::job_document(&state.links, record);
    present::render(negotiated, "PmJob", &document, pm::job_links(&state.links, record))
}

/// Attribute selectors of PM jobs (SOL003 clause 6.4.2.3.2): `reports` is left out unless
/// asked for; the attributes of cardinality 1 are always there.
pub const SELECTORS: SelectorSpec<'static> = SelectorSpec {
    default_excluded: &["reports"],
    mandatory: &["id", "objectType", "objectInstanceIds", "criteria", "callbackUri", "_links"],
};
