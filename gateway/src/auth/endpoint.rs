//! `POST /oauth2/token`: the client credentials grant (RFC 6749 clause 4.4). The client
//! authenticates with HTTP Basic (clause 2.3.1, id and secret form-urlencoded) or with
//! `client_id` and `client_secret` in the form body, not both. Errors are RFC 6749
//! clause 5.2 JSON; a failed client authentication is 401 `invalid_client`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine;
use serde::Serialize;
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

/// The members of a token request's form that solgate reads (RFC 6749 clause 4.4.2).
#[derive(Default)]
struct TokenForm {
    grant_type: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    scope: Option<String>,
}

/// The answer to a granted request (RFC 6749 clause 5.1).
#[derive(Serialize)]
struct TokenAnswer {
    access_token: String,
    token_type: &'static str,
    expires_in: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
}

/// An OAuth error answer, boxed: the form readers return it as their error.
fn refusal(status: StatusCode, error: &str, detail: &str) -> Box<HttpResponse> {
    Box::new(oauth_error(status, error, detail))
}

/// A form-urlencoded body, each member at most once.
fn read_form(request: &HttpRequest, body: &[u8]) -> Result<TokenForm, Box<HttpResponse>> {
    let form_type =
        request.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(|value| {
            value
                .split(';')
                .next()
                .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
        });
    if !form_type {
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The body must be application/x-www-form-urlencoded.",
        ));
    }
    let mut form = TokenForm::default();
    for (key, value) in url::form_urlencoded::parse(body) {
        let slot = match key.as_ref() {
            "grant_type" => &mut form.grant_type,
            "client_id" => &mut form.client_id,
            "client_secret" => &mut form.client_secret,
            "scope" => &mut form.scope,
            _ => continue,
        };
        if slot.replace(value.into_owned()).is_some() {
            let detail = format!("{key} is given more than once.");
            return Err(refusal(StatusCode::BAD_REQUEST, "invalid_request", &detail));
        }
    }
    match form.grant_type.as_deref() {
        Some("client_credentials") => Ok(form),
        None => Err(refusal(StatusCode::BAD_REQUEST, "invalid_request", "grant_type is required.")),
        Some(_) => {
            Err(refusal(StatusCode::BAD_REQUEST, "unsupported_grant_type", "Only client_credentials is supported."))
        }
    }
}

/// The client's id and secret: from Basic or from the form, not both (RFC 6749 clause 2.3.1).
fn client_credentials(request: &HttpRequest, form: &mut TokenForm) -> Result<(String, String), Box<HttpResponse>> {
    match (basic_credentials(request), form.client_id.take(), form.client_secret.take()) {
        (Some(Ok(credentials)), None, None) => Ok(credentials),
        (Some(Ok((id, secret))), Some(form_id), None) if form_id == id => Ok((id, secret)),
        (None, Some(id), Some(secret)) => Ok((id, secret)),
        (Some(_), _, Some(_)) => {
            Err(refusal(StatusCode::BAD_REQUEST, "invalid_request", "Use one client authentication method, not two."))
        }
        _ => Err(refusal(StatusCode::UNAUTHORIZED, "invalid_client", "Client authentication failed.")),
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
    let (mut form, (client_id, secret)) =
        match read_form(&request, &body).and_then(|mut form| Ok((client_credentials(&request, &mut form)?, form))) {
            Ok((credentials, form)) => (form, credentials),
            Err(refusal) => return *refusal,
        };
    let scope = form.scope.take();
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
    match issued {
        Ok(Some((access_token, expires_in, scope))) => {
            tracing::info!(target: "solgate::audit", client = %client_id, "access token issued");
            let answer = TokenAnswer { access_token, token_type: "Bearer", expires_in, scope };
            HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(answer)
        }
        Ok(None) => {
            tracing::warn!(target: "solgate::audit", client = %client_id, "token request refused: client authentication failed");
            oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "Client authentication failed.")
        }
        Err(_) => oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "The token could not be issued."),
    }
}
