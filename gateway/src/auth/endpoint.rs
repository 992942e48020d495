//! `POST /oauth2/token`: the client credentials grant (RFC 6749 clause 4.4). The client
//! authenticates with HTTP Basic (clause 2.3.1, id and secret form-urlencoded) or with
//! `client_id` and `client_secret` in the form body, not both. Errors are RFC 6749
//! clause 5.2 JSON; a failed client authentication is 401 `invalid_client`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine;
use serde_json::json;

use super::policy;
use crate::state::AppState;

pub const PATH: &str = "/oauth2/token";

fn oauth_error(status: StatusCode, error: &str, description: &str) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    response.insert_header((header::CACHE_CONTROL, "no-store"));
    if status == StatusCode::UNAUTHORIZED {
        response.insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"solgate\"")));
    }
    response.json(json!({"error": error, "error_description": description}))
}

/// The client credentials of a Basic `Authorization` header.
fn basic_credentials(request: &HttpRequest) -> Option<Result<(String, String), ()>> {
    let value = request.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok();
    let text = decoded.and_then(|bytes| String::from_utf8(bytes).ok());
    let Some((id, secret)) = text.as_deref().and_then(|text| text.split_once(':')) else { return Some(Err(())) };
    let unescape =
        |part: &str| url::form_urlencoded::parse(format!("x={part}").as_bytes()).next().map(|(_, v)| v.into_owned());
    match (unescape(id), unescape(secret)) {
        (Some(id), Some(secret)) => Some(Ok((id, secret))),
        _ => Some(Err(())),
    }
}

pub async fn token(state: web::Data<AppState>, request: HttpRequest, body: web::Bytes) -> HttpResponse {
    let auth = state.auth.clone();
    if auth.mode() != super::AuthMode::Oauth2 {
        return oauth_error(
            StatusCode::NOT_FOUND,
            "invalid_request",
            "This solgate issues no tokens ([auth] mode is not oauth2).",
        );
    }
    let form_type =
        request.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(|value| {
            value
                .split(';')
                .next()
                .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
        });
    if !form_type {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The body must be application/x-www-form-urlencoded.",
        );
    }
    let mut grant_type = None;
    let mut form_id = None;
    let mut form_secret = None;
    let mut scope = None;
    for (key, value) in url::form_urlencoded::parse(&body) {
        let slot = match key.as_ref() {
            "grant_type" => &mut grant_type,
            "client_id" => &mut form_id,
            "client_secret" => &mut form_secret,
            "scope" => &mut scope,
            _ => continue,
        };
        if slot.replace(value.into_owned()).is_some() {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", &format!("{key} is given more than once."));
        }
    }
    match grant_type.as_deref() {
        Some("client_credentials") => {}
        None => return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "grant_type is required."),
        Some(_) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "Only client_credentials is supported.",
            );
        }
    }
    let (client_id, secret) = match (basic_credentials(&request), form_id, form_secret) {
        (Some(Ok(credentials)), None, None) => credentials,
        (Some(Ok((id, secret))), Some(form_id), None) if form_id == id => (id, secret),
        (None, Some(id), Some(secret)) => (id, secret),
        (Some(_), _, Some(_)) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Use one client authentication method, not two.",
            );
        }
        _ => return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "Client authentication failed."),
    };
    // RFC 6749 clause 3.3: only scopes solgate knows may be granted.
    if scope.as_deref().is_some_and(|scope| !scope.split(' ').all(policy::is_known_scope)) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "A requested scope is not one of solgate's: {apiName}:v{major}:{all|readonly|operation}.",
        );
    }
    // PBKDF2 takes a while on purpose: off the async threads.
    let client = client_id.clone();
    let issued = tokio::task::spawn_blocking(move || {
        auth.issue(&client, &secret, scope.as_deref()).map(|(token, life)| (token, life, scope))
    })
    .await;
    let lookup = client_id;
    match issued {
        Ok(Some((access_token, expires_in, scope))) => {
            tracing::info!(target: "solgate::audit", client = %lookup, "access token issued");
            let mut answer = json!({"access_token": access_token, "token_type": "Bearer", "expires_in": expires_in});
            if let Some(scope) = scope {
                answer["scope"] = json!(scope);
            }
            HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(answer)
        }
        Ok(None) => {
            tracing::warn!(target: "solgate::audit", client = %lookup, "token request refused: client authentication failed");
            oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "Client authentication failed.")
        }
        Err(_) => oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "The token could not be issued."),
    }
}
