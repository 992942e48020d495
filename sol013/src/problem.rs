//! ProblemDetails (RFC 7807 as profiled by SOL013: `status` and `detail` are mandatory).

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// Content type of an error body (RFC 7807). python-tackerclient decodes it like
/// `application/json` (../shared/reference/clients.md §6).
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

    /// 400: malformed request, bad query parameters, body failing its schema.
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(400, detail)
    }

    /// 403: the consumer may not perform this request on this resource.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(403, detail)
    }

    /// 404: no current representation for the URI (never for an empty container).
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(404, detail)
    }

    /// 405: method not supported for the resource (the caller adds `Allow`).
    pub fn method_not_allowed(detail: impl Into<String>) -> Self {
        Self::new(405, detail)
    }

    /// 406: no acceptable content type, or an unsupported `Version`.
    pub fn not_acceptable(detail: impl Into<String>) -> Self {
        Self::new(406, detail)
    }

    /// 409: conflicts with the resource's state (e.g. another LCM operation in progress).
    pub fn conflict(detail: impl Into<String>) -> Self {
        Self::new(409, detail)
    }

    /// 412: a conditional request header (`If-Match`) failed.
    pub fn precondition_failed(detail: impl Into<String>) -> Self {
        Self::new(412, detail)
    }

    /// 415: a request body in a content type the resource does not take.
    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        Self::new(415, detail)
    }

    /// 422: a well-formed body that cannot be processed (unknown or disabled package, ...).
    pub fn unprocessable_entity(detail: impl Into<String>) -> Self {
        Self::new(422, detail)
    }

    /// 500: a producer-side failure; the detail must not leak internals (§16 row 19).
    pub fn internal_server_error(detail: impl Into<String>) -> Self {
        Self::new(500, detail)
    }

    /// 503: the producer or something it relies on is unavailable.
    pub fn service_unavailable(detail: impl Into<String>) -> Self {
        Self::new(503, detail)
    }

    /// Sets the problem type URI.
    pub fn with_type(mut self, r#type: impl Into<String>) -> Self {
        self.r#type = Some(r#type.into());
        self
    }

    /// Replaces the title (by default the reason phrase).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the occurrence URI.
    pub fn with_instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = Some(instance.into());
        self
    }

    /// Adds an extension member. Names of standard members are ignored (they would clash
    /// with the member of the same name).
    pub fn with_extension(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        if !RESERVED.contains(&key.as_str()) {
            self.extensions.insert(key, value.into());
        }
        self
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
        let problem = ProblemDetails::bad_request("filter parse error");
        assert_eq!(
            serde_json::to_string(&problem).unwrap(),
            r#"{"title":"Bad Request","status":400,"detail":"filter parse error"}"#
        );
    }

    #[test]
    fn title_defaults_to_the_reason_phrase() {
        assert_eq!(ProblemDetails::new(404, "x").title.as_deref(), Some("Not Found"));
        assert_eq!(ProblemDetails::conflict("x").title.as_deref(), Some("Conflict"));
        assert_eq!(ProblemDetails::unprocessable_entity("x").title.as_deref(), Some("Unprocessable Entity"));
        assert_eq!(ProblemDetails::internal_server_error("x").title.as_deref(), Some("Internal Server Error"));
        assert_eq!(ProblemDetails::not_acceptable("x").status, 406);
        assert_eq!(ProblemDetails::new(599, "x").title, None);
        assert_eq!(reason_phrase(415), Some("Unsupported Media Type"));
        assert_eq!(reason_phrase(200), None);
    }

    #[test]
    fn all_members_and_extensions_are_written() {
        let problem = ProblemDetails::conflict("Other LCM operation of vnfInstance a is in progress.")
            .with_type("https://solgate.example/problems/operation-in-progress")
            .with_title("Operation in progress")
            .with_instance("/vnflcm/v2/vnf_lcm_op_occs/123")
            .with_extension("requestId", "req-1")
            .with_extension("status", 200);
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
        let mut problem = ProblemDetails::bad_request("x");
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
