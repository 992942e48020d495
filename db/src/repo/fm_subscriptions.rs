//! VNF FM subscriptions (SOL003 clause 7.4.4, `/vnffm/v1`; the one major: `fm_subscriptions_v1`).
//! The same bookkeeping as the package subscriptions; `authentication` keeps the callback's
//! credentials (sealed) apart from the document responses show.

pub use crate::repo::plain_subscriptions::PlainSubscriptionRecord as FmSubscriptionRecord;
use crate::schema::fm_subscriptions_v1 as subscriptions;

/// The API name notification rows of these subscriptions carry (`notifications.api`).
pub const API: &str = "vnffm";

include!("plain_subscription_table.rs");
