//! VNF FM subscriptions (SOL003 clause 7.4.4, `/vnffm/v1`; the one major: `fm_subscriptions_v1`).
//! The same bookkeeping as the package subscriptions; `authentication` keeps the callback's
//! credentials (sealed) apart from the document responses show.

use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::list::ListSpec;
use crate::repo::plain_subscriptions as plain;
pub use crate::repo::plain_subscriptions::COLUMNS;
pub use crate::repo::plain_subscriptions::PlainSubscriptionRecord as FmSubscriptionRecord;

/// The API name notification rows of these subscriptions carry (`notifications.api`).
pub const API: &str = "vnffm";

// The shared implementation on this API's table.
type Table = crate::schema::fm_subscriptions_v1::table;

pub fn insert(conn: &mut AnyConnection, record: &FmSubscriptionRecord) -> DbResult<()> {
    plain::insert::<Table>(conn, record)
}

pub fn find(conn: &mut AnyConnection, id: &str) -> DbResult<Option<FmSubscriptionRecord>> {
    plain::find::<Table>(conn, id)
}

pub fn find_by_dedup_key(conn: &mut AnyConnection, key: &str) -> DbResult<Option<FmSubscriptionRecord>> {
    plain::find_by_dedup_key::<Table>(conn, key)
}

pub fn delete(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    plain::delete::<Table>(conn, id)
}

/// Rewrites a subscription's credentials (re-sealed with a new key); whether it exists.
pub fn update_authentication(conn: &mut AnyConnection, id: &str, authentication: Option<&Value>) -> DbResult<bool> {
    plain::update_authentication::<Table>(conn, id, authentication)
}

pub fn list(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<FmSubscriptionRecord>> {
    plain::list::<Table>(conn, backend, spec)
}

/// Every subscription, oldest id first.
pub fn all(conn: &mut AnyConnection) -> DbResult<Vec<FmSubscriptionRecord>> {
    plain::all::<Table>(conn)
}
