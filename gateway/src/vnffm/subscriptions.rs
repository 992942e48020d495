//! FmSubscriptions (SOL003 clauses 7.4.4 and 7.4.5): one file per operation, each the shared implementation of
//! [`crate::common::plain_subscriptions`] (clause 7.4.4.3.1 allows the 303; Tacker creates duplicates) with this API's [`TABLE`].

pub mod create;
pub mod delete;
pub mod list;
pub mod show;

use solgate_db::repo::fm_subscriptions;

use crate::common::plain_subscriptions::Table;

pub static TABLE: Table = Table {
    resource: "FmSubscription",
    request: "FmSubscriptionRequest",
    what: "VNF FM subscription",
    link: |links, id| links.fm_subscription(id),
    columns: fm_subscriptions::COLUMNS,
    insert: fm_subscriptions::insert,
    find: fm_subscriptions::find,
    find_by_dedup_key: fm_subscriptions::find_by_dedup_key,
    delete: fm_subscriptions::delete,
    list: fm_subscriptions::list,
};
