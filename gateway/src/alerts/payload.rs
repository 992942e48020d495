//! Alertmanager's webhook JSON (its `webhook_config` payload, version 4), read as Tacker's
//! Prometheus plugin schema reads it (`prometheus_plugin_schemas.AlertMessage`): `alerts`, each
//! with `status`, `labels` (`receiver_type: tacker` and a known `function_type` required),
//! `annotations`, `startsAt` and `fingerprint`. Anything else Alertmanager sends (receiver,
//! groupLabels, generatorURL, ...) is ignored. What does not fit is a 400 naming where.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};

/// `function_type` values (Tacker's plugin schema).
pub const VNFFM: &str = "vnffm";
pub const VNFPM: &str = "vnfpm";
pub const VNFPM_THRESHOLD: &str = "vnfpm_threshold";
pub const AUTO_SCALE: &str = "auto_scale";
pub const AUTO_HEAL: &str = "auto_heal";
const FUNCTION_TYPES: &[&str] = &[VNFFM, VNFPM, VNFPM_THRESHOLD, AUTO_SCALE, AUTO_HEAL];

/// SOL003 PerceivedSeverityType, the values of the `perceived_severity` label.
pub const PERCEIVED_SEVERITIES: &[&str] = &["CRITICAL", "MAJOR", "MINOR", "WARNING", "INDETERMINATE", "CLEARED"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    Firing,
    Resolved,
}

/// One alert.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub status: AlertStatus,
    pub labels: BTreeMap<String, String>,
    /// Values as text (Tacker's schema lets `value` be a number).
    pub annotations: BTreeMap<String, String>,
    pub starts_at: DateTime<Utc>,
    /// When it was resolved; absent (or Alertmanager's zero time) while it fires.
    pub ends_at: Option<DateTime<Utc>>,
    /// Alertmanager's identity of the alert's label set: one alarm per fingerprint at a time.
    pub fingerprint: String,
}

impl Alert {
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels.get(name).map(String::as_str).filter(|value| !value.is_empty())
    }

    pub fn annotation(&self, name: &str) -> Option<&str> {
        self.annotations.get(name).map(String::as_str)
    }

    pub fn function_type(&self) -> &str {
        self.label("function_type").unwrap_or_default()
    }
}

#[derive(Deserialize)]
struct RawMessage {
    alerts: Vec<RawAlert>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAlert {
    status: AlertStatus,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, Value>,
    starts_at: String,
    #[serde(default)]
    ends_at: Option<String>,
    fingerprint: String,
}

fn malformed(detail: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("Not an Alertmanager webhook message: {detail}"))
}

fn time(at: &str, text: &str) -> ApiResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|time| time.with_timezone(&Utc))
        .map_err(|error| malformed(format!("{at}: '{text}' is not an RFC 3339 date-time ({error})")))
}

/// Reads a webhook body; the first thing that does not fit is a 400.
pub fn parse(body: Value) -> ApiResult<Vec<Alert>> {
    let raw: RawMessage = serde_path_to_error::deserialize(body).map_err(|error| {
        use serde_path_to_error::Segment;
        let mut at = String::new();
        for segment in error.path().iter() {
            match segment {
                Segment::Seq { index } => at.push_str(&format!("/{index}")),
                Segment::Map { key } => at.push_str(&format!("/{key}")),
                Segment::Enum { variant } => at.push_str(&format!("/{variant}")),
                Segment::Unknown => at.push_str("/?"),
            }
        }
        let at = if at.is_empty() { "/".to_owned() } else { at };
        malformed(format!("{at}: {}", error.into_inner()))
    })?;
    raw.alerts
        .into_iter()
        .enumerate()
        .map(|(index, alert)| {
            let at = |member: &str| format!("/alerts/{index}/{member}");
            for (label, allowed) in [("receiver_type", &["tacker"][..]), ("function_type", FUNCTION_TYPES)] {
                match alert.labels.get(label) {
                    None => return Err(malformed(format!("{}: the label {label} is missing", at("labels")))),
                    Some(value) if !allowed.contains(&value.as_str()) => {
                        return Err(malformed(format!(
                            "{}: '{value}' is not one of {}",
                            at(&format!("labels/{label}")),
                            allowed.join(", ")
                        )));
                    }
                    Some(_) => {}
                }
            }
            for (label, allowed) in
                [("perceived_severity", PERCEIVED_SEVERITIES), ("auto_scale_type", &["SCALE_OUT", "SCALE_IN"][..])]
            {
                if let Some(value) = alert.labels.get(label)
                    && !allowed.contains(&value.as_str())
                {
                    return Err(malformed(format!(
                        "{}: '{value}' is not one of {}",
                        at(&format!("labels/{label}")),
                        allowed.join(", ")
                    )));
                }
            }
            let annotations = alert
                .annotations
                .into_iter()
                .map(|(name, value)| match value {
                    Value::String(text) => Ok((name, text)),
                    Value::Number(number) => Ok((name, number.to_string())),
                    other => Err(malformed(format!("{}: {other} is not a string", at(&format!("annotations/{name}"))))),
                })
                .collect::<ApiResult<BTreeMap<_, _>>>()?;
            if alert.fingerprint.is_empty() {
                return Err(malformed(format!("{}: empty", at("fingerprint"))));
            }
            let starts_at = time(&at("startsAt"), &alert.starts_at)?;
            let ends_at = match alert.ends_at.as_deref() {
                None | Some("") => None,
                Some(text) => Some(time(&at("endsAt"), text)?).filter(|time| time.timestamp() > 0),
            };
            Ok(Alert {
                status: alert.status,
                labels: alert.labels,
                annotations,
                starts_at,
                ends_at,
                fingerprint: alert.fingerprint,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Tacker's sample (api-ref prometheus_plugin alert_fm.json) as Alertmanager sends it.
    fn message() -> Value {
        json!({"receiver": "solgate", "status": "firing", "version": "4", "groupKey": "{}:{}", "alerts": [{
            "status": "firing",
            "labels": {"receiver_type": "tacker", "function_type": "vnffm", "vnf_instance_id": "i1",
                "pod": "test\\-test1\\-[0-9a-f]{1,10}-[0-9a-z]{5}$", "perceived_severity": "CRITICAL",
                "event_type": "PROCESSING_ERROR_ALARM"},
            "annotations": {"probable_cause": "Server is down.", "fault_type": "Error", "value": 3.5},
            "startsAt": "2022-06-21T23:47:36.453Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus/graph",
            "fingerprint": "5ef77f1f8a3ecb8d"
        }]})
    }

    #[test]
    fn alertmanagers_message_is_read() {
        let alerts = parse(message()).unwrap();
        let alert = &alerts[0];
        assert_eq!((alert.status, alert.function_type()), (AlertStatus::Firing, VNFFM));
        assert_eq!(alert.label("vnf_instance_id"), Some("i1"));
        assert_eq!(alert.annotation("value"), Some("3.5"));
        assert_eq!(alert.starts_at.to_rfc3339(), "2022-06-21T23:47:36.453+00:00");
        assert_eq!(alert.ends_at, None, "Alertmanager's zero time means not resolved");
        let mut resolved = message();
        resolved["alerts"][0]["status"] = json!("resolved");
        resolved["alerts"][0]["endsAt"] = json!("2022-06-21T23:57:36.123456789Z");
        let alert = &parse(resolved).unwrap()[0];
        assert_eq!(alert.status, AlertStatus::Resolved);
        assert!(alert.ends_at.is_some());
    }

    #[test]
    fn what_does_not_fit_is_named() {
        let refused = |change: &dyn Fn(&mut Value)| {
            let mut body = message();
            change(&mut body);
            parse(body).unwrap_err().detail().to_owned()
        };
        assert!(refused(&|body| *body = json!([1])).contains("Not an Alertmanager webhook message"));
        assert!(refused(&|body| body.as_object_mut().unwrap().clear()).contains("alerts"));
        assert!(refused(&|body| body["alerts"][0]["status"] = json!("pending")).contains("/alerts/0/status"));
        let detail = refused(&|body| body["alerts"][0]["labels"].as_object_mut().unwrap().clear());
        assert!(detail.contains("/alerts/0/labels: the label receiver_type is missing"), "{detail}");
        let detail = refused(&|body| body["alerts"][0]["labels"]["function_type"] = json!("vnfXX"));
        assert!(detail.contains("/alerts/0/labels/function_type: 'vnfXX'"), "{detail}");
        let detail = refused(&|body| body["alerts"][0]["labels"]["perceived_severity"] = json!("BAD"));
        assert!(detail.contains("perceived_severity"), "{detail}");
        assert!(refused(&|body| body["alerts"][0]["labels"]["pod"] = json!(7)).contains("/alerts/0/labels"));
        assert!(refused(&|body| body["alerts"][0]["startsAt"] = json!("yesterday")).contains("/alerts/0/startsAt"));
        assert!(refused(&|body| body["alerts"][0]["fingerprint"] = json!("")).contains("fingerprint"));
        let detail = refused(&|body| body["alerts"][0]["annotations"]["x"] = json!({"a": 1}));
        assert!(detail.contains("/alerts/0/annotations/x"), "{detail}");
        assert!(
            refused(&|body| {
                body["alerts"][0].as_object_mut().unwrap().remove("fingerprint");
            })
            .contains("fingerprint")
        );
    }
}
