//! VNF fault management notifications (SOL003 clauses 7.5.2.5 and 7.5.2.6): which FM
//! subscriptions an alarm event matches (FmNotificationsFilter, clause 7.5.3.2), the
//! notification each gets, and the outbox rows that carry them — written in the transaction
//! that raises or clears the alarm, delivered by the same worker as every other notification.
//!
//! AlarmListRebuiltNotification is defined (vnffm 1.3.0) but never sent: solgate's alarm list
//! lives in its database and is never rebuilt.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use solgate_db::repo::fm_subscriptions::{self, API, FmSubscriptionRecord};
use solgate_db::{AnyConnection, DbResult};

use super::filter::{InstanceFilter, VnfIdentity, one_of};
use super::outbox::{self, Head, Notice, Outbox, document};
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

/// What filters and notifications read of an Alarm (SOL003 clause 7.5.2.4).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct AlarmFacts {
    id: Option<String>,
    perceived_severity: Option<String>,
    event_type: Option<String>,
    probable_cause: Option<String>,
    alarm_cleared_time: Option<Value>,
    root_cause_faulty_resource: Option<FaultyResourceInfo>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct FaultyResourceInfo {
    faulty_resource_type: Option<String>,
}

/// A subscription's FmNotificationsFilter (clause 7.5.3.2): every attribute present must
/// match, an absent or empty list matches everything. An alarm without
/// `rootCauseFaultyResource` has no faulty resource type, so a `faultyResourceTypes` list
/// never selects it (Tacker lets such alarms through every `faultyResourceTypes` filter).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct FmFilter {
    vnf_instance_subscription_filter: InstanceFilter,
    notification_types: Vec<String>,
    faulty_resource_types: Vec<String>,
    perceived_severities: Vec<String>,
    event_types: Vec<String>,
    probable_causes: Vec<String>,
}

/// An event with what filters and notifications read of it, read once.
struct Facts<'e> {
    event: &'e FmEvent<'e>,
    alarm: AlarmFacts,
    instance: VnfIdentity,
}

impl<'e> Facts<'e> {
    fn of(event: &'e FmEvent<'e>) -> Self {
        let alarm = AlarmFacts::deserialize(event.alarm()).unwrap_or_default();
        Self { event, alarm, instance: VnfIdentity::of(event.instance()) }
    }
}

impl Notice for Facts<'_> {
    type Subscription = FmSubscriptionRecord;
    type Filter = FmFilter;

    fn outbox(&self) -> Outbox {
        Outbox { api: API, major: MAJOR }
    }

    fn selected_by(&self, filter: &FmFilter) -> bool {
        let alarm = &self.alarm;
        let faulty_type = alarm.root_cause_faulty_resource.as_ref().and_then(|root| root.faulty_resource_type.as_ref());
        filter.vnf_instance_subscription_filter.matches(&self.instance)
            && one_of(&filter.notification_types, Some(&self.event.notification_type().to_owned()))
            && one_of(&filter.faulty_resource_types, faulty_type)
            && one_of(&filter.perceived_severities, alarm.perceived_severity.as_ref())
            && one_of(&filter.event_types, alarm.event_type.as_ref())
            && one_of(&filter.probable_causes, alarm.probable_cause.as_ref())
    }

    fn notification(&self, links: &Links, subscription: &FmSubscriptionRecord, now: &str) -> Value {
        let head = Head::new(self.event.notification_type(), Some(subscription.id.as_str()), now);
        let subscription_link = href(&links.fm_subscription(&subscription.id));
        match self.event {
            FmEvent::Raised { .. } => document(&AlarmNotification {
                head,
                alarm: self.event.alarm(),
                links: FmLinks { subscription: subscription_link, alarm: None },
            }),
            FmEvent::Cleared { .. } => {
                let id = self.alarm.id.as_deref().unwrap_or_default();
                document(&AlarmClearedNotification {
                    head,
                    alarm_id: id,
                    alarm_cleared_time: &self.alarm.alarm_cleared_time,
                    links: FmLinks { subscription: subscription_link, alarm: Some(href(&links.alarm(id))) },
                })
            }
        }
    }
}

/// AlarmNotification (clause 7.5.2.5).
#[derive(Debug, Serialize)]
struct AlarmNotification<'a> {
    #[serde(flatten)]
    head: Head,
    alarm: &'a Value,
    #[serde(rename = "_links")]
    links: FmLinks,
}

/// AlarmClearedNotification (clause 7.5.2.6).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AlarmClearedNotification<'a> {
    #[serde(flatten)]
    head: Head,
    alarm_id: &'a str,
    alarm_cleared_time: &'a Option<Value>,
    #[serde(rename = "_links")]
    links: FmLinks,
}

/// FmNotificationsLinks / the links of AlarmClearedNotification.
#[derive(Debug, Serialize)]
struct FmLinks {
    subscription: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    alarm: Option<Value>,
}

/// Writes one outbox row per matching FM subscription that hears `project` (the alarm's, which
/// is its instance's; [`crate::tenancy::hears`]). Call inside the transaction of the change.
/// Returns how many were queued.
pub fn enqueue(conn: &mut AnyConnection, links: &Links, project: &str, event: FmEvent<'_>) -> DbResult<usize> {
    let subscriptions = fm_subscriptions::all(conn)?;
    outbox::enqueue(conn, links, project, &Facts::of(&event), &subscriptions)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::notify::filter::read_filter;

    fn matches(filter: &Value, event: &FmEvent<'_>) -> bool {
        read_filter::<FmFilter>(filter).is_some_and(|filter| Facts::of(event).selected_by(&filter))
    }

    fn build(links: &Links, subscription: &FmSubscriptionRecord, event: &FmEvent<'_>, now: &str) -> Value {
        Facts::of(event).notification(links, subscription, now)
    }

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
