//! JSON request bodies under the SOL013 rules: `Content-Type` must be JSON (PATCH may
//! use JSON Merge Patch) → else 415; larger than the configured limit → 413; empty
//! where a body is required → 400; not JSON → 400. All as ProblemDetails.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::{Method, header};
use actix_web::{FromRequest, HttpRequest, web};
use bytes::BytesMut;
use futures_util::StreamExt;
use serde_json::Value;

use crate::error::{ApiError, ErrorKind};
use crate::state::AppState;

/// A required JSON body.
#[derive(Debug)]
pub struct JsonBody(pub Value);

/// A JSON body that may be absent (e.g. retry/rollback/fail, where the real client sends
/// no body and no `Content-Type`).
#[derive(Debug)]
pub struct OptionalJsonBody(pub Option<Value>);

impl FromRequest for JsonBody {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move {
            match read_json(&req, payload).await? {
                Some(value) => Ok(JsonBody(value)),
                None => Err(ApiError::bad_request("Request body is missing.")),
            }
        })
    }
}

impl FromRequest for OptionalJsonBody {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move { read_json(&req, payload).await.map(OptionalJsonBody) })
    }
}

fn body_limit(req: &HttpRequest) -> usize {
    req.app_data::<web::Data<AppState>>().map(|state| state.http.max_body_bytes).unwrap_or(1024 * 1024)
}

/// Is `content_type` acceptable for a JSON body of a request with this method?
fn json_content_type_allowed(method: &Method, content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (method == Method::PATCH && essence == "application/merge-patch+json")
}

/// Reads the body; `Ok(None)` when there is none.
pub(crate) async fn read_body_bytes(req: &HttpRequest, mut payload: Payload) -> Result<BytesMut, ApiError> {
    let limit = body_limit(req);
    let too_large = || {
        ApiError::new(ErrorKind::PayloadTooLarge, format!("The request body is larger than the allowed {limit} bytes."))
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let mut body = BytesMut::with_capacity(declared.map_or(0, |length| length as usize));
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|error| ApiError::bad_request(format!("Could not read the request body: {error}")))?;
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn read_json(req: &HttpRequest, payload: Payload) -> Result<Option<Value>, ApiError> {
    let body = read_body_bytes(req, payload).await?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    // A missing Content-Type on a non-empty body is read as JSON, as Tacker does.
    if let Some(content_type) = req.headers().get(header::CONTENT_TYPE) {
        let text = content_type.to_str().unwrap_or("<non-ASCII>");
        if !json_content_type_allowed(req.method(), text) {
            return Err(ApiError::new(
                ErrorKind::UnsupportedMediaType,
                format!("Content type '{text}' specified in 'Content-Type' header is not allowed."),
            ));
        }
    }
    let value: Value = serde_json::from_slice(&body)
        .map_err(|error| ApiError::bad_request(format!("Malformed request body: {error}.")))?;
    if let Some(pointer) = nul_at(&value, &mut String::new()) {
        return Err(ApiError::bad_request(format!(
            "The request body has a NUL character (U+0000) at {pointer}; no attribute may contain one."
        )));
    }
    Ok(Some(value))
}

/// The JSON pointer of the first string or member name with a NUL character. One rule on
/// both backends: PostgreSQL text cannot hold NUL, so no stored text may (other control
/// characters are stored and matched alike by SQLite and PostgreSQL).
fn nul_at(value: &Value, path: &mut String) -> Option<String> {
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1").replace('\0', "\\u0000");
    match value {
        Value::String(text) if text.contains('\0') => Some(if path.is_empty() { "/".to_owned() } else { path.clone() }),
        Value::Object(map) => map.iter().find_map(|(key, inner)| {
            let length = path.len();
            path.push('/');
            path.push_str(&escape(key));
            let found = if key.contains('\0') { Some(path.clone()) } else { nul_at(inner, path) };
            path.truncate(length);
            found
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(index, inner)| {
            let length = path.len();
            path.push_str(&format!("/{index}"));
            let found = nul_at(inner, path);
            path.truncate(length);
            found
        }),
        _ => None,
    }
}
