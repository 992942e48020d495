//! VNF package management notifications (SOL005 v2.6.1 clauses 9.5.2.8 and 9.5.2.9): which
//! package subscriptions an event matches (PkgmNotificationsFilter, clause 9.5.3.4), the
//! notification each gets, and the outbox rows that carry them — written in the
//! transaction of the package change, delivered by the same worker as LCM notifications.
//!
//! Usage state changes are not notified: SOL005 v2.6.1 PackageChangeType has only
//! OP_STATE_CHANGE and PKG_DELETE, and VnfPackageChangeNotification reports changes of
//! `operationalState` and deletion only (the `usageState` filter attribute selects by the
//! package's usage state when such an event happens).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use solgate_db::repo::pkgm_subscriptions::{self, API, PkgmSubscriptionRecord};
use solgate_db::{AnyConnection, DbResult};

use super::filter::{ProviderFilter, VnfIdentity, one_of, products_match};
use super::outbox::{self, Head, Notice, Outbox, document};
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

/// What filters and notifications read of a VnfPkgInfo (SOL005 clause 9.5.2.5).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PackageFacts {
    #[serde(flatten)]
    identity: VnfIdentity,
    operational_state: Option<String>,
    usage_state: Option<String>,
}

/// A subscription's PkgmNotificationsFilter (clause 9.5.3.4): every attribute present must
/// hold; an absent or empty list matches everything.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PkgmFilter {
    notification_types: Vec<String>,
    vnf_products_from_providers: Vec<ProviderFilter>,
    vnfd_id: Vec<String>,
    vnf_pkg_id: Vec<String>,
    operational_state: Vec<String>,
    usage_state: Vec<String>,
}

/// An event with what filters and notifications read of it, read once.
struct Facts<'e> {
    event: &'e PkgEvent<'e>,
    package: PackageFacts,
}

impl<'e> Facts<'e> {
    fn of(event: &'e PkgEvent<'e>) -> Self {
        Self { event, package: PackageFacts::deserialize(event.package()).unwrap_or_default() }
    }
}

impl Notice for Facts<'_> {
    type Subscription = PkgmSubscriptionRecord;
    type Filter = PkgmFilter;

    fn outbox(&self) -> Outbox {
        Outbox { api: API, major: MAJOR }
    }

    fn selected_by(&self, filter: &PkgmFilter) -> bool {
        let package = &self.package;
        one_of(&filter.notification_types, Some(&self.event.notification_type().to_owned()))
            && products_match(&filter.vnf_products_from_providers, &package.identity)
            && one_of(&filter.vnfd_id, package.identity.vnfd_id.as_ref())
            && one_of(&filter.vnf_pkg_id, package.identity.id.as_ref())
            && one_of(&filter.operational_state, package.operational_state.as_ref())
            && one_of(&filter.usage_state, package.usage_state.as_ref())
    }

    fn notification(&self, links: &Links, subscription: &PkgmSubscriptionRecord, now: &str) -> Value {
        let package = &self.package;
        let package_id = package.identity.id.as_deref().unwrap_or_default();
        let state_changed = matches!(self.event, PkgEvent::OperationalStateChanged { .. });
        document(&PkgmNotification {
            head: Head::new(self.event.notification_type(), Some(subscription.id.as_str()), now),
            vnf_pkg_id: package_id,
            vnfd_id: &package.identity.vnfd_id,
            change_type: self.event.change_type(),
            operational_state: state_changed.then_some(&package.operational_state),
            links: PkgmLinks {
                vnf_package: href(&links.package(package_id)),
                subscription: href(&links.pkgm_subscription(&subscription.id)),
            },
        })
    }
}

/// VnfPackageOnboardingNotification (clause 9.5.2.8) and VnfPackageChangeNotification
/// (clause 9.5.2.9).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PkgmNotification<'a> {
    #[serde(flatten)]
    head: Head,
    vnf_pkg_id: &'a str,
    vnfd_id: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    change_type: Option<&'static str>,
    /// Clause 9.5.2.9: present if changeType is OP_STATE_CHANGE, absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    operational_state: Option<&'a Option<String>>,
    #[serde(rename = "_links")]
    links: PkgmLinks,
}

/// PkgmLinks (clause 9.5.3.5).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PkgmLinks {
    vnf_package: Value,
    subscription: Value,
}

/// Writes one outbox row per matching package subscription that hears `project` (the
/// package's; [`crate::tenancy::hears`]). Call inside the transaction of the change.
/// Returns how many were queued.
pub fn enqueue(conn: &mut AnyConnection, links: &Links, project: &str, event: PkgEvent<'_>) -> DbResult<usize> {
    let subscriptions = pkgm_subscriptions::all(conn)?;
    outbox::enqueue(conn, links, project, &Facts::of(&event), &subscriptions)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::notify::filter::read_filter;

    fn matches(filter: &Value, event: &PkgEvent<'_>) -> bool {
        read_filter::<PkgmFilter>(filter).is_some_and(|filter| Facts::of(event).selected_by(&filter))
    }

    fn build(links: &Links, subscription: &PkgmSubscriptionRecord, event: &PkgEvent<'_>, now: &str) -> Value {
        Facts::of(event).notification(links, subscription, now)
    }

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
