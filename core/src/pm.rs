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
pub mod records;
pub mod rules;

use serde::Serialize;
use serde_json::{Value, json};
use solgate_db::repo::notifications;
use solgate_db::repo::vnfpm::{self, PmRecord};
use solgate_db::{AnyConnection, DbResult};

use self::records::{PmJob, Threshold};
use crate::PRIVATE_KEY;
use crate::links::{Links, href};
use crate::notify::outbox::{Head, document};

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

/// PmJob `reports` as clients see them (clause 6.5.2.7).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ShownReport<'a> {
    href: String,
    ready_time: &'a str,
}

/// A PmJob as clients see it, without `_links`: the stored document with its `reports`
/// (href and readyTime of each report kept), private parts removed.
pub fn job_document(links: &Links, record: &PmRecord) -> Value {
    let job = PmJob::of(record);
    let mut shown = crate::without_private(record.body.clone());
    let reports: Vec<ShownReport<'_>> = job
        .private
        .reports
        .iter()
        .map(|report| ShownReport { href: links.pm_report(&record.id, &report.id), ready_time: &report.ready_time })
        .collect();
    if !reports.is_empty()
        && let Value::Object(map) = &mut shown
    {
        map.insert("reports".into(), document(&reports));
    }
    shown
}

/// PmJob `_links` (clause 6.5.2.7) and Threshold `_links` (clause 6.5.2.9).
#[derive(Debug, Serialize)]
struct PmLinks {
    #[serde(rename = "self")]
    itself: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    objects: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Value>,
}

/// PmJob `_links`: itself and the VNF instances it measures (SOL003 clause 6.5.2.7).
pub fn job_links(links: &Links, record: &PmRecord) -> Value {
    let job = PmJob::of(record);
    let objects = job.object_instance_ids.iter().map(|id| href(&links.instance(MAJOR, id))).collect();
    document(&PmLinks { itself: href(&links.pm_job(&record.id)), objects, object: None })
}

/// Threshold `_links`: itself and the VNF instance it watches (clause 6.5.2.9).
pub fn threshold_links(links: &Links, record: &PmRecord) -> Value {
    let threshold = Threshold::of(record);
    let object = threshold.object_instance_id.map(|instance| href(&links.instance(MAJOR, &instance)));
    document(&PmLinks { itself: href(&links.threshold(&record.id)), objects: Vec::new(), object })
}

/// PerformanceInformationAvailableNotification (clause 6.5.2.5).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PerformanceInformationAvailableNotification<'a> {
    #[serde(flatten)]
    head: Head,
    pm_job_id: &'a str,
    object_type: &'a Option<String>,
    object_instance_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_object_instance_ids: Option<&'a [String]>,
    #[serde(rename = "_links")]
    links: ReportLinks,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportLinks {
    object_instance: Value,
    pm_job: Value,
    performance_report: Value,
}

/// PerformanceInformationAvailableNotification of a new report, one per measured object
/// instance it reports on (as Tacker sends them). `subObjectInstanceIds` only when the job
/// measures a subset of sub-objects (the clause: absent otherwise).
pub fn report_notification(
    links: &Links,
    job: &PmJob,
    report_id: &str,
    object_instance: &str,
    sub_objects: &[String],
    now: &str,
) -> Value {
    let measured_subset = !job.sub_object_instance_ids.is_empty();
    document(&PerformanceInformationAvailableNotification {
        head: Head::new(PERFORMANCE_INFORMATION_AVAILABLE, None, now),
        pm_job_id: &job.id,
        object_type: &job.object_type,
        object_instance_id: object_instance,
        sub_object_instance_ids: (measured_subset && !sub_objects.is_empty()).then_some(sub_objects),
        links: ReportLinks {
            object_instance: href(&links.instance(MAJOR, object_instance)),
            pm_job: href(&links.pm_job(&job.id)),
            performance_report: href(&links.pm_report(&job.id, report_id)),
        },
    })
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
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ThresholdCrossedNotification<'a> {
    #[serde(flatten)]
    head: Head,
    threshold_id: &'a str,
    crossing_direction: &'static str,
    object_type: &'a Option<String>,
    object_instance_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_object_instance_id: Option<&'a str>,
    performance_metric: &'a str,
    performance_value: &'a Value,
    #[serde(rename = "_links")]
    links: CrossingLinks,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CrossingLinks {
    object_instance: Value,
    threshold: Value,
}

/// ThresholdCrossedNotification of a crossing.
pub fn crossing_notification(links: &Links, threshold: &Threshold, crossing: &Crossing, now: &str) -> Value {
    let instance = threshold.object_instance_id.as_deref().unwrap_or_default();
    document(&ThresholdCrossedNotification {
        head: Head::new(THRESHOLD_CROSSED, None, now),
        threshold_id: &threshold.id,
        crossing_direction: crossing.direction,
        object_type: &threshold.object_type,
        object_instance_id: instance,
        sub_object_instance_id: crossing.sub_object.as_deref(),
        performance_metric: &crossing.metric,
        performance_value: &crossing.value,
        links: CrossingLinks {
            object_instance: href(&links.instance(MAJOR, instance)),
            threshold: href(&links.threshold(&threshold.id)),
        },
    })
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
        let body = report_notification(
            &links,
            &PmJob::of(&job),
            "r1",
            "i1",
            &["c1".to_owned()],
            "2026-11-26T10:00:00.123456Z",
        );
        assert_eq!(body["timeStamp"], "2026-11-26T10:00:00Z");
        assert_eq!(body["subObjectInstanceIds"], json!(["c1"]));
        assert_eq!(body["_links"]["performanceReport"]["href"], "http://vnfm/vnfpm/v2/pm_jobs/j1/reports/r1");
        let whole = record(json!({"objectType": "Vnf"}));
        assert!(
            report_notification(&links, &PmJob::of(&whole), "r1", "i1", &["c1".to_owned()], "x")
                .get("subObjectInstanceIds")
                .is_none()
        );
        let threshold = record(json!({"objectType": "Vnf", "objectInstanceId": "i1"}));
        let crossing = Crossing { direction: "UP", sub_object: None, metric: "m".into(), value: json!(0.9) };
        let body = crossing_notification(&links, &Threshold::of(&threshold), &crossing, "x");
        assert_eq!((&body["crossingDirection"], &body["performanceValue"]), (&json!("UP"), &json!(0.9)));
        assert_eq!(body["_links"]["threshold"]["href"], "http://vnfm/vnfpm/v2/thresholds/j1");
        assert!(body.get("subObjectInstanceId").is_none());
    }
}
