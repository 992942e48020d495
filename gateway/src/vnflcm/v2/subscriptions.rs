//! SubscriptionsController (v2). The handlers serve whichever major their request
//! negotiated, so v1 can route to them too.

pub mod create;
pub mod delete;
pub mod list;
pub mod show;
