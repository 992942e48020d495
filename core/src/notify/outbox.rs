//! What every kind of notification shares: the head of the document (SOL003/SOL005: `id`,
//! `notificationType`, `subscriptionId`, `timeStamp`), the queueing of one outbox row per
//! subscription that hears the event and whose filter selects it, and the in-process wake
//! of the delivery worker. Below the API modules (LCM, FM, package management, PM), so
//! none of them imports another.

use std::sync::LazyLock;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use solgate_db::repo::lcm::SubscriptionRecord;
use solgate_db::repo::notifications;
use solgate_db::repo::plain_subscriptions::PlainSubscriptionRecord;
use solgate_db::{AnyConnection, DbResult};
use tokio::sync::watch;

use super::filter::filter_of;
use crate::links::Links;

/// A notification's `timeStamp` from a stored time: SOL013 DateTime; seconds are what
/// clients (and Tacker) show.
pub fn time_stamp(now: &str) -> String {
    now.get(..19).map(|s| format!("{s}Z")).unwrap_or_else(|| now.to_owned())
}

/// The members every notification starts with. Its `id` is fixed when it is built, so
/// every attempt to deliver it carries the same id and receivers can de-duplicate.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Head {
    pub(crate) id: String,
    pub(crate) notification_type: &'static str,
    /// Absent in PM notifications: a PM job or threshold is its own subscription.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) subscription_id: Option<String>,
    pub(crate) time_stamp: String,
}

impl Head {
    pub(crate) fn new(notification_type: &'static str, subscription_id: Option<&str>, now: &str) -> Self {
        Self {
            id: uuid::Uuid::new_v4().to_string(),
            notification_type,
            subscription_id: subscription_id.map(str::to_owned),
            time_stamp: time_stamp(now),
        }
    }
}

/// A typed notification as the JSON document the outbox stores.
pub(crate) fn document(notification: &impl Serialize) -> Value {
    serde_json::to_value(notification).unwrap_or_else(|error| {
        // Plain structs of strings and JSON values always serialise.
        tracing::error!(%error, "a notification did not serialise");
        Value::Null
    })
}

/// A stored subscription of any API, as the shared queueing needs it.
pub(crate) trait Subscription {
    fn id(&self) -> &str;
    /// The project whose events it hears (empty: every project's).
    fn project(&self) -> &str;
    /// The stored document, whose `filter` selects the events.
    fn body(&self) -> &Value;
}

/// The subscription records of the database, each a [`Subscription`].
macro_rules! subscription_records {
    ($($record:ty),*) => {$(
        impl Subscription for $record {
            fn id(&self) -> &str {
                &self.id
            }

            fn project(&self) -> &str {
                &self.project
            }

            fn body(&self) -> &Value {
                &self.body
            }
        }
    )*};
}

subscription_records!(SubscriptionRecord, PlainSubscriptionRecord);

/// The outbox rows of one API: its name in the `api` column and its major.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outbox {
    pub(crate) api: &'static str,
    pub(crate) major: u64,
}

/// An event of one subscription API, with what its filters and notifications read of it
/// (read once, whatever the number of subscriptions). Each API implements it; the
/// matching, queueing and wake are [`enqueue`]'s.
pub(crate) trait Notice {
    type Subscription: Subscription;
    /// The API's notifications filter (absent members: match everything).
    type Filter: DeserializeOwned + Default;

    fn outbox(&self) -> Outbox;
    fn selected_by(&self, filter: &Self::Filter) -> bool;
    /// The notification `subscription` receives.
    fn notification(&self, links: &Links, subscription: &Self::Subscription, now: &str) -> Value;
}

/// Writes one outbox row per subscription that hears `project` ([`crate::tenancy::hears`])
/// and whose filter selects the event. Call inside the transaction of the change. Returns
/// how many were queued.
pub(crate) fn enqueue<N: Notice>(
    conn: &mut AnyConnection,
    links: &Links,
    project: &str,
    notice: &N,
    subscriptions: &[N::Subscription],
) -> DbResult<usize> {
    let now = crate::now();
    let outbox = notice.outbox();
    let mut queued = 0;
    for subscription in subscriptions {
        if crate::tenancy::hears(subscription.project(), project)
            && filter_of::<N::Filter>(subscription.body()).is_some_and(|filter| notice.selected_by(&filter))
        {
            let body = notice.notification(links, subscription, &now);
            notifications::enqueue_for(conn, outbox.api, subscription.id(), outbox.major, &body)?;
            queued += 1;
        }
    }
    if queued > 0 {
        wake();
    }
    Ok(queued)
}

/// Bumped whenever this process queues notifications, so its delivery worker need not
/// wait for the next poll (rows written by other processes are found by polling). A
/// watch channel, not a Notify: a worker busy when the signal comes still sees it.
static QUEUED: LazyLock<watch::Sender<u64>> = LazyLock::new(|| watch::channel(0).0);

/// Tells delivery workers in this process that rows were queued. The caller's
/// transaction may not have committed yet; the worker allows for that.
pub fn wake() {
    QUEUED.send_modify(|count| *count = count.wrapping_add(1));
}

/// A receiver of [`wake`] signals.
pub fn wake_signal() -> watch::Receiver<u64> {
    QUEUED.subscribe()
}
