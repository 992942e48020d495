//! `POST /alert`: alerts labelled `function_type: vnffm` raise and clear VNF FM alarms, as
//! Tacker's `PrometheusPluginFm` reads them:
//!
//! - labels `vnf_instance_id` (the VNF instance, `managedObjectId`), `perceived_severity`
//!   (PerceivedSeverityType) and `event_type` (EventType) are required;
//! - the VNFCs concerned (`vnfcInstanceIds`) come from `vnfc_info_id` (a VNFC's
//!   `vnfcResourceInfo` id, or its SOL002 `vnfcInfo` id as Tacker names it) or `pod` (a regular
//!   expression matched from the start of each VNFC's compute resource id, as Tacker matches pod
//!   names); `vnfcInstanceIds` lists their `vnfcResourceInfo` ids, the VNFC ids a SOL003 client
//!   sees (and a heal request takes); when exactly one VNFC is named, `rootCauseFaultyResource`
//!   is its compute resource (COMPUTE);
//! - annotations `probable_cause`, `fault_type` and `fault_details` fill `probableCause`,
//!   `faultType` and `faultDetails` (with the fingerprint, in Tacker's `fingerprint: ...` form);
//! - a firing alert raises one alarm per fingerprint until it is resolved (repeats change
//!   nothing); a resolved alert clears its alarm (`alarmClearedTime` = its `endsAt`).
//!
//! One request is one transaction: a firing alert that names an unknown instance or a VNFC the
//! instance does not have refuses the whole request (422, each such alert named) and nothing
//! is stored; so does a malformed one (400). A resolved alert whose alarm is gone (or never
//! was) changes nothing. Alerts of other `function_type`s are left alone.

use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use serde_json::{Value, json};
use solgate_core::fm::{NewAlarm, Raised};
use solgate_db::repo::lcm::InstanceRecord;
use solgate_db::{AnyConnection, write_transaction};

use super::instance::{InstanceView, VnfcResource};
use super::payload::{self, Alert, AlertStatus, PERCEIVED_SEVERITIES, VNFFM};
use super::{Webhook, find_instance};
use crate::error::{ApiError, ApiResult};
use crate::sol013::JsonBody;
use crate::state::AppState;

/// SOL003 clause 7.5.4.4 EventType.
const EVENT_TYPES: &[&str] =
    &["COMMUNICATIONS_ALARM", "PROCESSING_ERROR_ALARM", "ENVIRONMENTAL_ALARM", "QOS_ALARM", "EQUIPMENT_ALARM"];

/// Failures listed in one 422 at most.
const MAX_LISTED: usize = 10;

/// What one request changed.
#[derive(Debug, Default)]
struct Outcome {
    raised: usize,
    repeated: usize,
    cleared: usize,
    nothing_to_clear: usize,
}

/// POST /alert
pub async fn alert(state: web::Data<AppState>, req: HttpRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    state.webhooks.admit(Webhook::FaultManagement, &req)?;
    let body = JsonBody::from_request(&req, &mut payload.into_inner()).await?.0;
    let alerts: Vec<(usize, Alert)> =
        payload::parse(body)?.into_iter().enumerate().filter(|(_, alert)| alert.function_type() == VNFFM).collect();
    for (index, alert) in &alerts {
        check_labels(*index, alert)?;
    }
    if alerts.is_empty() {
        return Ok(HttpResponse::NoContent().finish());
    }
    let links = state.links.clone();
    let outcome = state.db(move |conn| write_transaction(conn, |conn| apply(conn, &links, &alerts))).await?;
    tracing::info!(
        raised = outcome.raised,
        repeated = outcome.repeated,
        cleared = outcome.cleared,
        nothing_to_clear = outcome.nothing_to_clear,
        "Alertmanager's fault alerts handled"
    );
    Ok(HttpResponse::NoContent().finish())
}

/// The labels an FM alert must carry, with their values (400 naming the first that fails).
fn check_labels(index: usize, alert: &Alert) -> ApiResult<()> {
    let at = |label: &str| format!("/alerts/{index}/labels/{label}");
    if alert.label("vnf_instance_id").is_none() {
        return Err(ApiError::bad_request(format!(
            "{}: a vnffm alert must name its VNF instance",
            at("vnf_instance_id")
        )));
    }
    if alert.status == AlertStatus::Resolved {
        return Ok(());
    }
    for (label, allowed) in [("perceived_severity", PERCEIVED_SEVERITIES), ("event_type", EVENT_TYPES)] {
        match alert.label(label) {
            Some(value) if allowed.contains(&value) => {}
            Some(value) => {
                return Err(ApiError::bad_request(format!(
                    "{}: '{value}' is not one of {}",
                    at(label),
                    allowed.join(", ")
                )));
            }
            None => {
                return Err(ApiError::bad_request(format!(
                    "{}: a firing vnffm alert needs it (one of {})",
                    at(label),
                    allowed.join(", ")
                )));
            }
        }
    }
    if let Some(pattern) = alert.label("pod") {
        pod_pattern(pattern).map_err(|error| ApiError::bad_request(format!("{}: {error}", at("pod"))))?;
    }
    Ok(())
}

/// Tacker matches `pod` with Python's `re.match`: from the start of the id. Bounded in size;
/// Rust's regular expressions match in linear time.
fn pod_pattern(pattern: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(&format!("^(?:{pattern})"))
        .size_limit(1 << 20)
        .build()
        .map_err(|error| format!("not a regular expression: {error}"))
}

fn apply(
    conn: &mut AnyConnection,
    links: &solgate_core::links::Links,
    alerts: &[(usize, Alert)],
) -> ApiResult<Outcome> {
    let mut outcome = Outcome::default();
    let mut refused = Vec::new();
    for (index, alert) in alerts {
        let instance_id = alert.label("vnf_instance_id").unwrap_or_default();
        let found = find_instance(conn, instance_id)?;
        match alert.status {
            AlertStatus::Resolved => {
                let cleared_at = alert.ends_at.unwrap_or_else(chrono::Utc::now);
                let instance = found.as_ref().map(|(_, record)| &record.body);
                match solgate_core::fm::clear(
                    conn,
                    links,
                    instance_id,
                    &alert.fingerprint,
                    &date_time(cleared_at),
                    instance,
                )? {
                    Some(_) => outcome.cleared += 1,
                    None => outcome.nothing_to_clear += 1,
                }
            }
            AlertStatus::Firing => {
                let Some((major, instance)) = found else {
                    refused.push(format!(
                        "alert {index} (fingerprint {}) names VNF instance {instance_id}, which does not exist",
                        alert.fingerprint
                    ));
                    continue;
                };
                let (vnfc_instance_ids, root_cause) = match vnfcs(alert, &instance) {
                    Ok(found) => found,
                    Err(reason) => {
                        refused.push(format!("alert {index} (fingerprint {}) {reason}", alert.fingerprint));
                        continue;
                    }
                };
                let mut fault_details = vec![format!("fingerprint: {}", alert.fingerprint)];
                if let Some(detail) = alert.annotation("fault_details") {
                    fault_details.push(format!("detail: {detail}"));
                }
                let fault = NewAlarm {
                    instance_id: instance_id.to_owned(),
                    instance_major: major.number(),
                    vnfc_instance_ids,
                    root_cause_faulty_resource: root_cause,
                    perceived_severity: alert.label("perceived_severity").unwrap_or_default().to_owned(),
                    event_type: alert.label("event_type").unwrap_or_default().to_owned(),
                    event_time: date_time(alert.starts_at),
                    fault_type: alert.annotation("fault_type").map(str::to_owned),
                    probable_cause: alert.annotation("probable_cause").unwrap_or_default().to_owned(),
                    fault_details,
                    fingerprint: alert.fingerprint.clone(),
                };
                match solgate_core::fm::raise(conn, links, &fault, &instance.project, &instance.body)? {
                    Raised::New(_) => outcome.raised += 1,
                    Raised::AlreadyActive(_) => outcome.repeated += 1,
                }
            }
        }
    }
    if refused.is_empty() {
        return Ok(outcome);
    }
    let more = refused.len().saturating_sub(MAX_LISTED);
    let mut detail = refused.into_iter().take(MAX_LISTED).collect::<Vec<_>>().join("; ");
    if more > 0 {
        detail.push_str(&format!("; and {more} more"));
    }
    // Returning the error rolls the whole request back: nothing is stored.
    Err(ApiError::unprocessable(format!("No alarm was stored: {detail}.")))
}

/// SOL013 DateTime of an alert's time.
fn date_time(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// The VNFCs (`vnfcResourceInfo` ids) an alert names on an instance, and the FaultyResourceInfo
/// of the one VNFC it names; `Err` with the reason when it names VNFCs the instance does not have.
fn vnfcs(alert: &Alert, instance: &InstanceRecord) -> Result<(Vec<String>, Option<Value>), String> {
    let info = InstanceView::of(&instance.body).instantiated_vnf_info;
    let resources = &info.vnfc_resource_info;
    // A VNFC is named by its vnfcResourceInfo id or by the id of its vnfcInfo (SOL002, Tacker).
    let names = |resource: &VnfcResource, id: &str| {
        resource.id == id
            || info.vnfc_info.iter().any(|entry| entry.vnfc_resource_info_id == resource.id && entry.id == id)
    };
    let mut named: Vec<&VnfcResource> = Vec::new();
    if let Some(id) = alert.label("vnfc_info_id") {
        match resources.iter().find(|resource| names(resource, id)) {
            Some(resource) => named.push(resource),
            None => return Err(format!("names VNFC {id}, which VNF instance {} does not have", instance.id)),
        }
    }
    if let Some(pattern) = alert.label("pod") {
        let pattern = pod_pattern(pattern)?;
        let pod = |resource: &&VnfcResource| {
            let id = resource.compute_resource.as_ref().and_then(|compute| compute.resource_id.as_deref());
            id.is_some_and(|id| pattern.is_match(id))
        };
        let matched: Vec<&VnfcResource> = resources.iter().filter(pod).collect();
        if matched.is_empty() {
            return Err(format!(
                "names pod {}, which matches no VNFC of VNF instance {}",
                pattern.as_str(),
                instance.id
            ));
        }
        for resource in matched {
            if !named.iter().any(|known| known.id == resource.id) {
                named.push(resource);
            }
        }
    }
    let root_cause = match named.as_slice() {
        [VnfcResource { compute_resource: Some(compute), .. }] => {
            Some(json!({"faultyResource": compute, "faultyResourceType": "COMPUTE"}))
        }
        _ => None,
    };
    let ids = named.into_iter().map(|resource| resource.id.clone()).collect();
    Ok((ids, root_cause))
}
