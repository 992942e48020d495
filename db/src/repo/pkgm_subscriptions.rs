//! VNF package management subscriptions (SOL005 v2.6.1 clause 9.4.8, one major: v1). The
//! same bookkeeping as the LCM subscription tables, without verbosity; `authentication`
//! keeps the callback's credentials (sealed) apart from the document responses show.

pub use crate::repo::plain_subscriptions::PlainSubscriptionRecord as PkgmSubscriptionRecord;
use crate::schema::pkgm_subscriptions as subscriptions;

/// The API name notification rows of these subscriptions carry (`notifications.api`).
pub const API: &str = "vnfpkgm";

include!("plain_subscription_table.rs");
