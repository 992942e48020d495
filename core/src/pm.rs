//! VNF performance management (SOL003 clause 6, `/vnfpm/v2`): what PM jobs and thresholds
//! may measure ([`criteria`]), the Prometheus rules that measure it ([`rules`]), and what
//! becomes of Alertmanager's webhooks ([`events`]): performance reports, threshold crossings
//! and their notifications, written in one transaction with the notification outbox rows
//! that carry them to the job's or threshold's `callbackUri` (delivered by the conductor's
//! notifier like every other notification).
//!
//! A PM job or threshold is stored as its document without `_links`; its private part
//! ([`PRIVATE_KEY`]) holds the API version it was created with (its notifications are
//! rendered for it), a job's report references and the time each of its measurements was
//! last reported, and a threshold's crossing state per sub-object.

pub mod criteria;
pub mod events;
pub mod rules;

use serde_json::{Map, Value, json};
use solgate_db::repo::notifications;
use solgate_db::repo::vnfpm::{self, PmRecord};
use solgate_db::{AnyConnection, DbResult};

use crate::PRIVATE_KEY;
use crate::links::{Links, href};

/// The only major of the PM API.
pub const MAJOR: u64 = 2;

pub const PERFORMANCE_INFORMATION_AVAILABLE: &str = "PerformanceInformationAvailableNotification";
pub const THRESHOLD_CROSSED: &str = "ThresholdCrossedNotification";

/// Private keys of a job's or threshold's document.
pub const REPORTS_KEY: &str = "reports";
pub const LAST_REPORTED_KEY: &str = "lastReported";
pub const CROSSING_KEY: &str = "crossing";

/// Sets `key` of a stored document's private part (created when absent).
pub fn set_private(body: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = body {
        let private = map.entry(PRIVATE_KEY).or_insert_with(|| json!({}));
        if !private.is_object() {
            *private = json!({});
        }
        if let Value::Object(private) = private {
            private.insert(key.to_owned(), value);
        }
    }
}

/// A PmJob as clients see it, without `_links`: the stored document with its `reports`
/// (href and readyTime of each report kept), private parts removed.
pub fn job_document(links: &Links, record: &PmRecord) -> Value {
    let mut document = crate::without_private(record.body.clone());
    let reports: Vec<Value> = record.body[PRIVATE_KEY][REPORTS_KEY]
        .as_array()
        .into_iter()
        .flatten()
        .map(|report| {
            json!({
                "href": links.pm_report(&record.id, report["id"].as_str().unwrap_or_default()),
                "readyTime": report["readyTime"],
            })
        })
        .collect();
    if !reports.is_empty()
        && let Value::Object(map) = &mut document
    {
        map.insert("reports".into(), Value::Array(reports));
    }
    document
}

/// PmJob `_links`: itself and the VNF instances it measures (SOL003 clause 6.5.2.7).
pub fn job_links(links: &Links, record: &PmRecord) -> Value {
    let objects: Vec<Value> = record.body["objectInstanceIds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|id| href(&links.instance(MAJOR, id)))
        .collect();
    let mut map = Map::new();
    map.insert("self".into(), href(&links.pm_job(&record.id)));
    if !objects.is_empty() {
        map.insert("objects".into(), Value::Array(objects));
    }
    Value::Object(map)
}

/// Threshold `_links`: itself and the VNF instance it watches (clause 6.5.2.9).
pub fn threshold_links(links: &Links, record: &PmRecord) -> Value {
    let mut map = Map::new();
    map.insert("self".into(), href(&links.threshold(&record.id)));
    if let Some(instance) = record.body["objectInstanceId"].as_str() {
        map.insert("object".into(), href(&links.instance(MAJOR, instance)));
    }
    Value::Object(map)
}

/// A notification's `timeStamp`: SOL013 DateTime, seconds as clients (and Tacker) show them.
fn time_stamp(now: &str) -> String {
    crate::notify::time_stamp(now)
}

/// PerformanceInformationAvailableNotification (clause 6.5.2.5) of a new report, one per
/// measured object instance it reports on (as Tacker sends them). `subObjectInstanceIds`
/// only when the job measures a subset of sub-objects (the clause: absent otherwise).
pub fn report_notification(
    links: &Links,
    job: &PmRecord,
    report_id: &str,
    object_instance: &str,
    sub_objects: &[String],
    now: &str,
) -> Value {
    let mut body = Map::new();
    body.insert("id".into(), json!(uuid::Uuid::new_v4().to_string()));
    body.insert("notificationType".into(), json!(PERFORMANCE_INFORMATION_AVAILABLE));
    body.insert("timeStamp".into(), json!(time_stamp(now)));
    body.insert("pmJobId".into(), json!(job.id));
    body.insert("objectType".into(), job.body["objectType"].clone());
    body.insert("objectInstanceId".into(), json!(object_instance));
    let measured_subset = job.body["subObjectInstanceIds"].as_array().is_some_and(|ids| !ids.is_empty());
    if measured_subset && !sub_objects.is_empty() {
        body.insert("subObjectInstanceIds".into(), json!(sub_objects));
    }
    body.insert(
        "_links".into(),
        json!({
            "objectInstance": href(&links.instance(MAJOR, object_instance)),
            "pmJob": href(&links.pm_job(&job.id)),
            "performanceReport": href(&links.pm_report(&job.id, report_id)),
        }),
    );
    Value::Object(body)
}

/// What a threshold crossing reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    pub direction: &'static str,
    pub sub_object: Option<String>,
    pub metric: String,
    pub value: Value,
}

/// ThresholdCrossedNotification (clause 6.5.2.4).
pub fn crossing_notification(links: &Links, threshold: &PmRecord, crossing: &Crossing, now: &str) -> Value {
    let instance = threshold.body["objectInstanceId"].as_str().unwrap_or_default();
    let mut body = Map::new();
    body.insert("id".into(), json!(uuid::Uuid::new_v4().to_string()));
    body.insert("notificationType".into(), json!(THRESHOLD_CROSSED));
    body.insert("timeStamp".into(), json!(time_stamp(now)));
    body.insert("thresholdId".into(), json!(threshold.id));
    body.insert("crossingDirection".into(), json!(crossing.direction));
    body.insert("objectType".into(), threshold.body["objectType"].clone());
    body.insert("objectInstanceId".into(), json!(instance));
    if let Some(sub) = &crossing.sub_object {
        body.insert("subObjectInstanceId".into(), json!(sub));
    }
    body.insert("performanceMetric".into(), json!(crossing.metric));
    body.insert("performanceValue".into(), crossing.value.clone());
    body.insert(
        "_links".into(),
        json!({
            "objectInstance": href(&links.instance(MAJOR, instance)),
            "threshold": href(&links.threshold(&threshold.id)),
        }),
    );
    Value::Object(body)
}

/// Queues a notification for a PM job or threshold (its id is the "subscription" of the
/// outbox row). Call inside the transaction of the change.
pub fn enqueue(conn: &mut AnyConnection, owner_id: &str, body: &Value) -> DbResult<()> {
    notifications::enqueue_for(conn, vnfpm::API, owner_id, MAJOR, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(body: Value) -> PmRecord {
        PmRecord {
            id: "j1".into(),
            body,
            authentication: None,
            created_at: String::new(),
            updated_at: String::new(),
            project: String::new(),
        }
    }

    #[test]
    fn documents_show_reports_and_links_but_nothing_private() {
        let links = Links::new("http://vnfm");
        let job = record(json!({"id": "j1", "objectType": "Vnf", "objectInstanceIds": ["i1"], "_solgate": {
            "version": "2.1.0", "reports": [{"id": "r1", "readyTime": "2026-11-26T10:00:00Z"}], "lastReported": {}}}));
        let shown = job_document(&links, &job);
        assert_eq!(
            shown["reports"],
            json!([{"href": "http://vnfm/vnfpm/v2/pm_jobs/j1/reports/r1", "readyTime": "2026-11-26T10:00:00Z"}])
        );
        assert!(shown.get("_solgate").is_none());
        assert_eq!(job_links(&links, &job)["objects"][0]["href"], "http://vnfm/vnflcm/v2/vnf_instances/i1");
        let fresh = record(json!({"id": "j1", "objectInstanceIds": []}));
        assert!(job_document(&links, &fresh).get("reports").is_none(), "absent, never empty or null");
        assert!(job_links(&links, &fresh).get("objects").is_none());
        let mut body = json!({"id": "x", "_solgate": "junk"});
        set_private(&mut body, "version", json!("2.1.0"));
        assert_eq!(body["_solgate"], json!({"version": "2.1.0"}));
    }

    #[test]
    fn notifications_carry_their_links() {
        let links = Links::new("http://vnfm");
        let job = record(json!({"objectType": "Vnfc", "subObjectInstanceIds": ["c1"]}));
        let body = report_notification(&links, &job, "r1", "i1", &["c1".to_owned()], "2026-11-26T10:00:00.123456Z");
        assert_eq!(body["timeStamp"], "2026-11-26T10:00:00Z");
        assert_eq!(body["subObjectInstanceIds"], json!(["c1"]));
        assert_eq!(body["_links"]["performanceReport"]["href"], "http://vnfm/vnfpm/v2/pm_jobs/j1/reports/r1");
        let whole = record(json!({"objectType": "Vnf"}));
        assert!(
            report_notification(&links, &whole, "r1", "i1", &["c1".to_owned()], "x")
                .get("subObjectInstanceIds")
                .is_none()
        );
        let threshold = record(json!({"objectType": "Vnf", "objectInstanceId": "i1"}));
        let crossing = Crossing { direction: "UP", sub_object: None, metric: "m".into(), value: json!(0.9) };
        let body = crossing_notification(&links, &threshold, &crossing, "x");
        assert_eq!((&body["crossingDirection"], &body["performanceValue"]), (&json!("UP"), &json!(0.9)));
        assert_eq!(body["_links"]["threshold"]["href"], "http://vnfm/vnfpm/v2/thresholds/j1");
        assert!(body.get("subObjectInstanceId").is_none());
    }
}
