//! VNF lifecycle management notifications (SOL003 clauses 5.5.2.17 to 5.5.2.19): which LCM
//! subscriptions an event matches (LifecycleChangeNotificationsFilter, clause 5.5.3.12),
//! the notification each gets, and the outbox rows that carry them.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use solgate_db::repo::lcm::{self, LcmMajor, Seen, SubscriptionRecord};
use solgate_db::repo::notifications;
use solgate_db::{AnyConnection, DbResult};

use super::filter::{InstanceFilter, VnfIdentity, one_of};
use super::outbox::{self, Head, Notice, Outbox, document};
use crate::links::{Links, href};

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

/// What notifications take of a VnfLcmOpOcc (SOL003 clause 5.5.2.13). Members it lacks
/// are null in the notification, as they were when it was built from the document.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct OpOccFacts {
    id: Option<String>,
    operation: Option<String>,
    operation_state: Option<String>,
    is_automatic_invocation: Option<bool>,
    resource_changes: Option<ResourceChanges>,
    changed_info: Option<Value>,
    changed_ext_connectivity: Option<Value>,
    modifications_triggered_by_vnf_pkg_change: Option<Value>,
    affected_virtual_cps: Option<Value>,
    affected_vip_cps: Option<Value>,
    error: Option<Value>,
}

/// VnfLcmOpOcc `resourceChanges`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ResourceChanges {
    affected_vnfcs: Option<Value>,
    affected_virtual_links: Option<Value>,
    affected_ext_link_ports: Option<Value>,
    affected_virtual_storages: Option<Value>,
}

/// A subscription's LifecycleChangeNotificationsFilter (SOL003 clause 5.5.3.12).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct LcmFilter {
    vnf_instance_subscription_filter: InstanceFilter,
    notification_types: Vec<String>,
    operation_types: Vec<String>,
    operation_states: Vec<String>,
}

/// An event of a major with the facts filters and notifications read, read once.
struct Facts<'e> {
    major: u64,
    event: &'e Event<'e>,
    instance: VnfIdentity,
    op: Option<OpOccFacts>,
}

impl<'e> Facts<'e> {
    fn of(major: u64, event: &'e Event<'e>) -> Self {
        let op = match event {
            Event::OpOcc { op, .. } => Some(OpOccFacts::deserialize(*op).unwrap_or_default()),
            Event::Created { .. } | Event::Deleted { .. } => None,
        };
        Self { major, event, instance: VnfIdentity::of(event.instance()), op }
    }
}

impl Notice for Facts<'_> {
    type Subscription = SubscriptionRecord;
    type Filter = LcmFilter;

    fn outbox(&self) -> Outbox {
        Outbox { api: notifications::VNFLCM, major: self.major }
    }

    fn selected_by(&self, filter: &LcmFilter) -> bool {
        let notification_type = self.event.notification_type().to_owned();
        // Operation filters do not apply to identifier notifications.
        let operation_matches = self.op.as_ref().is_none_or(|op| {
            one_of(&filter.operation_types, op.operation.as_ref())
                && one_of(&filter.operation_states, op.operation_state.as_ref())
        });
        one_of(&filter.notification_types, Some(&notification_type))
            && operation_matches
            && filter.vnf_instance_subscription_filter.matches(&self.instance)
    }

    fn notification(&self, links: &Links, subscription: &SubscriptionRecord, now: &str) -> Value {
        let (major, instance_id) = (self.major, self.instance.id.as_deref().unwrap_or_default());
        let head = Head::new(self.event.notification_type(), Some(subscription.id.as_str()), now);
        let mut lcm_links = LcmLinks {
            vnf_instance: href(&links.instance(major, instance_id)),
            subscription: href(&links.subscription(major, &subscription.id)),
            vnf_lcm_op_occ: None,
        };
        let mut body = match (self.event, &self.op) {
            (Event::OpOcc { status, .. }, Some(op)) => {
                let op_occ_id = op.id.as_deref().unwrap_or_default();
                lcm_links.vnf_lcm_op_occ = Some(href(&links.op_occ(major, op_occ_id)));
                op_occ_notification(head, lcm_links, instance_id, op, status, subscription.verbosity != "SHORT")
            }
            _ => document(&IdentifierNotification { head, vnf_instance_id: instance_id, links: lcm_links }),
        };
        // changedInfo may carry vimConnectionInfo: its credentials stay here.
        crate::secrets::scrub(&mut body);
        body
    }
}

/// SOL003 VnfLcmOperationOccurrenceNotification (clause 5.5.2.17); the affected* lists,
/// changedInfo, changedExtConnectivity and modificationsTriggeredByVnfPkgChange are
/// present only when notificationStatus is RESULT and verbosity FULL (note 1 and the
/// attribute texts: a START after a retry must not repeat the failed attempt's changes).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct OpOccNotification<'a> {
    #[serde(flatten)]
    head: Head,
    notification_status: &'static str,
    operation_state: &'a Option<String>,
    vnf_instance_id: &'a str,
    operation: &'a Option<String>,
    is_automatic_invocation: &'a Option<bool>,
    verbosity: &'static str,
    vnf_lcm_op_occ_id: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    affected_vnfcs: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    affected_virtual_links: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    affected_ext_link_ports: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    affected_virtual_storages: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed_info: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed_ext_connectivity: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    modifications_triggered_by_vnf_pkg_change: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    affected_virtual_cps: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    affected_vip_cps: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Value>,
    #[serde(rename = "_links")]
    links: LcmLinks,
}

/// SOL003 VnfIdentifierCreationNotification / VnfIdentifierDeletionNotification
/// (clauses 5.5.2.18 and 5.5.2.19).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct IdentifierNotification<'a> {
    #[serde(flatten)]
    head: Head,
    vnf_instance_id: &'a str,
    #[serde(rename = "_links")]
    links: LcmLinks,
}

/// LccnLinks (clause 5.5.3.11).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LcmLinks {
    vnf_instance: Value,
    subscription: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    vnf_lcm_op_occ: Option<Value>,
}

/// A list of affected resources, if it lists any.
fn listing(list: Option<&Value>) -> Option<&Value> {
    list.filter(|list| list.as_array().is_some_and(|items| !items.is_empty()))
}

fn op_occ_notification<'o>(
    head: Head,
    links: LcmLinks,
    instance_id: &str,
    op: &'o OpOccFacts,
    status: &'static str,
    full: bool,
) -> Value {
    let result = full && status == "RESULT";
    let changes = op.resource_changes.as_ref();
    let when_result = |value: Option<&'o Value>| value.filter(|_| result);
    let change = |list: fn(&ResourceChanges) -> Option<&Value>| when_result(listing(changes.and_then(list)));
    let failed = matches!(op.operation_state.as_deref(), Some("FAILED_TEMP" | "FAILED" | "ROLLED_BACK"));
    document(&OpOccNotification {
        head,
        notification_status: status,
        operation_state: &op.operation_state,
        vnf_instance_id: instance_id,
        operation: &op.operation,
        is_automatic_invocation: &op.is_automatic_invocation,
        verbosity: if full { "FULL" } else { "SHORT" },
        vnf_lcm_op_occ_id: &op.id,
        affected_vnfcs: change(|changes| changes.affected_vnfcs.as_ref()),
        affected_virtual_links: change(|changes| changes.affected_virtual_links.as_ref()),
        affected_ext_link_ports: change(|changes| changes.affected_ext_link_ports.as_ref()),
        affected_virtual_storages: change(|changes| changes.affected_virtual_storages.as_ref()),
        changed_info: when_result(op.changed_info.as_ref()),
        changed_ext_connectivity: when_result(op.changed_ext_connectivity.as_ref()),
        modifications_triggered_by_vnf_pkg_change: when_result(op.modifications_triggered_by_vnf_pkg_change.as_ref()),
        affected_virtual_cps: when_result(op.affected_virtual_cps.as_ref()),
        affected_vip_cps: when_result(op.affected_vip_cps.as_ref()),
        error: op.error.as_ref().filter(|_| failed),
        links,
    })
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
    let subscriptions = lcm::subscriptions_seen(conn, major, seen)?;
    outbox::enqueue(conn, links, project, &Facts::of(major.number(), &event), subscriptions.as_slice())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::notify::filter::read_filter;

    fn matches(filter: &Value, event: &Event<'_>) -> bool {
        // The major plays no part in matching.
        read_filter::<LcmFilter>(filter).is_some_and(|filter| Facts::of(0, event).selected_by(&filter))
    }

    fn build(major: u64, links: &Links, subscription: &SubscriptionRecord, event: &Event<'_>, now: &str) -> Value {
        Facts::of(major, event).notification(links, subscription, now)
    }

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
}
