//! Notifications: which subscriptions an event matches, the notification each gets, and
//! the outbox rows that carry them — written in the transaction of the state change, so
//! a notification is never lost and never sent for a change that did not commit. The
//! delivery worker (the conductor's `notifier`) sends them.

use std::sync::LazyLock;

use serde_json::{Map, Value, json};
use sha2::Digest;
use solgate_db::repo::lcm::{self, LcmMajor, Seen, SubscriptionRecord};
use solgate_db::repo::notifications::{self, NotificationRow};
use solgate_db::repo::{fm_subscriptions, pkgm_subscriptions, vnfpm};
use solgate_db::{AnyConnection, DbResult};
use solgate_schemas::Api;
use tokio::sync::watch;

use crate::PRIVATE_KEY;
use crate::links::{Links, href};

pub mod fm;
pub mod pkgm;

/// Where a notification row goes: the callback of the subscription (or of any other
/// resource that carries its own `callbackUri`) that the row's `api` and id name, with
/// what delivery needs of it.
#[derive(Debug, Clone)]
pub struct CallbackTarget {
    /// The API whose dictionary renders the notification and whose version `Version` names.
    pub api: Api,
    pub major: u64,
    pub callback_uri: String,
    /// The callback's credentials, sealed as stored.
    pub authentication: Option<Value>,
    /// The stored document; its private part names the version it was created with.
    pub body: Value,
}

/// What [`callback_target`] found for a row.
#[derive(Debug, Clone)]
pub enum Target {
    Found(CallbackTarget),
    /// Deleted meanwhile: its queue goes with it.
    Gone,
    /// The row names an API or major solgate does not know: why.
    Unknown(&'static str),
}

/// The callback target of an outbox row, from the table its `api` names. One place per kind:
/// an API that adds notifications (an API's subscriptions, or resources with a callback of
/// their own) adds its arm here, and the delivery worker sends its rows like every other.
pub fn callback_target(conn: &mut AnyConnection, row: &NotificationRow) -> DbResult<Target> {
    let Ok(major) = u64::try_from(row.major) else {
        return Ok(Target::Unknown("the notification names an unknown API major version"));
    };
    let id = row.subscription_id.as_str();
    let found = match row.api.as_str() {
        notifications::VNFLCM => {
            let Some(lcm_major) = LcmMajor::from_major(major) else {
                return Ok(Target::Unknown("the notification names an unknown API major version"));
            };
            lcm::find_subscription(conn, lcm_major, id)?.map(|record| CallbackTarget {
                api: Api::Vnflcm,
                major,
                callback_uri: record.callback_uri,
                authentication: record.authentication,
                body: record.body,
            })
        }
        pkgm_subscriptions::API if major == pkgm::MAJOR => {
            pkgm_subscriptions::find(conn, id)?.map(|record| CallbackTarget {
                api: Api::Vnfpkgm,
                major,
                callback_uri: record.callback_uri,
                authentication: record.authentication,
                body: record.body,
            })
        }
        fm_subscriptions::API if major == fm::MAJOR => fm_subscriptions::find(conn, id)?.map(|record| CallbackTarget {
            api: Api::Vnffm,
            major,
            callback_uri: record.callback_uri,
            authentication: record.authentication,
            body: record.body,
        }),
        // A PM job or threshold is the "subscription" of its own notifications.
        vnfpm::API if major == crate::pm::MAJOR => {
            let record = match vnfpm::find_job(conn, id)? {
                Some(job) => Some(job),
                None => vnfpm::find_threshold(conn, id)?,
            };
            record.map(|record| CallbackTarget {
                api: Api::Vnfpm,
                major,
                callback_uri: record.callback_uri().to_owned(),
                authentication: record.authentication,
                body: record.body,
            })
        }
        _ => return Ok(Target::Unknown("the notification names an unknown API or major version")),
    };
    Ok(found.map_or(Target::Gone, Target::Found))
}

pub const OP_OCC_NOTIFICATION: &str = "VnfLcmOperationOccurrenceNotification";
pub const CREATION_NOTIFICATION: &str = "VnfIdentifierCreationNotification";
pub const DELETION_NOTIFICATION: &str = "VnfIdentifierDeletionNotification";

/// Something subscribers may want to hear of.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// An operation occurrence entered a state; `status` is START or RESULT.
    OpOcc {
        op: &'a Value,
        instance: &'a Value,
        status: &'static str,
    },
    Created {
        instance: &'a Value,
    },
    Deleted {
        instance: &'a Value,
    },
}

impl Event<'_> {
    pub fn notification_type(&self) -> &'static str {
        match self {
            Event::OpOcc { .. } => OP_OCC_NOTIFICATION,
            Event::Created { .. } => CREATION_NOTIFICATION,
            Event::Deleted { .. } => DELETION_NOTIFICATION,
        }
    }

    fn instance(&self) -> &Value {
        match self {
            Event::OpOcc { instance, .. } | Event::Created { instance } | Event::Deleted { instance } => instance,
        }
    }
}

fn listed(list: &Value, value: &Value) -> bool {
    list.as_array().is_some_and(|items| items.contains(value))
}

fn absent_or_empty(value: &Value) -> bool {
    value.is_null() || value.as_array().is_some_and(Vec::is_empty)
}

/// `vnfProductsFromProviders` of a filter (SOL003 VnfInstanceSubscriptionFilter, SOL005
/// PkgmNotificationsFilter: the same structure) against a document with the VNFD's
/// `vnfProvider`, `vnfProductName`, `vnfSoftwareVersion` and `vnfdVersion`. Absent or
/// empty matches everything.
pub(crate) fn products_match(providers: &Value, document: &Value) -> bool {
    let Some(providers) = providers.as_array().filter(|list| !list.is_empty()) else { return true };
    providers.iter().any(|provider| {
        provider["vnfProvider"] == document["vnfProvider"]
            && provider["vnfProducts"].as_array().filter(|list| !list.is_empty()).is_none_or(|products| {
                products.iter().any(|product| {
                    product["vnfProductName"] == document["vnfProductName"]
                        && product["versions"].as_array().filter(|list| !list.is_empty()).is_none_or(|versions| {
                            versions.iter().any(|version| {
                                version["vnfSoftwareVersion"] == document["vnfSoftwareVersion"]
                                    && (absent_or_empty(&version["vnfdVersions"])
                                        || listed(&version["vnfdVersions"], &document["vnfdVersion"]))
                            })
                        })
                })
            })
    })
}

/// A list condition of a filter: absent or empty matches everything, else `value` must be listed.
pub(crate) fn one_of(list: &Value, value: &Value) -> bool {
    absent_or_empty(list) || listed(list, value)
}

/// SOL003 VnfInstanceSubscriptionFilter: every condition present must hold.
pub(crate) fn instance_filter_matches(filter: &Value, instance: &Value) -> bool {
    if filter.is_null() {
        return true;
    }
    if !absent_or_empty(&filter["vnfdIds"]) && !listed(&filter["vnfdIds"], &instance["vnfdId"]) {
        return false;
    }
    if !products_match(&filter["vnfProductsFromProviders"], instance) {
        return false;
    }
    if !absent_or_empty(&filter["vnfInstanceIds"]) && !listed(&filter["vnfInstanceIds"], &instance["id"]) {
        return false;
    }
    if !absent_or_empty(&filter["vnfInstanceNames"])
        && !listed(&filter["vnfInstanceNames"], &instance["vnfInstanceName"])
    {
        return false;
    }
    true
}

/// Does a subscription's `filter` (LifecycleChangeNotificationsFilter) select the event?
pub fn matches(filter: &Value, event: &Event<'_>) -> bool {
    if filter.is_null() {
        return true;
    }
    if !absent_or_empty(&filter["notificationTypes"])
        && !listed(&filter["notificationTypes"], &json!(event.notification_type()))
    {
        return false;
    }
    if let Event::OpOcc { op, .. } = event {
        if !absent_or_empty(&filter["operationTypes"]) && !listed(&filter["operationTypes"], &op["operation"]) {
            return false;
        }
        if !absent_or_empty(&filter["operationStates"]) && !listed(&filter["operationStates"], &op["operationState"]) {
            return false;
        }
    }
    instance_filter_matches(&filter["vnfInstanceSubscriptionFilter"], event.instance())
}

/// A notification's `timeStamp` from a stored time: SOL013 DateTime; seconds are what
/// clients (and Tacker) show.
pub(crate) fn time_stamp(now: &str) -> String {
    now.get(..19).map(|s| format!("{s}Z")).unwrap_or_else(|| now.to_owned())
}

/// The notification one subscription receives, in the newest shape of its major (the
/// delivery worker renders it for the subscription's version). Its `id` is fixed here,
/// so every attempt to deliver it carries the same id and receivers can de-duplicate.
pub fn build(major: u64, links: &Links, subscription: &SubscriptionRecord, event: &Event<'_>, now: &str) -> Value {
    let instance = event.instance();
    let instance_id = instance["id"].as_str().unwrap_or_default();
    let mut body = Map::new();
    body.insert("id".into(), json!(uuid::Uuid::new_v4().to_string()));
    body.insert("notificationType".into(), json!(event.notification_type()));
    body.insert("subscriptionId".into(), json!(subscription.id));
    body.insert("timeStamp".into(), json!(time_stamp(now)));
    let mut links_map = Map::new();
    links_map.insert("vnfInstance".into(), href(&links.instance(major, instance_id)));
    links_map.insert("subscription".into(), href(&links.subscription(major, &subscription.id)));
    match event {
        Event::OpOcc { op, status, .. } => {
            let full = subscription.verbosity != "SHORT";
            body.insert("notificationStatus".into(), json!(status));
            body.insert("operationState".into(), op["operationState"].clone());
            body.insert("vnfInstanceId".into(), json!(instance_id));
            body.insert("operation".into(), op["operation"].clone());
            body.insert("isAutomaticInvocation".into(), op["isAutomaticInvocation"].clone());
            body.insert("verbosity".into(), json!(if full { "FULL" } else { "SHORT" }));
            body.insert("vnfLcmOpOccId".into(), op["id"].clone());
            // SOL003 VnfLcmOperationOccurrenceNotification (note 1 and the attribute texts):
            // the affected* lists, changedInfo, changedExtConnectivity and
            // modificationsTriggeredByVnfPkgChange are present only when notificationStatus
            // is RESULT and verbosity FULL, and absent otherwise (a START after a retry must
            // not repeat the failed attempt's changes).
            if full && *status == "RESULT" {
                let changes = &op["resourceChanges"];
                for key in ["affectedVnfcs", "affectedVirtualLinks", "affectedExtLinkPorts", "affectedVirtualStorages"]
                {
                    if let Some(list) = changes.get(key).filter(|list| list.as_array().is_some_and(|l| !l.is_empty())) {
                        body.insert(key.into(), list.clone());
                    }
                }
                for key in [
                    "changedInfo",
                    "changedExtConnectivity",
                    "modificationsTriggeredByVnfPkgChange",
                    "affectedVirtualCps",
                    "affectedVipCps",
                ] {
                    if let Some(value) = op.get(key).filter(|value| !value.is_null()) {
                        body.insert(key.into(), value.clone());
                    }
                }
            }
            if let Some(error) = op.get("error")
                && matches!(op["operationState"].as_str(), Some("FAILED_TEMP" | "FAILED" | "ROLLED_BACK"))
            {
                body.insert("error".into(), error.clone());
            }
            links_map.insert("vnfLcmOpOcc".into(), href(&links.op_occ(major, op["id"].as_str().unwrap_or_default())));
        }
        Event::Created { .. } | Event::Deleted { .. } => {
            body.insert("vnfInstanceId".into(), json!(instance_id));
        }
    }
    body.insert("_links".into(), Value::Object(links_map));
    Value::Object(body)
}

/// Writes one outbox row per matching subscription of the major that hears `project`
/// (the instance's; [`crate::tenancy::hears`]). Call inside the transaction of the change.
/// Returns how many were queued.
pub fn enqueue(
    conn: &mut AnyConnection,
    major: LcmMajor,
    links: &Links,
    project: &str,
    event: Event<'_>,
) -> DbResult<usize> {
    enqueue_seen(conn, major, links, project, event, Seen { subscription_generation: None })
}

/// [`enqueue`] for an event whose transaction's statement saw `seen` (on PostgreSQL, the
/// subscriptions' generation): the subscriptions read at that generation serve again.
pub fn enqueue_seen(
    conn: &mut AnyConnection,
    major: LcmMajor,
    links: &Links,
    project: &str,
    event: Event<'_>,
    seen: Seen,
) -> DbResult<usize> {
    let now = crate::now();
    let mut queued = 0;
    for subscription in lcm::subscriptions_seen(conn, major, seen)?.iter() {
        if crate::tenancy::hears(&subscription.project, project) && matches(&subscription.body["filter"], &event) {
            let mut body = build(major.number(), links, subscription, &event, &now);
            // changedInfo may carry vimConnectionInfo: its credentials stay here.
            crate::secrets::scrub(&mut body);
            notifications::enqueue(conn, &subscription.id, major.number(), &body)?;
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

/// The private key of a subscription document holding the API version it was created
/// with; its notifications are rendered for, and carry `Version` of, that version.
pub const VERSION_KEY: &str = "version";

/// The version a subscription was created with (absent for rows written before it was
/// recorded: the delivery worker then uses the newest served minor of the major).
pub fn subscription_version(body: &Value) -> Option<&str> {
    body.get(PRIVATE_KEY)?.get(VERSION_KEY)?.as_str()
}

/// A filter in canonical form: keys sorted, array values sorted and de-duplicated (the
/// values of a filter attribute are alternatives, so their order means nothing), and
/// empty arrays, empty objects and nulls dropped (SOL003: an absent attribute matches
/// everything, and [`matches`] treats an empty list the same way).
pub fn canonical_filter(filter: &Value) -> Value {
    match filter {
        Value::Object(map) => {
            let mut entries: Vec<(&String, Value)> = map
                .iter()
                .map(|(key, value)| (key, canonical_filter(value)))
                .filter(|(_, value)| !is_empty(value))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(key, value)| (key.clone(), value)).collect())
        }
        Value::Array(items) => {
            let mut items: Vec<Value> = items.iter().map(canonical_filter).filter(|item| !is_empty(item)).collect();
            items.sort_by_cached_key(Value::to_string);
            items.dedup();
            Value::Array(items)
        }
        other => other.clone(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// The key that makes two subscription requests duplicates (SOL003 clause 5.4.18.3.1:
/// "the same callback URI and the same filter"; the VNFM then answers 303 See Other).
/// The verbosity is part of it, since two subscriptions that differ in it receive
/// different notifications; credentials are not. The callback URI is compared in its
/// normalised form (scheme and host lower-case, default port dropped). A SHA-256 hex
/// digest, so that the unique index stays small whatever the filter's size.
pub fn dedup_key(callback_uri: &str, filter: &Value, verbosity: &str) -> String {
    dedup_key_of(callback_uri, filter, &[verbosity])
}

/// The dedup key of a subscription made by `project` (empty: an administrator's, or
/// without authentication): projects do not share subscriptions, so the same request
/// from another project is a new one.
pub fn scoped_dedup_key(project: &str, key: String) -> String {
    if project.is_empty() { key } else { format!("{project}|{key}") }
}

/// [`dedup_key`] with the other attributes that tell subscriptions of an API apart
/// (SOL005 PkgmSubscription has no verbosity: none).
pub fn dedup_key_of(callback_uri: &str, filter: &Value, others: &[&str]) -> String {
    let uri = url::Url::parse(callback_uri).map(String::from).unwrap_or_else(|_| callback_uri.to_owned());
    // No filter and an empty one select the same.
    let canonical = Some(canonical_filter(filter)).filter(|canonical| !is_empty(canonical)).unwrap_or(Value::Null);
    let mut hasher = sha2::Sha256::new();
    let canonical = canonical.to_string();
    let parts = [uri.as_str()].into_iter().chain(others.iter().copied()).chain([canonical.as_str()]);
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance() -> Value {
        json!({"id": "i1", "vnfdId": "d1", "vnfProvider": "P", "vnfProductName": "N", "vnfSoftwareVersion": "1.0", "vnfdVersion": "2.0", "vnfInstanceName": "one"})
    }

    #[test]
    fn filters_select_events() {
        let op = json!({"id": "o1", "operation": "INSTANTIATE", "operationState": "STARTING"});
        let instance = instance();
        let event = Event::OpOcc { op: &op, instance: &instance, status: "START" };
        assert!(matches(&Value::Null, &event));
        assert!(matches(&json!({"vnfInstanceSubscriptionFilter": {"vnfdIds": ["d1"]}}), &event));
        assert!(!matches(&json!({"vnfInstanceSubscriptionFilter": {"vnfdIds": ["other"]}}), &event));
        assert!(matches(&json!({"operationTypes": ["INSTANTIATE"], "operationStates": ["STARTING"]}), &event));
        assert!(!matches(&json!({"operationStates": ["COMPLETED"]}), &event));
        assert!(!matches(&json!({"notificationTypes": [CREATION_NOTIFICATION]}), &event));
        let providers = json!({"vnfInstanceSubscriptionFilter": {"vnfProductsFromProviders": [
            {"vnfProvider": "P", "vnfProducts": [{"vnfProductName": "N", "versions": [{"vnfSoftwareVersion": "1.0", "vnfdVersions": ["2.0"]}]}]}
        ]}});
        assert!(matches(&providers, &event));
        let wrong_version = json!({"vnfInstanceSubscriptionFilter": {"vnfProductsFromProviders": [
            {"vnfProvider": "P", "vnfProducts": [{"vnfProductName": "N", "versions": [{"vnfSoftwareVersion": "9"}]}]}
        ]}});
        assert!(!matches(&wrong_version, &event));
        // Operation filters do not apply to identifier notifications.
        assert!(matches(&json!({"operationTypes": ["SCALE"]}), &Event::Created { instance: &instance }));
        assert!(!matches(
            &json!({"vnfInstanceSubscriptionFilter": {"vnfInstanceNames": ["two"]}}),
            &Event::Created { instance: &instance }
        ));
    }

    #[test]
    fn result_only_fields_follow_status_and_verbosity() {
        let links = Links::new("http://vnfm");
        let op = json!({"id": "o1", "operation": "INSTANTIATE", "operationState": "PROCESSING", "isAutomaticInvocation": false,
            "resourceChanges": {"affectedVnfcs": [{"id": "c1", "changeType": "ADDED"}]}});
        let instance = instance();
        let full = SubscriptionRecord {
            id: "s1".into(),
            callback_uri: "http://cb".into(),
            verbosity: "FULL".into(),
            body: json!({}),
            authentication: None,
            dedup_key: String::new(),
            created_at: String::new(),
            project: String::new(),
        };
        let short = SubscriptionRecord { verbosity: "SHORT".into(), ..full.clone() };
        let now = "2026-11-22T01:34:39.123456Z";
        let result = Event::OpOcc { op: &op, instance: &instance, status: "RESULT" };
        let start = Event::OpOcc { op: &op, instance: &instance, status: "START" };
        let body = build(2, &links, &full, &result, now);
        assert_eq!(body["affectedVnfcs"][0]["id"], "c1");
        assert_eq!(body["timeStamp"], "2026-11-22T01:34:39Z");
        assert_eq!(body["_links"]["vnfLcmOpOcc"]["href"], "http://vnfm/vnflcm/v2/vnf_lcm_op_occs/o1");
        assert!(build(2, &links, &full, &start, now).get("affectedVnfcs").is_none(), "START carries no changes");
        let body = build(2, &links, &short, &result, now);
        assert!(body.get("affectedVnfcs").is_none());
        assert_eq!(body["verbosity"], "SHORT");
        let other = build(2, &links, &full, &result, now);
        assert_ne!(body["id"], other["id"], "each notification has its own id");
    }

    #[test]
    fn duplicates_are_recognised_whatever_the_order() {
        let a = json!({"operationTypes": ["TERMINATE", "INSTANTIATE"], "vnfInstanceSubscriptionFilter": {"vnfdIds": ["d1"]}, "notificationTypes": []});
        let b = json!({"vnfInstanceSubscriptionFilter": {"vnfdIds": ["d1"], "vnfInstanceIds": []}, "operationTypes": ["INSTANTIATE", "TERMINATE"]});
        assert_eq!(dedup_key("http://Host:80/cb", &a, "FULL"), dedup_key("http://host/cb", &b, "FULL"));
        assert_ne!(dedup_key("http://host/cb", &a, "FULL"), dedup_key("http://host/cb", &a, "SHORT"));
        assert_ne!(dedup_key("http://host/cb", &a, "FULL"), dedup_key("http://host/cb2", &a, "FULL"));
        assert_eq!(dedup_key("http://host/cb", &Value::Null, "FULL"), dedup_key("http://host/cb", &json!({}), "FULL"));
        assert_ne!(dedup_key("http://host/cb", &Value::Null, "FULL"), dedup_key("http://host/cb", &a, "FULL"));
    }
}
