//! Getting a credential: an OAuth 2.0 access token (client credentials, RFC 6749 clause
//! 4.4, the client authenticating with HTTP Basic as clause 2.3.1 says) or a Keystone v3
//! token (password method, project scope; the token comes back in `X-Subject-Token`).

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use crate::config::{KeystoneAuth, OAuth2Auth};
use crate::error::{Error, Result, transport};
use crate::records::{lenient, read};

/// A token endpoint's answer: RFC 6749 clause 5.1 on success, clause 5.2 (or a
/// ProblemDetails) on error.
#[derive(Default, Deserialize)]
#[serde(default)]
struct TokenAnswer {
    #[serde(deserialize_with = "lenient")]
    access_token: Option<String>,
    #[serde(deserialize_with = "lenient")]
    error: Option<String>,
    #[serde(deserialize_with = "lenient")]
    error_description: Option<String>,
    #[serde(deserialize_with = "lenient")]
    detail: Option<String>,
}

/// Keystone's error body, `{"error": {"message": …}}`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct KeystoneAnswer {
    #[serde(deserialize_with = "lenient")]
    error: KeystoneError,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct KeystoneError {
    #[serde(deserialize_with = "lenient")]
    message: Option<String>,
}

/// The header Keystone returns the new token in.
const SUBJECT_TOKEN: &str = "x-subject-token";

/// What a request carries to authenticate.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Credential {
    /// `Authorization: Bearer …`
    Bearer(String),
    /// `X-Auth-Token: …` (Keystone).
    XAuthToken(String),
}

impl Credential {
    pub(crate) fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Credential::Bearer(token) => request.bearer_auth(token),
            Credential::XAuthToken(token) => request.header("X-Auth-Token", token),
        }
    }
}

pub(crate) async fn oauth2_token(http: &reqwest::Client, endpoint: &Url, auth: &OAuth2Auth) -> Result<Credential> {
    let url = match &auth.token_url {
        Some(url) => url.clone(),
        None => endpoint.join("oauth2/token").map_err(|error| Error::Config(error.to_string()))?,
    };
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", "client_credentials");
    if let Some(scope) = auth.scope.as_deref().filter(|scope| !scope.is_empty()) {
        form.append_pair("scope", scope);
    }
    let response = http
        .post(url.clone())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ACCEPT, "application/json")
        .header(AUTHORIZATION, basic(&auth.client_id, &auth.client_secret))
        .body(form.finish())
        .send()
        .await
        .map_err(|error| transport(url.as_str(), &error))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|error| transport(url.as_str(), &error))?;
    let answer: TokenAnswer = read(serde_json::from_slice(&body).unwrap_or(Value::Null));
    if !status.is_success() {
        // RFC 6749 clause 5.2 error response, or a ProblemDetails.
        let reason = match (answer.error.as_deref(), answer.error_description.as_deref(), answer.detail.as_deref()) {
            (Some(error), Some(description), _) => format!("{error}: {description}"),
            (Some(error), None, _) => error.to_owned(),
            (None, _, Some(detail)) => detail.to_owned(),
            _ => String::from_utf8_lossy(&body).into_owned(),
        };
        return Err(Error::Auth(format!("token endpoint {url} answered {status}: {reason}")));
    }
    match answer.access_token.as_deref() {
        Some(token) if !token.is_empty() => Ok(Credential::Bearer(token.to_owned())),
        _ => Err(Error::Auth(format!("token endpoint {url} answered without an access_token"))),
    }
}

/// `{auth_url}/v3/auth/tokens`, whether or not `auth_url` already ends in `/v3`.
pub(crate) fn keystone_tokens_url(auth_url: &Url) -> Result<Url> {
    let mut base = auth_url.clone();
    let trimmed = base.path().trim_end_matches('/').to_owned();
    let path =
        if trimmed.ends_with("/v3") { format!("{trimmed}/auth/tokens") } else { format!("{trimmed}/v3/auth/tokens") };
    base.set_path(&path);
    Ok(base)
}

pub(crate) async fn keystone_token(http: &reqwest::Client, auth: &KeystoneAuth) -> Result<Credential> {
    let url = keystone_tokens_url(&auth.auth_url)?;
    let body = json!({
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {
                    "name": auth.username,
                    "domain": {"name": auth.user_domain_name},
                    "password": auth.password,
                }},
            },
            "scope": {"project": {"name": auth.project_name, "domain": {"name": auth.project_domain_name}}},
        }
    });
    let response = http
        .post(url.clone())
        .header(ACCEPT, "application/json")
        .json(&body)
        .send()
        .await
        .map_err(|error| transport(url.as_str(), &error))?;
    let status = response.status();
    let token = response.headers().get(SUBJECT_TOKEN).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        let answer: KeystoneAnswer = read(serde_json::from_str(&text).unwrap_or(Value::Null));
        let reason = answer.error.message.unwrap_or(text);
        return Err(Error::Auth(format!("Keystone {url} answered {status}: {reason}")));
    }
    match token {
        Some(token) if !token.is_empty() => Ok(Credential::XAuthToken(token)),
        _ => Err(Error::Auth(format!("Keystone {url} answered {status} without an X-Subject-Token header"))),
    }
}

/// HTTP Basic with id and secret form-urlencoded first (RFC 6749 clause 2.3.1).
fn basic(id: &str, secret: &str) -> String {
    use base64::Engine;
    let encode = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(id), encode(secret));
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_encoded_then_base64() {
        assert_eq!(basic("Aladdin", "open sesame"), "Basic QWxhZGRpbjpvcGVuK3Nlc2FtZQ==");
    }

    #[test]
    fn keystone_url_with_and_without_v3() {
        for (base, expected) in [
            ("http://ks:5000", "http://ks:5000/v3/auth/tokens"),
            ("http://ks:5000/v3", "http://ks:5000/v3/auth/tokens"),
            ("http://ks/identity/v3/", "http://ks/identity/v3/auth/tokens"),
            ("http://ks/identity", "http://ks/identity/v3/auth/tokens"),
        ] {
            assert_eq!(keystone_tokens_url(&Url::parse(base).unwrap()).unwrap().as_str(), expected);
        }
    }
}
