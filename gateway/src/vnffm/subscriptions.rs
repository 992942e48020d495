//! FmSubscriptions (SOL003 clauses 7.4.4 and 7.4.5): one file per operation, built as the
//! package subscriptions are ([`crate::common::callback`] holds what they share):
//!
//! - a duplicate (same callback URI and filter, from the same project) is answered 303 See
//!   Other with the existing subscription's `Location` (clause 7.4.4.3.1 allows it; Tacker
//!   creates duplicates);
//! - the callback is tested (GET, 204 expected) before the subscription exists, unless
//!   `[notifications] test_callback_uri = false`; any failure is a 422;
//! - `authentication` is sealed, kept apart from the document and never shown;
//! - a subscription belongs to its creator's project and hears of that project's alarms (an
//!   administrator's hears of every project's).

pub mod create;
pub mod delete;
pub mod list;
pub mod show;

use serde_json::{Value, json};
use solgate_core::links::href;
use solgate_db::repo::fm_subscriptions::FmSubscriptionRecord;

use crate::error::ApiError;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::present;

/// Tacker's text.
pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("FmSubscription {id} not found."))
}

/// The FmSubscription a client sees: rendered for the negotiated version, `_links` absolute.
pub fn rendered(state: &AppState, negotiated: &Negotiated, record: &FmSubscriptionRecord) -> Value {
    let links = json!({ "self": href(&state.links.fm_subscription(&record.id)) });
    present::render(negotiated, "FmSubscription", &record.body, links)
}
