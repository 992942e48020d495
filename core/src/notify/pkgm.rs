//! VNF package management notifications (SOL005 v2.6.1 clauses 9.5.2.8 and 9.5.2.9): which
//! package subscriptions an event matches (PkgmNotificationsFilter, clause 9.5.3.4), the
//! notification each gets, and the outbox rows that carry them — written in the
//! transaction of the package change, delivered by the same worker as LCM notifications.
//!
//! Usage state changes are not notified: SOL005 v2.6.1 PackageChangeType has only
//! OP_STATE_CHANGE and PKG_DELETE, and VnfPackageChangeNotification reports changes of
//! `operationalState` and deletion only (the `usageState` filter attribute selects by the
//! package's usage state when such an event happens).

use serde_json::{Map, Value, json};
use solgate_db::repo::notifications;
use solgate_db::repo::pkgm_subscriptions::{self, API, PkgmSubscriptionRecord};
use solgate_db::{AnyConnection, DbResult};

use super::{one_of, products_match, time_stamp, wake};
use crate::links::{Links, href};

pub const ONBOARDING_NOTIFICATION: &str = "VnfPackageOnboardingNotification";
pub const CHANGE_NOTIFICATION: &str = "VnfPackageChangeNotification";

/// The only major of the package management API.
pub const MAJOR: u64 = 1;

/// A package event subscribers may hear of; `package` is its VnfPkgInfo after the change
/// (for a deletion: as it was when deleted).
#[derive(Debug, Clone, Copy)]
pub enum PkgEvent<'a> {
    /// The package became ONBOARDED.
    Onboarded { package: &'a Value },
    /// The operational state of an onboarded package changed (PATCH).
    OperationalStateChanged { package: &'a Value },
    /// The package was deleted.
    Deleted { package: &'a Value },
}

impl PkgEvent<'_> {
    pub fn notification_type(&self) -> &'static str {
        match self {
            PkgEvent::Onboarded { .. } => ONBOARDING_NOTIFICATION,
            PkgEvent::OperationalStateChanged { .. } | PkgEvent::Deleted { .. } => CHANGE_NOTIFICATION,
        }
    }

    /// SOL005 v2.6.1 clause 9.5.4.5 PackageChangeType, for change notifications.
    pub fn change_type(&self) -> Option<&'static str> {
        match self {
            PkgEvent::Onboarded { .. } => None,
            PkgEvent::OperationalStateChanged { .. } => Some("OP_STATE_CHANGE"),
            PkgEvent::Deleted { .. } => Some("PKG_DELETE"),
        }
    }

    pub fn package(&self) -> &Value {
        match self {
            PkgEvent::Onboarded { package }
            | PkgEvent::OperationalStateChanged { package }
            | PkgEvent::Deleted { package } => package,
        }
    }
}

/// Does a subscription's `filter` (PkgmNotificationsFilter) select the event? Every
/// attribute present must hold; an absent or empty list matches everything.
pub fn matches(filter: &Value, event: &PkgEvent<'_>) -> bool {
    if filter.is_null() {
        return true;
    }
    let package = event.package();
    one_of(&filter["notificationTypes"], &json!(event.notification_type()))
        && products_match(&filter["vnfProductsFromProviders"], package)
        && one_of(&filter["vnfdId"], &package["vnfdId"])
        && one_of(&filter["vnfPkgId"], &package["id"])
        && one_of(&filter["operationalState"], &package["operationalState"])
        && one_of(&filter["usageState"], &package["usageState"])
}

/// The notification one subscription receives. Its `id` is fixed here, so every attempt to
/// deliver it carries the same id.
pub fn build(links: &Links, subscription: &PkgmSubscriptionRecord, event: &PkgEvent<'_>, now: &str) -> Value {
    let package = event.package();
    let package_id = package["id"].as_str().unwrap_or_default();
    let mut body = Map::new();
    body.insert("id".into(), json!(uuid::Uuid::new_v4().to_string()));
    body.insert("notificationType".into(), json!(event.notification_type()));
    body.insert("subscriptionId".into(), json!(subscription.id));
    body.insert("timeStamp".into(), json!(time_stamp(now)));
    body.insert("vnfPkgId".into(), json!(package_id));
    body.insert("vnfdId".into(), package["vnfdId"].clone());
    if let Some(change_type) = event.change_type() {
        body.insert("changeType".into(), json!(change_type));
    }
    // Clause 9.5.2.9: present if changeType is OP_STATE_CHANGE, absent otherwise.
    if let PkgEvent::OperationalStateChanged { .. } = event {
        body.insert("operationalState".into(), package["operationalState"].clone());
    }
    body.insert(
        "_links".into(),
        json!({
            "vnfPackage": href(&links.package(package_id)),
            "subscription": href(&links.pkgm_subscription(&subscription.id)),
        }),
    );
    Value::Object(body)
}

/// Writes one outbox row per matching package subscription that hears `project` (the
/// package's; [`crate::tenancy::hears`]). Call inside the transaction of the change.
/// Returns how many were queued.
pub fn enqueue(conn: &mut AnyConnection, links: &Links, project: &str, event: PkgEvent<'_>) -> DbResult<usize> {
    let now = crate::now();
    let mut queued = 0;
    for subscription in pkgm_subscriptions::all(conn)? {
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

    fn package() -> Value {
        json!({"id": "p1", "vnfdId": "d1", "vnfProvider": "P", "vnfProductName": "N", "vnfSoftwareVersion": "1.0",
               "vnfdVersion": "2.0", "onboardingState": "ONBOARDED", "operationalState": "DISABLED",
               "usageState": "NOT_IN_USE"})
    }

    fn subscription() -> PkgmSubscriptionRecord {
        PkgmSubscriptionRecord {
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
    fn filters_select_package_events() {
        let package = package();
        let onboarded = PkgEvent::Onboarded { package: &package };
        let changed = PkgEvent::OperationalStateChanged { package: &package };
        assert!(matches(&Value::Null, &onboarded));
        assert!(matches(&json!({}), &changed));
        assert!(matches(&json!({"notificationTypes": [ONBOARDING_NOTIFICATION]}), &onboarded));
        assert!(!matches(&json!({"notificationTypes": [ONBOARDING_NOTIFICATION]}), &changed));
        assert!(matches(&json!({"notificationTypes": []}), &changed), "an empty list matches everything");
        assert!(matches(&json!({"vnfdId": ["x", "d1"], "vnfPkgId": ["p1"]}), &changed));
        assert!(!matches(&json!({"vnfdId": ["x"]}), &changed));
        assert!(!matches(&json!({"vnfPkgId": ["p2"]}), &changed));
        assert!(matches(&json!({"operationalState": ["DISABLED"], "usageState": ["NOT_IN_USE"]}), &changed));
        assert!(!matches(&json!({"operationalState": ["ENABLED"]}), &changed));
        assert!(!matches(&json!({"usageState": ["IN_USE"]}), &changed));
        let providers = json!({"vnfProductsFromProviders": [{"vnfProvider": "P", "vnfProducts": [
            {"vnfProductName": "N", "versions": [{"vnfSoftwareVersion": "1.0", "vnfdVersions": ["2.0"]}]}]}]});
        assert!(matches(&providers, &onboarded));
        let other = json!({"vnfProductsFromProviders": [{"vnfProvider": "Q"}]});
        assert!(!matches(&other, &onboarded));
    }

    #[test]
    fn notifications_follow_sol005_v2_6_1() {
        let links = Links::new("http://nfvo/");
        let mut package = package();
        let now = "2026-11-24T10:00:01.123456Z";
        let body = build(&links, &subscription(), &PkgEvent::Onboarded { package: &package }, now);
        assert_eq!(body["notificationType"], ONBOARDING_NOTIFICATION);
        assert_eq!(body["timeStamp"], "2026-11-24T10:00:01Z");
        assert_eq!((&body["vnfPkgId"], &body["vnfdId"]), (&json!("p1"), &json!("d1")));
        assert!(body.get("changeType").is_none() && body.get("operationalState").is_none());
        assert_eq!(body["_links"]["vnfPackage"]["href"], "http://nfvo/vnfpkgm/v1/vnf_packages/p1");
        assert_eq!(body["_links"]["subscription"]["href"], "http://nfvo/vnfpkgm/v1/subscriptions/s1");

        package["operationalState"] = json!("ENABLED");
        let body = build(&links, &subscription(), &PkgEvent::OperationalStateChanged { package: &package }, now);
        assert_eq!((&body["changeType"], &body["operationalState"]), (&json!("OP_STATE_CHANGE"), &json!("ENABLED")));
        let deleted = build(&links, &subscription(), &PkgEvent::Deleted { package: &package }, now);
        assert_eq!(deleted["changeType"], "PKG_DELETE");
        assert!(deleted.get("operationalState").is_none(), "only with OP_STATE_CHANGE");
        assert_ne!(deleted["id"], body["id"]);
    }
}
