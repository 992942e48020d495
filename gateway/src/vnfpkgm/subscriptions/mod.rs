//! PkgmSubscriptions (SOL005 v2.6.1 clauses 9.4.8 and 9.4.9): one file per operation, built
//! as the LCM subscriptions are ([`crate::common::callback`] holds what they share):
//!
//! - a duplicate (same callback URI and filter, from the same project) is answered 303 See
//!   Other with the existing subscription's `Location` (clause 9.4.8.3.1 allows it);
//! - the callback is tested (GET, 204 expected) before the subscription exists, unless
//!   `[notifications] test_callback_uri = false`; any failure is a 422;
//! - `authentication` is sealed, kept apart from the document and never shown;
//! - a subscription belongs to its creator's project and hears of that project's packages
//!   (an administrator's hears of every project's).

pub mod create;
pub mod delete;
pub mod list;
pub mod show;

use serde_json::{Value, json};
use solgate_core::links::href;
use solgate_db::repo::pkgm_subscriptions::PkgmSubscriptionRecord;

use crate::error::ApiError;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::present;

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("PkgmSubscription {id} not found."))
}

/// The PkgmSubscription a client sees: rendered for the negotiated version, `_links` absolute.
pub fn rendered(state: &AppState, negotiated: &Negotiated, record: &PkgmSubscriptionRecord) -> Value {
    let links = json!({ "self": href(&state.links.pkgm_subscription(&record.id)) });
    present::render(negotiated, "PkgmSubscription", &record.body, links)
}
