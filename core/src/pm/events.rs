//! Alertmanager's alerts for PM jobs (`/pm_event`) and thresholds (`/pm_threshold`), as
//! Tacker's Prometheus plugin reads them: the labels its rules carry
//! ([`super::rules`]) and the measured value in the `value` annotation.
//!
//! - PM jobs: the firing alerts of a webhook message make one PerformanceReport per job, an
//!   entry per alert, skipping a measurement reported less than a reporting period ago (less
//!   `[vnfpm] reporting_period_margin_secs`) and any after the job's `reportingBoundary`; each
//!   report is announced by a PerformanceInformationAvailableNotification per object
//!   instance it covers. A job keeps `[vnfpm] max_reports_per_job` reports, the newest.
//! - Thresholds: a value at or above `thresholdValue + hysteresis` crosses upwards unless the
//!   last crossing was upwards; a value at or below `thresholdValue - hysteresis` (below
//!   `thresholdValue` without hysteresis) crosses downwards unless the last crossing was
//!   downwards. Each crossing sends a ThresholdCrossedNotification. Tacker compares each value
//!   with the previous value instead, so a value that falls back into the hysteresis band and
//!   leaves it again on the same side is notified twice, which the hysteresis exists to
//!   prevent (SOL003 clause 6.5.3.4, note 2); it also treats reaching `thresholdValue +
//!   hysteresis` as not crossing, where the clause says "reaches or exceeds".
//!
//! One message is one transaction. An alert that is malformed (a label or the value missing, a
//! value that is not a number) refuses the whole message (400), and so does one that names no
//! PM job or threshold, or an object, sub-object or metric its job or threshold does not measure
//! (422, each such alert named): nothing is stored, as the FM webhook does with an alert naming
//! an unknown instance. Resolved alerts, alerts of other `function_type`s, measurements reported
//! less than a reporting period ago and alerts after a job's `reportingBoundary` change nothing.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use solgate_db::AnyConnection;
use solgate_db::repo::vnfpm::{self, PmRecord, ReportRecord};

use super::criteria::{self, Metric};
use super::rules::{VnfpmSettings, crossing_bounds};
use super::{Crossing, LAST_REPORTED_KEY, REPORTS_KEY, set_private};
use crate::links::Links;
use crate::{CoreError, PRIVATE_KEY};

/// `function_type` of PM job alerts.
pub const VNFPM: &str = "vnfpm";
/// `function_type` of threshold alerts.
pub const VNFPM_THRESHOLD: &str = "vnfpm_threshold";

/// One alert of a webhook message, as the webhooks hand it over.
#[derive(Debug, Clone, PartialEq)]
pub struct PmAlert {
    /// Its position in the message (`/alerts/{index}`).
    pub index: usize,
    pub firing: bool,
    pub labels: BTreeMap<String, String>,
    /// The `value` annotation.
    pub value: Option<String>,
    pub starts_at: Option<DateTime<Utc>>,
}

impl PmAlert {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels.get(name).map(String::as_str).filter(|value| !value.is_empty())
    }
}

/// What a webhook message changed.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    /// Alerts that became report entries or crossings.
    pub used: usize,
    /// Reports stored (jobs) or crossings found (thresholds).
    pub stored: usize,
    pub notifications: usize,
}

/// Alerts named in one refusal at most.
const MAX_LISTED: usize = 10;

/// Alerts that name what no job or threshold measures: the message is refused (422).
fn refuse(refused: Vec<String>) -> CoreError {
    let more = refused.len().saturating_sub(MAX_LISTED);
    let mut detail = refused.into_iter().take(MAX_LISTED).collect::<Vec<_>>().join("; ");
    if more > 0 {
        detail.push_str(&format!("; and {more} more"));
    }
    CoreError::Unprocessable(format!("Nothing was stored: {detail}."))
}

fn malformed(index: usize, detail: &str) -> CoreError {
    CoreError::BadRequest(format!("/alerts/{index}: {detail}"))
}

fn required<'a>(alert: &'a PmAlert, index: usize, name: &str) -> Result<&'a str, CoreError> {
    alert.label(name).ok_or_else(|| malformed(index, &format!("the label {name} is required.")))
}

/// The `value` annotation as a number (Prometheus writes `{{ $value }}` as a decimal or in
/// exponent notation); NaN and infinities cannot be reported.
fn measured(alert: &PmAlert, index: usize) -> Result<f64, CoreError> {
    let text = alert.value.as_deref().ok_or_else(|| malformed(index, "the annotation value is required."))?;
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .ok_or_else(|| malformed(index, &format!("the annotation value {text:?} is not a finite number.")))
}

/// A value as its measurement's unit has it: counts (bytes, packets) as integers, ratios as
/// numbers.
fn reported(metric: &Metric, value: f64) -> Value {
    if metric.is_count() && value.abs() < 9.0e15 {
        // Rounded first: the cast saturates and the bound above keeps it exact.
        #[allow(clippy::cast_possible_truncation)]
        return json!(value.round() as i64);
    }
    json!(value)
}

/// What one alert measured.
struct Reading<'a> {
    index: usize,
    object: &'a str,
    sub: Option<&'a str>,
    metric: &'a str,
    value: f64,
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// Reads the PM job alerts of a message, stores their reports and queues their
/// notifications. Call inside a write transaction: an `Err` must roll everything back.
pub fn record_reports(
    conn: &mut AnyConnection,
    links: &Links,
    settings: &VnfpmSettings,
    alerts: &[PmAlert],
    now: DateTime<Utc>,
) -> Result<Outcome, CoreError> {
    // Malformed alerts first: refused before anything is read or written.
    let mut wanted = Vec::new();
    for alert in alerts {
        if alert.label("function_type") != Some(VNFPM) || !alert.firing {
            continue;
        }
        let index = alert.index;
        let job_id = required(alert, index, "job_id")?;
        let object = required(alert, index, "object_instance_id")?;
        let metric = required(alert, index, "metric")?;
        let value = measured(alert, index)?;
        wanted.push((job_id, Reading { index, object, sub: alert.label("sub_object_instance_id"), metric, value }));
    }
    let mut outcome = Outcome::default();
    let mut refused = Vec::new();
    let mut by_job: BTreeMap<&str, Vec<Reading<'_>>> = BTreeMap::new();
    for (job_id, reading) in wanted {
        by_job.entry(job_id).or_default().push(reading);
    }
    let now_text = solgate_db::repo::to_text(now);
    for (job_id, alerts) in by_job {
        let found = if vnfpm::lock_job(conn, job_id)? { vnfpm::find_job(conn, job_id)? } else { None };
        let Some(mut job) = found else {
            refused.extend(alerts.iter().map(|reading| format!("/alerts/{} names no PM job {job_id}", reading.index)));
            continue;
        };
        let metrics = criteria::check_job(&crate::without_private(job.body.clone()))
            .map(|(_, metrics)| metrics)
            .unwrap_or_default();
        let period = job.body["criteria"]["reportingPeriod"].as_i64().unwrap_or_default();
        let margin = i64::try_from(settings.reporting_period_margin_secs).unwrap_or(i64::MAX);
        let boundary = job.body["criteria"]["reportingBoundary"].as_str().and_then(solgate_sol013::parse_datetime);
        let objects = strings(&job.body["objectInstanceIds"]);
        let sub_objects = strings(&job.body["subObjectInstanceIds"]);
        let mut last_reported = job.body[PRIVATE_KEY][LAST_REPORTED_KEY].as_object().cloned().unwrap_or_default();
        let mut entries: Vec<Value> = Vec::new();
        for Reading { index, object, sub, metric: metric_name, value } in alerts {
            let mut refuse_alert = |what: String| refused.push(format!("/alerts/{index}: PM job {job_id} {what}"));
            if !objects.contains(&object) {
                refuse_alert(format!("does not measure VNF instance {object}"));
                continue;
            }
            if let Some(sub) = sub.filter(|sub| !sub_objects.contains(sub)) {
                refuse_alert(format!("does not measure sub-object {sub}"));
                continue;
            }
            let Some(metric) = metrics.iter().find(|metric| metric.name == metric_name) else {
                refuse_alert(format!("does not measure {metric_name}"));
                continue;
            };
            outcome.used += 1;
            if boundary.is_some_and(|boundary| now > boundary) {
                continue;
            }
            let key = format!("{object}|{}|{metric_name}", sub.unwrap_or_default());
            let recent = last_reported
                .get(&key)
                .and_then(Value::as_str)
                .and_then(solgate_sol013::parse_datetime)
                .is_some_and(|last| last + chrono::Duration::seconds(period.saturating_sub(margin)) >= now);
            // The same measurement twice in one message counts once.
            if recent || entries.iter().any(|entry| entry["_key"] == key) {
                continue;
            }
            let mut entry = json!({
                "_key": key,
                "objectType": job.body["objectType"],
                "objectInstanceId": object,
                "performanceMetric": metric_name,
                "performanceValues": [{"timeStamp": crate::notify::time_stamp(&now_text), "value": reported(metric, value)}],
            });
            if let Some(sub) = sub {
                entry["subObjectInstanceId"] = json!(sub);
            }
            entries.push(entry);
        }
        if entries.is_empty() {
            continue;
        }
        for entry in &mut entries {
            if let (Some(key), Value::Object(map)) = (entry["_key"].as_str().map(str::to_owned), &mut *entry) {
                last_reported.insert(key, json!(now_text));
                map.shift_remove("_key");
            }
        }
        let report = ReportRecord {
            id: solgate_db::new_id(),
            job_id: job.id.clone(),
            ready_time: now_text.clone(),
            body: json!({ "entries": entries }),
        };
        vnfpm::insert_report(conn, &report)?;
        let mut references: Vec<Value> = job.body[PRIVATE_KEY][REPORTS_KEY].as_array().cloned().unwrap_or_default();
        references.push(json!({"id": report.id, "readyTime": crate::notify::time_stamp(&now_text)}));
        let keep = settings.max_reports_per_job.max(1);
        if references.len() > keep {
            let dropped: Vec<String> = references
                .drain(..references.len() - keep)
                .filter_map(|reference| reference["id"].as_str().map(str::to_owned))
                .collect();
            vnfpm::delete_reports(conn, &dropped)?;
        }
        set_private(&mut job.body, REPORTS_KEY, Value::Array(references));
        set_private(&mut job.body, LAST_REPORTED_KEY, Value::Object(last_reported));
        vnfpm::update_job(conn, &job)?;
        outcome.stored += 1;
        outcome.notifications += notify_report(conn, links, &job, &report, &now_text)?;
    }
    if !refused.is_empty() {
        return Err(refuse(refused));
    }
    if outcome.notifications > 0 {
        crate::notify::wake();
    }
    Ok(outcome)
}

/// One notification per object instance the report covers.
fn notify_report(
    conn: &mut AnyConnection,
    links: &Links,
    job: &PmRecord,
    report: &ReportRecord,
    now: &str,
) -> Result<usize, CoreError> {
    let mut objects: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for entry in report.body["entries"].as_array().into_iter().flatten() {
        let subs = objects.entry(entry["objectInstanceId"].as_str().unwrap_or_default()).or_default();
        if let Some(sub) = entry["subObjectInstanceId"].as_str()
            && !subs.iter().any(|known| known == sub)
        {
            subs.push(sub.to_owned());
        }
    }
    for (object, subs) in &objects {
        let body = super::report_notification(links, job, &report.id, object, subs, now);
        super::enqueue(conn, &job.id, &body)?;
    }
    Ok(objects.len())
}

/// Which side of a threshold a value is on, if beyond the hysteresis band.
fn side(value: f64, threshold: f64, hysteresis: f64) -> Option<&'static str> {
    let (up, down) = crossing_bounds(threshold, hysteresis);
    if value >= up {
        Some("UP")
    } else if value <= down && (hysteresis > 0.0 || value < down) {
        Some("DOWN")
    } else {
        None
    }
}

/// Reads the threshold alerts of a message, records crossings and queues their
/// notifications. Call inside a write transaction.
pub fn record_crossings(
    conn: &mut AnyConnection,
    links: &Links,
    alerts: &[PmAlert],
    now: DateTime<Utc>,
) -> Result<Outcome, CoreError> {
    let mut wanted = Vec::new();
    for alert in alerts {
        if alert.label("function_type") != Some(VNFPM_THRESHOLD) || !alert.firing {
            continue;
        }
        let index = alert.index;
        let threshold_id = required(alert, index, "threshold_id")?;
        let object = required(alert, index, "object_instance_id")?;
        let metric = required(alert, index, "metric")?;
        let value = measured(alert, index)?;
        let reading = Reading { index, object, sub: alert.label("sub_object_instance_id"), metric, value };
        wanted.push((alert.starts_at, threshold_id, reading));
    }
    // In the order the values were measured: a message may carry both sides' alerts.
    wanted.sort_by_key(|(starts_at, ..)| *starts_at);
    let now_text = solgate_db::repo::to_text(now);
    let mut outcome = Outcome::default();
    let mut refused = Vec::new();
    for (_, threshold_id, Reading { index, object, sub, metric: metric_name, value }) in wanted {
        let mut refuse_alert = |what: String| refused.push(format!("/alerts/{index}: {what}"));
        let found =
            if vnfpm::lock_threshold(conn, threshold_id)? { vnfpm::find_threshold(conn, threshold_id)? } else { None };
        let Some(mut threshold) = found else {
            refuse_alert(format!("names no threshold {threshold_id}"));
            continue;
        };
        let body = &threshold.body;
        if body["objectInstanceId"].as_str() != Some(object) {
            refuse_alert(format!("threshold {threshold_id} does not watch VNF instance {object}"));
            continue;
        }
        if let Some(sub) = sub.filter(|sub| !strings(&body["subObjectInstanceIds"]).contains(sub)) {
            refuse_alert(format!("threshold {threshold_id} does not watch sub-object {sub}"));
            continue;
        }
        let metric = criteria::check_threshold(&crate::without_private(body.clone())).ok().map(|(_, metric)| metric);
        let Some(metric) = metric.filter(|metric| metric.name == metric_name) else {
            refuse_alert(format!("threshold {threshold_id} does not watch {metric_name}"));
            continue;
        };
        outcome.used += 1;
        let details = &body["criteria"]["simpleThresholdDetails"];
        let (limit, hysteresis) = (
            details["thresholdValue"].as_f64().unwrap_or_default(),
            details["hysteresis"].as_f64().unwrap_or_default(),
        );
        let key = sub.unwrap_or_default().to_owned();
        let mut states = body[PRIVATE_KEY][super::CROSSING_KEY].as_object().cloned().unwrap_or_default();
        let last = states.get(&key).and_then(|state| state["direction"].as_str()).map(str::to_owned);
        let crossed = side(value, limit, hysteresis).filter(|direction| last.as_deref() != Some(*direction));
        let shown = reported(&metric, value);
        let direction = crossed.map(str::to_owned).or(last);
        states.insert(key, json!({"direction": direction, "value": shown, "at": now_text}));
        set_private(&mut threshold.body, super::CROSSING_KEY, Value::Object(states));
        vnfpm::update_threshold(conn, &threshold)?;
        if let Some(direction) = crossed {
            let crossing = Crossing {
                direction,
                sub_object: sub.map(str::to_owned),
                metric: metric_name.to_owned(),
                value: shown,
            };
            let body = super::crossing_notification(links, &threshold, &crossing, &now_text);
            super::enqueue(conn, &threshold.id, &body)?;
            outcome.stored += 1;
            outcome.notifications += 1;
        }
    }
    if !refused.is_empty() {
        return Err(refuse(refused));
    }
    if outcome.notifications > 0 {
        crate::notify::wake();
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_beyond_the_band_is_on_one_side() {
        assert_eq!(side(105.0, 100.0, 5.0), Some("UP"), "reaching thresholdValue + hysteresis crosses (Tacker: no)");
        assert_eq!(side(104.9, 100.0, 5.0), None);
        assert_eq!(side(95.0, 100.0, 5.0), Some("DOWN"));
        assert_eq!(side(100.0, 100.0, 0.0), Some("UP"), "without hysteresis one value is never both");
        assert_eq!(side(99.9, 100.0, 0.0), Some("DOWN"));
    }

    #[test]
    fn counts_are_integers_and_ratios_numbers() {
        let count = Metric { name: "ByteIncomingVnfIntCp".into(), measurement: "ByteIncomingVnfIntCp", instance: None };
        let ratio =
            Metric { name: "VCpuUsageMeanVnf.i".into(), measurement: "VCpuUsageMeanVnf", instance: Some("i".into()) };
        assert_eq!(reported(&count, 1.234567e6), json!(1_234_567));
        assert_eq!(reported(&ratio, 0.25), json!(0.25));
        let alert = |value: &str| PmAlert {
            index: 0,
            firing: true,
            labels: BTreeMap::new(),
            value: Some(value.into()),
            starts_at: None,
        };
        assert_eq!(measured(&alert("1.5e+06"), 0).unwrap(), 1.5e6);
        assert!(measured(&alert("NaN"), 0).is_err());
        assert!(measured(&alert("+Inf"), 0).is_err());
        assert!(measured(&alert("12 %"), 0).unwrap_err().to_string().starts_with("/alerts/0:"));
    }
}
