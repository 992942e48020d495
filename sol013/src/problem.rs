//! ProblemDetails (RFC 7807 as profiled by SOL013: `status` and `detail` are mandatory).

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// Content type of an error body (RFC 7807 clause 3; SOL013 clause 6.4).
/// python-tackerclient decodes it like `application/json`.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Members defined by RFC 7807; an extension member may not reuse them.
const RESERVED: [&str; 5] = ["type", "title", "status", "detail", "instance"];

/// A SOL013 ProblemDetails body.
///
/// Serialises as `type, title, status, detail, instance` (absent options skipped) followed
/// by the extension members. Extensions named like a standard member are never written, so
/// a stray `extensions["status"]` cannot produce a body with two `status` keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProblemDetails {
    /// URI of the problem type; absent means `about:blank`.
    #[serde(rename = "type", default)]
    pub r#type: Option<String>,
    /// Short, occurrence-independent summary; SOL013 requires it when `type` is present and
    /// not `about:blank`.
    #[serde(default)]
    pub title: Option<String>,
    /// The HTTP status code of this occurrence.
    pub status: u16,
    /// Human-readable explanation of this occurrence; python-tackerclient prints exactly this.
    pub detail: String,
    /// URI identifying this occurrence.
    #[serde(default)]
    pub instance: Option<String>,
    /// Additional members (RFC 7807 §3.2).
    #[serde(flatten)]
    pub extensions: Map<String, Value>,
}

impl Serialize for ProblemDetails {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(r#type) = &self.r#type {
            map.serialize_entry("type", r#type)?;
        }
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        map.serialize_entry("status", &self.status)?;
        map.serialize_entry("detail", &self.detail)?;
        if let Some(instance) = &self.instance {
            map.serialize_entry("instance", instance)?;
        }
        for (key, value) in &self.extensions {
            if !RESERVED.contains(&key.as_str()) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl ProblemDetails {
    /// A problem with the given status and detail; `title` is the status's reason phrase
    /// (`"Bad Request"` for 400), as Tacker sends it, or absent for an unregistered code.
    pub fn new(status: u16, detail: impl Into<String>) -> Self {
        Self {
            r#type: None,
            title: reason_phrase(status).map(str::to_owned),
            status,
            detail: detail.into(),
            instance: None,
            extensions: Map::new(),
        }
    }
}

/// The reason phrase of an HTTP status code used by NFV-SOL APIs (RFC 9110 / RFC 6585
/// wording), `None` for codes solgate never sends.
pub fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        410 => "Gone",
        412 => "Precondition Failed",
        413 => "Payload Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialises_in_rfc7807_order_and_skips_absent_members() {
        let problem = ProblemDetails::new(400, "filter parse error");
        assert_eq!(
            serde_json::to_string(&problem).unwrap(),
            r#"{"title":"Bad Request","status":400,"detail":"filter parse error"}"#
        );
    }

    #[test]
    fn title_defaults_to_the_reason_phrase() {
        assert_eq!(ProblemDetails::new(404, "x").title.as_deref(), Some("Not Found"));
        assert_eq!(ProblemDetails::new(409, "x").title.as_deref(), Some("Conflict"));
        assert_eq!(ProblemDetails::new(422, "x").title.as_deref(), Some("Unprocessable Entity"));
        assert_eq!(ProblemDetails::new(500, "x").title.as_deref(), Some("Internal Server Error"));
        assert_eq!(ProblemDetails::new(406, "x").status, 406);
        assert_eq!(ProblemDetails::new(599, "x").title, None);
        assert_eq!(reason_phrase(415), Some("Unsupported Media Type"));
        assert_eq!(reason_phrase(200), None);
    }

    #[test]
    fn all_members_and_extensions_are_written() {
        let problem = ProblemDetails {
            r#type: Some("https://solgate.example/problems/operation-in-progress".into()),
            title: Some("Operation in progress".into()),
            instance: Some("/vnflcm/v2/vnf_lcm_op_occs/123".into()),
            extensions: [("requestId".to_owned(), json!("req-1")), ("status".to_owned(), json!(200))]
                .into_iter()
                .collect(),
            ..ProblemDetails::new(409, "Other LCM operation of vnfInstance a is in progress.")
        };
        assert_eq!(
            serde_json::to_string(&problem).unwrap(),
            concat!(
                r#"{"type":"https://solgate.example/problems/operation-in-progress","#,
                r#""title":"Operation in progress","status":409,"#,
                r#""detail":"Other LCM operation of vnfInstance a is in progress.","#,
                r#""instance":"/vnflcm/v2/vnf_lcm_op_occs/123","requestId":"req-1"}"#
            )
        );
    }

    #[test]
    fn reserved_names_in_the_public_extension_map_are_not_written_twice() {
        let mut problem = ProblemDetails::new(400, "x");
        problem.extensions.insert("status".into(), json!(500));
        problem.extensions.insert("detail".into(), json!("other"));
        let body = serde_json::to_value(&problem).unwrap();
        assert_eq!(body, json!({"title": "Bad Request", "status": 400, "detail": "x"}));
    }

    #[test]
    fn deserialises_with_unknown_members_as_extensions() {
        let problem: ProblemDetails = serde_json::from_value(json!({
            "status": 406, "detail": "Version 9.9.9 not supported.", "requestId": "r"
        }))
        .unwrap();
        assert_eq!(problem.status, 406);
        assert_eq!(problem.title, None);
        assert_eq!(problem.r#type, None);
        assert_eq!(problem.extensions.get("requestId"), Some(&json!("r")));
        let round: ProblemDetails = serde_json::from_str(&serde_json::to_string(&problem).unwrap()).unwrap();
        assert_eq!(round, problem);
    }

    #[test]
    fn status_and_detail_are_mandatory_when_reading() {
        assert!(serde_json::from_value::<ProblemDetails>(json!({"title": "Bad Request", "status": 400})).is_err());
        assert!(serde_json::from_value::<ProblemDetails>(json!({"detail": "x"})).is_err());
    }
}
