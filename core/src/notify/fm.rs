//! VNF fault management notifications (SOL003 clauses 7.5.2.5 and 7.5.2.6): which FM
//! subscriptions an alarm event matches (FmNotificationsFilter, clause 7.5.3.2), the
//! notification each gets, and the outbox rows that carry them — written in the transaction
//! that raises or clears the alarm, delivered by the same worker as every other notification.
//!
//! AlarmListRebuiltNotification is defined (vnffm 1.3.0) but never sent: solgate's alarm list
//! lives in its database and is never rebuilt.

use serde_json::{Map, Value, json};
use solgate_db::repo::fm_subscriptions::{self, API, FmSubscriptionRecord};
use solgate_db::repo::notifications;
use solgate_db::{AnyConnection, DbResult};

use super::{instance_filter_matches, one_of, time_stamp, wake};
use crate::links::{Links, href};

pub const ALARM_NOTIFICATION: &str = "AlarmNotification";
pub const ALARM_CLEARED_NOTIFICATION: &str = "AlarmClearedNotification";

/// The only major of the fault management API.
pub const MAJOR: u64 = 1;

/// An alarm event. `alarm` is the Alarm as shown (with `_links`); `instance` the VNF instance
/// it concerns (its identity, for `vnfInstanceSubscriptionFilter`).
#[derive(Debug, Clone, Copy)]
pub enum FmEvent<'a> {
    /// An alarm was raised.
    Raised { alarm: &'a Value, instance: &'a Value },
    /// An alarm was cleared.
    Cleared { alarm: &'a Value, instance: &'a Value },
}

impl FmEvent<'_> {
    pub fn notification_type(&self) -> &'static str {
        match self {
            FmEvent::Raised { .. } => ALARM_NOTIFICATION,
            FmEvent::Cleared { .. } => ALARM_CLEARED_NOTIFICATION,
        }
    }

    fn alarm(&self) -> &Value {
        match self {
            FmEvent::Raised { alarm, .. } | FmEvent::Cleared { alarm, .. } => alarm,
        }
    }

    fn instance(&self) -> &Value {
        match self {
            FmEvent::Raised { instance, .. } | FmEvent::Cleared { instance, .. } => instance,
        }
    }
}

/// Does a subscription's `filter` (FmNotificationsFilter) select the event? Every attribute
/// present must match, an absent or empty list matches everything (clause 7.5.3.2). An alarm
/// without `rootCauseFaultyResource` has no faulty resource type, so a `faultyResourceTypes`
/// list never selects it (Tacker lets such alarms through every `faultyResourceTypes` filter).
pub fn matches(filter: &Value, event: &FmEvent<'_>) -> bool {
    if filter.is_null() {
        return true;
    }
    let alarm = event.alarm();
    instance_filter_matches(&filter["vnfInstanceSubscriptionFilter"], event.instance())
        && one_of(&filter["notificationTypes"], &json!(event.notification_type()))
        && one_of(&filter["faultyResourceTypes"], &alarm["rootCauseFaultyResource"]["faultyResourceType"])
        && one_of(&filter["perceivedSeverities"], &alarm["perceivedSeverity"])
        && one_of(&filter["eventTypes"], &alarm["eventType"])
        && one_of(&filter["probableCauses"], &alarm["probableCause"])
}

/// The notification one subscription receives. Its `id` is fixed here, so every attempt to
/// deliver it carries the same id.
pub fn build(links: &Links, subscription: &FmSubscriptionRecord, event: &FmEvent<'_>, now: &str) -> Value {
    let alarm = event.alarm();
    let mut body = Map::new();
    body.insert("id".into(), json!(uuid::Uuid::new_v4().to_string()));
    body.insert("notificationType".into(), json!(event.notification_type()));
    body.insert("subscriptionId".into(), json!(subscription.id));
    body.insert("timeStamp".into(), json!(time_stamp(now)));
    let subscription_link = href(&links.fm_subscription(&subscription.id));
    match event {
        FmEvent::Raised { .. } => {
            body.insert("alarm".into(), alarm.clone());
            body.insert("_links".into(), json!({ "subscription": subscription_link }));
        }
        FmEvent::Cleared { .. } => {
            let id = alarm["id"].as_str().unwrap_or_default();
            body.insert("alarmId".into(), json!(id));
            body.insert("alarmClearedTime".into(), alarm["alarmClearedTime"].clone());
            body.insert("_links".into(), json!({ "subscription": subscription_link, "alarm": href(&links.alarm(id)) }));
        }
    }
    Value::Object(body)
}

/// Writes one outbox row per matching FM subscription that hears `project` (the alarm's, which
/// is its instance's; [`crate::tenancy::hears`]). Call inside the transaction of the change.
/// Returns how many were queued.
pub fn enqueue(conn: &mut AnyConnection, links: &Links, project: &str, event: FmEvent<'_>) -> DbResult<usize> {
    let now = crate::now();
    let mut queued = 0;
    for subscription in fm_subscriptions::all(conn)? {
        if crate::tenancy::hears(&subscription.project, project) && matches(&subscription.body["filter"], &event) {
            let body = build(links, &subscription, &event, &now);
            notifications::enqueue_for(conn, API, &subscription.id, MAJOR, &body)?;
            queued += 1;
        }
    }
    if queued > 0 {
        wake();
    }
    Ok(queued)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alarm() -> Value {
        json!({"id": "a1", "managedObjectId": "i1", "perceivedSeverity": "CRITICAL", "eventType": "PROCESSING_ERROR_ALARM",
               "probableCause": "Process Terminated", "alarmClearedTime": "2026-11-26T10:25:00Z",
               "rootCauseFaultyResource": {"faultyResource": {"resourceId": "r1"}, "faultyResourceType": "COMPUTE"}})
    }

    fn instance() -> Value {
        json!({"id": "i1", "vnfdId": "d1", "vnfProvider": "P", "vnfProductName": "N", "vnfSoftwareVersion": "1.0",
               "vnfdVersion": "2.0", "vnfInstanceName": "one"})
    }

    fn subscription() -> FmSubscriptionRecord {
        FmSubscriptionRecord {
            id: "s1".into(),
            callback_uri: "http://cb".into(),
            body: json!({}),
            authentication: None,
            dedup_key: String::new(),
            created_at: String::new(),
            project: String::new(),
        }
    }

    #[test]
    fn filters_select_alarm_events() {
        let (alarm, instance) = (alarm(), instance());
        let raised = FmEvent::Raised { alarm: &alarm, instance: &instance };
        let cleared = FmEvent::Cleared { alarm: &alarm, instance: &instance };
        assert!(matches(&Value::Null, &raised) && matches(&json!({}), &cleared));
        assert!(matches(&json!({"notificationTypes": ["AlarmNotification"]}), &raised));
        assert!(!matches(&json!({"notificationTypes": ["AlarmNotification"]}), &cleared));
        assert!(!matches(&json!({"notificationTypes": ["AlarmListRebuiltNotification"]}), &raised));
        assert!(matches(
            &json!({"perceivedSeverities": ["WARNING", "CRITICAL"], "eventTypes": ["PROCESSING_ERROR_ALARM"]}),
            &raised
        ));
        assert!(!matches(&json!({"perceivedSeverities": ["WARNING"]}), &raised));
        assert!(!matches(&json!({"eventTypes": ["QOS_ALARM"]}), &raised));
        assert!(matches(&json!({"probableCauses": ["Process Terminated"]}), &raised));
        assert!(!matches(&json!({"probableCauses": ["process terminated"]}), &raised), "exact values");
        assert!(matches(&json!({"faultyResourceTypes": ["COMPUTE"]}), &raised));
        assert!(!matches(&json!({"faultyResourceTypes": ["NETWORK"]}), &raised));
        assert!(matches(&json!({"vnfInstanceSubscriptionFilter": {"vnfInstanceNames": ["one"]}}), &raised));
        assert!(!matches(&json!({"vnfInstanceSubscriptionFilter": {"vnfdIds": ["d2"]}}), &raised));
        let mut without_resource = alarm.clone();
        without_resource.as_object_mut().unwrap().remove("rootCauseFaultyResource");
        let event = FmEvent::Raised { alarm: &without_resource, instance: &instance };
        assert!(!matches(&json!({"faultyResourceTypes": ["COMPUTE"]}), &event), "no faulty resource, no match");
        assert!(matches(&json!({"faultyResourceTypes": []}), &event), "an empty list matches everything");
    }

    #[test]
    fn notifications_follow_sol003_clause_7_5_2() {
        let links = Links::new("http://vnfm");
        let (alarm, instance) = (alarm(), instance());
        let now = "2026-11-26T10:25:01.123456Z";
        let raised = build(&links, &subscription(), &FmEvent::Raised { alarm: &alarm, instance: &instance }, now);
        assert_eq!(raised["notificationType"], ALARM_NOTIFICATION);
        assert_eq!(raised["timeStamp"], "2026-11-26T10:25:01Z");
        assert_eq!(raised["alarm"], alarm);
        assert_eq!(raised["_links"], json!({"subscription": {"href": "http://vnfm/vnffm/v1/subscriptions/s1"}}));
        let cleared = build(&links, &subscription(), &FmEvent::Cleared { alarm: &alarm, instance: &instance }, now);
        assert_eq!(cleared["notificationType"], ALARM_CLEARED_NOTIFICATION);
        assert_eq!((&cleared["alarmId"], &cleared["alarmClearedTime"]), (&json!("a1"), &json!("2026-11-26T10:25:00Z")));
        assert_eq!(cleared["_links"]["alarm"]["href"], "http://vnfm/vnffm/v1/alarms/a1");
        assert!(cleared.get("alarm").is_none());
        assert_ne!(raised["id"], cleared["id"]);
    }
}
