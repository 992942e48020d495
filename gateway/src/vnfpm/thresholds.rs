//! Thresholds (SOL003 clauses 6.4.5 and 6.4.6): one file per operation.

pub mod create;
pub mod delete;
pub mod list;
pub mod modify;
pub mod show;

use serde_json::Value;
use solgate_core::pm;
use solgate_db::AnyConnection;
use solgate_db::repo::vnfpm::{self, PmRecord};

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::present;

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("Threshold {id} not found."))
}

/// The threshold, if the request may see it (404 otherwise, as for a missing one).
pub fn find(conn: &mut AnyConnection, tenant: &Tenant, id: &str) -> ApiResult<PmRecord> {
    vnfpm::find_threshold(conn, id)?.filter(|record| tenant.sees(&record.project)).ok_or_else(|| not_found(id))
}

/// The Threshold a client sees: rendered for the negotiated version, `_links` absolute.
pub fn rendered(state: &AppState, negotiated: &Negotiated, record: &PmRecord) -> Value {
    let document = solgate_core::without_private(record.body.clone());
    present::render(negotiated, "Threshold", &document, pm::threshold_links(&state.links, record))
}
