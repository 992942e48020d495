//! VNF Fault Management (SOL003 clause 7, API 1.x) under `/vnffm/v1`: alarms (raised and cleared
//! from Alertmanager's alerts, see [`crate::alerts`]; listed, read and acknowledged here) and FM
//! subscriptions, whose notifications the conductor's delivery worker sends like every other.

pub mod alarms;
pub mod subscriptions;

use solgate_core::links::paths;
use solgate_schemas::Api;

use crate::routes::endpoint::Body::{Array, Schema};
use crate::routes::endpoint::{ApiTables, Endpoint, Table};
use crate::{api_versions, openapi};

/// The api_versions of every major (Tacker's v1 rule names), and the table of `/vnffm/v1`.
pub fn tables() -> ApiTables {
    let all = api_versions::all_majors(Api::Vnffm, |resource, action| {
        format!("os_nfv_orchestration_api:{resource}:{action}")
    });
    ApiTables { all, majors: vec![table()] }
}

/// Tacker's FM rule names (`api/policies/vnffm_v1.py`): one namespace; subscription
/// operations are `subscription_create`, `subscription_list`, ...
fn naming(_resource: &str, action: &str) -> String {
    format!("os_nfv_orchestration_api_v2:vnf_fault_monitor:{action}")
}

fn table() -> Table {
    let rows = vec![
        api_versions::row(),
        openapi::row(),
        Endpoint::get(paths::ALARMS, "index", |route| route.to(alarms::list::list))
            .doc("Query alarms", 200)
            .returns(Array("Alarm")),
        Endpoint::get(paths::ALARM, "show", |route| route.to(alarms::show::show))
            .doc("Read an alarm", 200)
            .returns(Schema("Alarm"))
            .headers(&["ETag"]),
        Endpoint::patch(paths::ALARM, "update", |route| route.to(alarms::modify::modify))
            .doc("Acknowledge an alarm", 200)
            .merge_patch("AlarmModifications")
            .returns(Schema("AlarmModifications"))
            .headers(&["ETag"]),
        Endpoint::get(paths::SUBSCRIPTIONS, "subscription_list", |route| route.to(subscriptions::list::list))
            .doc("Query subscriptions", 200)
            .returns(Array("FmSubscription")),
        Endpoint::post(paths::SUBSCRIPTIONS, "subscription_create", |route| route.to(subscriptions::create::create))
            .doc("Subscribe (303 to an identical subscription)", 201)
            .request("FmSubscriptionRequest")
            .returns(Schema("FmSubscription"))
            .headers(&["Location"]),
        Endpoint::get(paths::SUBSCRIPTION, "subscription_show", |route| route.to(subscriptions::show::show))
            .doc("Read a subscription", 200)
            .returns(Schema("FmSubscription"))
            .headers(&["ETag"]),
        Endpoint::delete(paths::SUBSCRIPTION, "subscription_delete", |route| route.to(subscriptions::delete::delete))
            .doc("Terminate a subscription", 204),
    ];
    Table::major(Api::Vnffm, 1, naming, rows)
}
