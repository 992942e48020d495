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
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use solgate_db::AnyConnection;
use solgate_db::repo::vnfpm::{self, PmRecord, ReportRecord};

use super::criteria::{self, Metric};
use super::records::{CrossingState, PmJob, ReportReference, Threshold};
use super::rules::{VnfpmSettings, crossing_bounds};
use super::{CROSSING_KEY, Crossing, LAST_REPORTED_KEY, REPORTS_KEY, set_private};
use crate::CoreError;
use crate::links::Links;
use crate::notify::outbox::{document, time_stamp, wake};

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
#[derive(Debug, Clone, Copy)]
struct Reading<'a> {
    index: usize,
    object: &'a str,
    sub: Option<&'a str>,
    metric: &'a str,
    value: f64,
}

/// A reading with when it was measured and the job or threshold it names.
type Named<'a> = (Option<DateTime<Utc>>, &'a str, Reading<'a>);

/// The firing alerts of `function_type`, each naming its owner with the label `owner`.
/// Malformed alerts are refused here, before anything is read or written.
fn readings<'a>(alerts: &'a [PmAlert], function_type: &str, owner: &str) -> Result<Vec<Named<'a>>, CoreError> {
    let mut wanted = Vec::new();
    for alert in alerts {
        if alert.label("function_type") != Some(function_type) || !alert.firing {
            continue;
        }
        let index = alert.index;
        let owner_id = required(alert, index, owner)?;
        let object = required(alert, index, "object_instance_id")?;
        let metric = required(alert, index, "metric")?;
        let value = measured(alert, index)?;
        let reading = Reading { index, object, sub: alert.label("sub_object_instance_id"), metric, value };
        wanted.push((alert.starts_at, owner_id, reading));
    }
    Ok(wanted)
}

/// One webhook message being recorded: what it changed and which alerts it refuses.
struct Pass<'a> {
    links: &'a Links,
    now: DateTime<Utc>,
    now_text: String,
    outcome: Outcome,
    refused: Vec<String>,
}

impl<'a> Pass<'a> {
    fn new(links: &'a Links, now: DateTime<Utc>) -> Self {
        Self { links, now, now_text: solgate_db::repo::to_text(now), outcome: Outcome::default(), refused: Vec::new() }
    }

    fn refuse(&mut self, index: usize, what: &str) {
        self.refused.push(format!("/alerts/{index}: {what}"));
    }

    /// The message's outcome, or its refusal: one refused alert refuses it all (the
    /// caller's transaction rolls back what was written).
    fn finish(self) -> Result<Outcome, CoreError> {
        if !self.refused.is_empty() {
            return Err(refuse(self.refused));
        }
        if self.outcome.notifications > 0 {
            wake();
        }
        Ok(self.outcome)
    }
}

/// One entry of a PerformanceReport (SOL003 clause 6.5.2.10).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportEntry<'a> {
    /// The measurement (`object|sub-object|metric`), for `lastReported`.
    #[serde(skip)]
    key: String,
    object_type: &'a Option<String>,
    object_instance_id: &'a str,
    performance_metric: &'a str,
    performance_values: [PerformanceValue; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_object_instance_id: Option<&'a str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PerformanceValue {
    time_stamp: String,
    value: Value,
}

#[derive(Debug, Serialize)]
struct PerformanceReport<'e, 'a> {
    entries: &'e [ReportEntry<'a>],
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
    let mut by_job: BTreeMap<&str, Vec<Reading<'_>>> = BTreeMap::new();
    for (_, job_id, reading) in readings(alerts, VNFPM, "job_id")? {
        by_job.entry(job_id).or_default().push(reading);
    }
    let mut pass = Pass::new(links, now);
    for (job_id, readings) in by_job {
        let found = if vnfpm::lock_job(conn, job_id)? { vnfpm::find_job(conn, job_id)? } else { None };
        let Some(record) = found else {
            let unknown = readings.iter().map(|reading| format!("/alerts/{} names no PM job {job_id}", reading.index));
            pass.refused.extend(unknown);
            continue;
        };
        report(conn, &mut pass, settings, record, &readings)?;
    }
    pass.finish()
}

/// The entries one job's readings make: those it measures, not reported less than a
/// reporting period ago, before its `reportingBoundary`; the others refused.
fn entries<'j>(
    pass: &mut Pass<'_>,
    settings: &VnfpmSettings,
    job: &'j PmJob,
    readings: &[Reading<'j>],
) -> Vec<ReportEntry<'j>> {
    let metrics = criteria::check_pm_job(job).map(|(_, metrics)| metrics).unwrap_or_default();
    let period = job.criteria.reporting_period.and_then(|period| i64::try_from(period).ok()).unwrap_or_default();
    let margin = i64::try_from(settings.reporting_period_margin_secs).unwrap_or(i64::MAX);
    let boundary = job.criteria.reporting_boundary.as_deref().and_then(solgate_sol013::parse_datetime);
    let now = pass.now;
    let mut entries: Vec<ReportEntry<'j>> = Vec::new();
    for &Reading { index, object, sub, metric: metric_name, value } in readings {
        let refusal = if job.object_instance_ids.iter().any(|id| id == object) {
            sub.filter(|sub| !job.sub_object_instance_ids.iter().any(|id| id == sub))
                .map(|sub| format!("does not measure sub-object {sub}"))
        } else {
            Some(format!("does not measure VNF instance {object}"))
        };
        let metric = metrics.iter().find(|metric| metric.name == metric_name);
        let refusal = refusal.or_else(|| metric.is_none().then(|| format!("does not measure {metric_name}")));
        if let Some(what) = refusal {
            pass.refuse(index, &format!("PM job {} {what}", job.id));
            continue;
        }
        let Some(metric) = metric else { continue };
        pass.outcome.used += 1;
        if boundary.is_some_and(|boundary| now > boundary) {
            continue;
        }
        let key = format!("{object}|{}|{metric_name}", sub.unwrap_or_default());
        let recent = job
            .private
            .last_reported
            .get(&key)
            .and_then(Value::as_str)
            .and_then(solgate_sol013::parse_datetime)
            .is_some_and(|last| last + chrono::Duration::seconds(period.saturating_sub(margin)) >= now);
        // The same measurement twice in one message counts once.
        if recent || entries.iter().any(|entry| entry.key == key) {
            continue;
        }
        entries.push(ReportEntry {
            key,
            object_type: &job.object_type,
            object_instance_id: object,
            performance_metric: metric_name,
            performance_values: [PerformanceValue {
                time_stamp: time_stamp(&pass.now_text),
                value: reported(metric, value),
            }],
            sub_object_instance_id: sub,
        });
    }
    entries
}

/// Stores the report of one job's readings (if they make one), keeps the newest
/// `max_reports_per_job`, and queues its notifications.
fn report(
    conn: &mut AnyConnection,
    pass: &mut Pass<'_>,
    settings: &VnfpmSettings,
    mut record: PmRecord,
    readings: &[Reading<'_>],
) -> Result<(), CoreError> {
    let job = PmJob::of(&record);
    let entries = entries(pass, settings, &job, readings);
    if entries.is_empty() {
        return Ok(());
    }
    let now_text = pass.now_text.clone();
    let mut last_reported = job.private.last_reported.clone();
    for entry in &entries {
        last_reported.insert(entry.key.clone(), json!(now_text));
    }
    let report = ReportRecord {
        id: solgate_db::new_id(),
        job_id: record.id.clone(),
        ready_time: now_text.clone(),
        body: document(&PerformanceReport { entries: &entries }),
    };
    vnfpm::insert_report(conn, &report)?;
    let mut references = job.private.reports.clone();
    references.push(ReportReference { id: report.id.clone(), ready_time: time_stamp(&now_text) });
    let keep = settings.max_reports_per_job.max(1);
    if references.len() > keep {
        let dropped: Vec<String> = references.drain(..references.len() - keep).map(|reference| reference.id).collect();
        vnfpm::delete_reports(conn, &dropped)?;
    }
    set_private(&mut record.body, REPORTS_KEY, document(&references));
    set_private(&mut record.body, LAST_REPORTED_KEY, Value::Object(last_reported));
    vnfpm::update_job(conn, &record)?;
    pass.outcome.stored += 1;
    pass.outcome.notifications += notify_report(conn, pass.links, &job, &report.id, &entries, &now_text)?;
    Ok(())
}

/// One notification per object instance the report covers.
fn notify_report(
    conn: &mut AnyConnection,
    links: &Links,
    job: &PmJob,
    report_id: &str,
    entries: &[ReportEntry<'_>],
    now: &str,
) -> Result<usize, CoreError> {
    let mut objects: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for entry in entries {
        let subs = objects.entry(entry.object_instance_id).or_default();
        if let Some(sub) = entry.sub_object_instance_id
            && !subs.iter().any(|known| known == sub)
        {
            subs.push(sub.to_owned());
        }
    }
    for (object, subs) in &objects {
        let body = super::report_notification(links, job, report_id, object, subs, now);
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
    let mut wanted = readings(alerts, VNFPM_THRESHOLD, "threshold_id")?;
    // In the order the values were measured: a message may carry both sides' alerts.
    wanted.sort_by_key(|(starts_at, ..)| *starts_at);
    let mut pass = Pass::new(links, now);
    for (_, threshold_id, reading) in wanted {
        cross(conn, &mut pass, threshold_id, reading)?;
    }
    pass.finish()
}

/// Why a threshold does not watch what a reading measured, if it does not.
fn unwatched(threshold: &Threshold, reading: &Reading<'_>, metric: Option<&Metric>) -> Option<String> {
    let id = &threshold.id;
    if threshold.object_instance_id.as_deref() != Some(reading.object) {
        return Some(format!("threshold {id} does not watch VNF instance {}", reading.object));
    }
    if let Some(sub) = reading.sub.filter(|sub| !threshold.sub_object_instance_ids.iter().any(|id| id == sub)) {
        return Some(format!("threshold {id} does not watch sub-object {sub}"));
    }
    metric.is_none().then(|| format!("threshold {id} does not watch {}", reading.metric))
}

/// Records one threshold reading: its crossing state, and a notification if it crossed.
fn cross(
    conn: &mut AnyConnection,
    pass: &mut Pass<'_>,
    threshold_id: &str,
    reading: Reading<'_>,
) -> Result<(), CoreError> {
    let found =
        if vnfpm::lock_threshold(conn, threshold_id)? { vnfpm::find_threshold(conn, threshold_id)? } else { None };
    let Some(mut record) = found else {
        pass.refuse(reading.index, &format!("names no threshold {threshold_id}"));
        return Ok(());
    };
    let threshold = Threshold::of(&record);
    let metric = criteria::check_pm_threshold(&threshold).ok().map(|(_, metric)| metric);
    let metric = metric.filter(|metric| metric.name == reading.metric);
    if let Some(why) = unwatched(&threshold, &reading, metric.as_ref()) {
        pass.refuse(reading.index, &why);
        return Ok(());
    }
    let Some(metric) = metric else { return Ok(()) };
    pass.outcome.used += 1;
    let limits = threshold.limits();
    let key = reading.sub.unwrap_or_default().to_owned();
    let mut states = threshold.private.crossing.clone();
    let last =
        states.get(&key).and_then(|state| CrossingState::deserialize(state).ok()).and_then(|state| state.direction);
    let crossed = side(reading.value, limits.threshold_value, limits.hysteresis)
        .filter(|direction| last.as_deref() != Some(*direction));
    let shown = reported(&metric, reading.value);
    let state = CrossingState {
        direction: crossed.map(str::to_owned).or(last),
        value: shown.clone(),
        at: pass.now_text.clone(),
    };
    states.insert(key, document(&state));
    set_private(&mut record.body, CROSSING_KEY, Value::Object(states));
    vnfpm::update_threshold(conn, &record)?;
    if let Some(direction) = crossed {
        let crossing = Crossing {
            direction,
            sub_object: reading.sub.map(str::to_owned),
            metric: reading.metric.to_owned(),
            value: shown,
        };
        let body = super::crossing_notification(pass.links, &threshold, &crossing, &pass.now_text);
        super::enqueue(conn, &record.id, &body)?;
        pass.outcome.stored += 1;
        pass.outcome.notifications += 1;
    }
    Ok(())
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
