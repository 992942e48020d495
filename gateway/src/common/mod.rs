//! Helpers every API's controllers use: list execution, credential scrubbing, the tenant,
//! subscription callbacks.

pub mod cache;
pub mod callback;
pub mod etag;
pub mod list;
pub mod plain_subscriptions;
pub mod scrub;
pub mod tenant;

pub use tenant::Tenant;
