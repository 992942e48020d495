//! Subscriptions of the APIs whose subscription has no verbosity: VNF package management
//! (`pkgm_subscriptions`) and VNF fault management (`fm_subscriptions_v1`). One record type;
//! each table's module includes the same functions (`plain_subscription_table.rs`), as the LCM
//! tables of each major share theirs.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct PlainSubscriptionRecord {
    pub id: String,
    pub callback_uri: String,
    /// The subscription document (without `_links`).
    pub body: Value,
    /// The callback's credentials, sealed; never part of the document.
    pub authentication: Option<Value>,
    pub dedup_key: String,
    pub created_at: String,
    /// The project whose resources it hears of; empty: every project's.
    pub project: String,
}
