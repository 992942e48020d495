//! PkgmSubscriptions (SOL005 v2.6.1 clauses 9.4.8 and 9.4.9): one file per operation, each the shared implementation of
//! [`crate::common::plain_subscriptions`] (clause 9.4.8.3.1 allows the 303) with this API's [`TABLE`].

pub mod create;
pub mod delete;
pub mod list;
pub mod show;

use solgate_db::repo::pkgm_subscriptions;

use crate::common::plain_subscriptions::Table;

pub static TABLE: Table = Table {
    resource: "PkgmSubscription",
    request: "PkgmSubscriptionRequest",
    what: "VNF package subscription",
    link: |links, id| links.pkgm_subscription(id),
    columns: pkgm_subscriptions::COLUMNS,
    insert: pkgm_subscriptions::insert,
    find: pkgm_subscriptions::find,
    find_by_dedup_key: pkgm_subscriptions::find_by_dedup_key,
    delete: pkgm_subscriptions::delete,
    list: pkgm_subscriptions::list,
};
