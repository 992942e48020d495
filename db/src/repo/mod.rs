//! Repositories: one module per table (or per family of per-major tables). Functions
//! take a connection, so callers compose them inside one transaction
//! ([`crate::write_transaction`]).

pub mod alarms;
mod cached;
pub mod conductors;
mod document;
pub mod fm_subscriptions;
pub mod lcm;
pub mod list;
pub mod notifications;
pub mod outbox;
pub mod pkgm_subscriptions;
pub mod plain_subscriptions;
mod table;
pub mod vims;
pub mod vnf_packages;
pub mod vnfpm;

use chrono::{DateTime, Utc};

/// Now, as stored: RFC 3339 UTC with fixed microsecond precision, so that text order is
/// time order on both backends.
pub fn now_text() -> String {
    to_text(Utc::now())
}

pub fn to_text(time: DateTime<Utc>) -> String {
    solgate_sol013::format_db_datetime(&time)
}

pub fn parse_text(text: &str) -> Option<DateTime<Utc>> {
    solgate_sol013::parse_datetime(text)
}
