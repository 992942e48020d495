//! The SOL013 layer: one middleware in front of every route. For resources under
//! `/{apiName}` it checks `Accept` (406) and `Version` (400/406), hands the handler a
//! [`Negotiated`] version, and puts `Version`, `Accept-Ranges`, `Deprecation` and
//! `Sunset` on every response, errors included. For every request it assigns the request
//! id, turns a panicking handler into a 500 ProblemDetails, records metrics and writes
//! the access log line.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, ResponseError, web};
use chrono::{DateTime, Utc};
use futures_util::FutureExt;
use solgate_schemas::{ApiVersionId, NegotiationError, VersionEntry};

use super::accept;
use super::negotiated::Negotiated;
use super::request_id;
use super::scope::{self, Classified, RequestScope, ScopeKind};
use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;

const VERSION: HeaderName = HeaderName::from_static("version");
const DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
const SUNSET: HeaderName = HeaderName::from_static("sunset");

pub async fn sol013_layer(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let started = Instant::now();
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Ok(req.into_response(ApiError::internal(anyhow::anyhow!("AppState missing")).error_response()));
    };
    let request_id = request_id::from_headers_or_new(req.headers());
    let method = req.method().clone();

    // Authentication first: an unauthenticated client learns nothing of versions.
    let principal = match state.auth.authenticate(&req).await {
        Ok(principal) => principal,
        Err(error) => {
            let response = request_id::scope(request_id.clone(), async { error.error_response() }).await;
            let response = req.into_response(response);
            tracing::info!(target: "solgate::access", request_id = %request_id, method = %method,
                path = %response.request().path(), status = response.status().as_u16(), "refused by [auth]");
            return Ok(response);
        }
    };
    // Every request that may change something gets an audit line, with its principal.
    let audited = (!matches!(method, Method::GET | Method::HEAD)).then(|| principal.clone());
    if let Some(principal) = principal {
        req.extensions_mut().insert(principal);
    }
    // No clone of the HttpRequest may live across `next.call`: routing needs it unshared.
    let (mut response, used) = match prepare(&req, &state) {
        Err(refusal) => {
            let (error, used) = *refusal;
            let response = request_id::scope(request_id.clone(), async { error.error_response() }).await;
            (req.into_response(response), used)
        }
        Ok(negotiated) => {
            let used = negotiated.as_ref().map(|n| n.entry.clone());
            if let Some(negotiated) = negotiated {
                req.extensions_mut().insert(negotiated);
            }
            let response = request_id::scope(request_id.clone(), next.call(req)).await?;
            (response.map_into_boxed_body(), used)
        }
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        headers.insert(HeaderName::from_static(request_id::HEADER), value);
    }
    let version_label = match &used {
        Some(entry) => {
            decorate(headers, entry);
            entry.version_string()
        }
        None => String::new(),
    };

    if state.http.validate_responses
        && let Some(entry) = &used
    {
        response = validate_response(&state, entry, &request_id, response).await;
    }
    record(&state, &response, &method, &request_id, &version_label, started, audited);
    Ok(response)
}

/// The metrics of a response, its access log line and, for a request that may change
/// something, its audit line with the principal.
fn record(
    state: &AppState,
    response: &ServiceResponse<BoxBody>,
    method: &Method,
    request_id: &str,
    version_label: &str,
    started: Instant,
    audited: Option<Option<Principal>>,
) {
    let status = response.status().as_u16();
    let http_request = response.request();
    let route = state.metrics.route(http_request);
    let elapsed = started.elapsed();
    state.metrics.observe(&route, method.as_str(), status, version_label, elapsed.as_secs_f64());
    tracing::info!(
        target: "solgate::access",
        request_id = %request_id,
        method = %method,
        path = %http_request.path(),
        status,
        version = %version_label,
        micros = elapsed.as_micros() as u64,
    );
    if let Some(principal) = audited {
        let (client, project) =
            principal.map(|p| (p.client_id, p.project)).unwrap_or_else(|| ("anonymous".into(), String::new()));
        tracing::info!(
            target: "solgate::audit",
            request_id = %request_id,
            principal = %client,
            project = %project,
            method = %method,
            path = %http_request.path(),
            status,
        );
    }
}

/// `[http] validate_responses`: checks a JSON body against the negotiated version's schema
/// for its route ([`super::responses`]); a violation is logged and counted, the response is
/// sent as it is.
async fn validate_response(
    state: &AppState,
    entry: &VersionEntry,
    request_id: &str,
    response: ServiceResponse<BoxBody>,
) -> ServiceResponse<BoxBody> {
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|kind| kind.contains("json"));
    let request = response.request().clone();
    let Some(shape) = super::responses::shape(request.method(), request.path(), response.status().as_u16()) else {
        return response;
    };
    if !json {
        return response;
    }
    let (http_response, body) = response.into_parts().1.into_parts();
    let bytes = match actix_web::body::to_bytes(body).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return ServiceResponse::new(
                request,
                ApiError::internal(anyhow::anyhow!("response body unreadable")).error_response(),
            );
        }
    };
    let verdict = serde_json::from_slice::<serde_json::Value>(&bytes)
        .map_err(|error| format!("not JSON: {error}"))
        .and_then(|body| super::responses::check(entry, shape, &body));
    if let Err(violation) = verdict {
        let route = state.metrics.route(&request);
        state.metrics.schema_violation(&route, request.method().as_str(), &entry.version_string());
        tracing::error!(request_id, method = %request.method(), path = %request.path(),
            version = %entry.version_string(), %violation, "response violates its schema");
    }
    ServiceResponse::new(request, http_response.set_body(BoxBody::new(bytes)))
}

/// Turns a panicking handler into a 500 ProblemDetails, so the client gets an answer and
/// the worker keeps serving. Wrapped around each resource (after routing), because the
/// request must be kept to build the response.
pub async fn catch_panics(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let http_request = req.request().clone();
    match AssertUnwindSafe(next.call(req)).catch_unwind().await {
        Ok(result) => result.map(ServiceResponse::map_into_boxed_body),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_owned());
            let error = ApiError::internal(anyhow::anyhow!("handler panicked: {message}"));
            Ok(ServiceResponse::new(http_request, error.error_response()))
        }
    }
}

/// Headers every response of a versioned resource carries.
fn decorate(headers: &mut header::HeaderMap, entry: &VersionEntry) {
    if let Ok(value) = HeaderValue::from_str(&entry.version_string()) {
        headers.insert(VERSION, value);
    }
    if !headers.contains_key(header::ACCEPT_RANGES) {
        headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("none"));
    }
    if entry.is_deprecated {
        // RFC 9745: the header value is a structured-field date, the moment the
        // resource became deprecated.
        let since = entry.deprecated_since.map(|date| date.timestamp()).unwrap_or(0);
        if let Ok(value) = HeaderValue::from_str(&format!("@{since}")) {
            headers.insert(DEPRECATION, value);
        }
        if let Some(date) = entry.retirement_date
            && let Ok(value) = HeaderValue::from_str(&http_date(date))
        {
            headers.insert(SUNSET, value);
        }
    }
}

fn http_date(date: DateTime<Utc>) -> String {
    date.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

type Refusal = Box<(ApiError, Option<VersionEntry>)>;

/// The checks that run before routing. `Ok(None)` = not a versioned resource.
fn prepare(req: &ServiceRequest, state: &AppState) -> Result<Option<Negotiated>, Refusal> {
    let Some(scope) = scope_of(req, state)? else { return Ok(None) };
    // What error responses echo when negotiation fails: the newest version of the scope.
    let fallback = || newest_in(state, scope);
    check_accept(req);
    let header_value = match req.headers().get(VERSION) {
        None => None,
        Some(value) => match value.to_str() {
            Ok(text) => Some(text),
            Err(_) => {
                let error = NegotiationError::Malformed(solgate_schemas::VersionParseError("<non-ASCII>".into()));
                return Err(Box::new((
                    ApiError::new(crate::error::ErrorKind::BadRequest, error.to_string()),
                    fallback(),
                )));
            }
        },
    };
    let Some(entry) = negotiate(state, scope, header_value)? else {
        // Every version of this scope is retired.
        return Err(Box::new((ApiError::not_acceptable("No version of this API is supported any more."), None)));
    };
    let stored_shape = state
        .registry
        .stored_shape(scope.api, entry.major())
        .map_or_else(|| entry.dictionary.clone(), |newest| newest.dictionary.clone());
    Ok(Some(Negotiated { api: scope.api, major: entry.major(), scope_kind: scope.kind, entry, stored_shape }))
}

/// The versioned scope of the request's path; `Ok(None)` outside every API.
fn scope_of(req: &ServiceRequest, state: &AppState) -> Result<Option<RequestScope>, Refusal> {
    let registry = &state.registry;
    // No stored id holds a NUL character (U+0000): such a path names nothing, on either
    // backend (PostgreSQL could not even compare it).
    if req.path().contains("%00") || req.path().contains('\0') {
        let api = scope::classify(req.path(), registry);
        let newest = match api {
            Classified::Scoped(scope) => newest_in(state, scope),
            Classified::UnknownInApi(api) => registry.supported_all(api).last().cloned(),
            Classified::Outside => None,
        };
        return Err(Box::new((
            ApiError::not_found("The resource could not be found: its path has a NUL character."),
            newest,
        )));
    }
    match scope::classify(req.path(), registry) {
        Classified::Outside => Ok(None),
        Classified::UnknownInApi(api) => {
            let newest = registry.supported_all(api).last().cloned();
            Err(Box::new((ApiError::not_found(format!("The resource {} could not be found.", req.path())), newest)))
        }
        Classified::Scoped(scope) => Ok(Some(scope)),
    }
}

/// An `Accept` the resource cannot answer: noted for routing, which answers it once a
/// method of the resource has matched (else 405).
fn check_accept(req: &ServiceRequest) {
    if let Some(producible) = scope::producible(req.method(), req.path()) {
        let accept = req.headers().get(header::ACCEPT).map(|value| value.to_str().unwrap_or("\u{0}"));
        if accept::negotiate(accept, producible).is_none() {
            let shown = accept.unwrap_or_default();
            let detail = format!("Content type '{shown}' specified in 'Accept' header is not allowed.");
            req.extensions_mut().insert(crate::routes::NotAcceptable(detail));
        }
    }
}

/// The version the request gets; `Ok(None)` when every version of the scope is retired.
fn negotiate(
    state: &AppState,
    scope: RequestScope,
    header_value: Option<&str>,
) -> Result<Option<VersionEntry>, Refusal> {
    let registry = &state.registry;
    let fallback = || newest_in(state, scope);
    if scope.is_api_versions() {
        // api_versions: a client cannot know the version before discovering it, so
        // `Version` is optional and any well-formed value is accepted (SOL013 §4 note).
        let requested = match header_value {
            None => None,
            Some(text) => Some(text.parse::<ApiVersionId>().map_err(|error| {
                Box::new((ApiError::new(crate::error::ErrorKind::BadRequest, error.to_string()), fallback()))
            })?),
        };
        return Ok(requested
            .and_then(|id| match scope.major {
                Some(major) if id.major != major => None,
                _ => registry.find(scope.api, id).cloned(),
            })
            .or_else(fallback));
    }
    let major = scope.major.unwrap_or_default();
    match registry.negotiate(scope.api, major, header_value) {
        Ok(entry) => Ok(Some(entry.clone())),
        Err(error) => {
            let kind = match error {
                NegotiationError::NotSupported(_) => crate::error::ErrorKind::NotAcceptable,
                _ => crate::error::ErrorKind::BadRequest,
            };
            Err(Box::new((ApiError::new(kind, error.to_string()), fallback())))
        }
    }
}

fn newest_in(state: &AppState, scope: RequestScope) -> Option<VersionEntry> {
    match (scope.kind, scope.major) {
        (ScopeKind::ApiVersionsAll, _) | (_, None) => state.registry.supported_all(scope.api).last().cloned(),
        (_, Some(major)) => state.registry.newest(scope.api, major).cloned(),
    }
}
