//! The HTTP side of notifications, shared by both doors: how solgate authenticates
//! towards a subscription's callback (SOL013 SubscriptionAuthentication), the check of a
//! callback URI, the callback test of a new subscription, and the delivery exchange with
//! its OAuth 2.0 token cache.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sha2::Digest;
use solgate_schemas::{Api, Registry, VersionEntry};

use crate::CoreError;
use crate::notify;
use crate::settings::NotificationSettings;

/// Why a subscription request cannot be accepted as it stands: the status the API
/// answers and a detail for the client (causes go to the log, never to the client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub status: u16,
    pub detail: String,
}

impl Refused {
    fn new(status: u16, detail: impl Into<String>) -> Self {
        Self { status, detail: detail.into() }
    }
}

/// How solgate authenticates towards a callback (SOL013 SubscriptionAuthentication).
#[derive(Clone, PartialEq, Eq)]
pub enum CallbackAuth {
    None,
    /// HTTP Basic with the consumer's credentials.
    Basic {
        user_name: String,
        password: String,
    },
    /// A Bearer token obtained with the OAuth 2.0 client credentials grant (RFC 6749
    /// clause 4.4), the client authenticating with HTTP Basic at the token endpoint.
    OAuth2ClientCredentials {
        token_endpoint: String,
        client_id: String,
        client_password: String,
    },
}

impl std::fmt::Debug for CallbackAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Secrets never reach a log line.
        match self {
            CallbackAuth::None => f.write_str("None"),
            CallbackAuth::Basic { user_name, .. } => write!(f, "Basic({user_name})"),
            CallbackAuth::OAuth2ClientCredentials { client_id, .. } => {
                write!(f, "OAuth2ClientCredentials({client_id})")
            }
        }
    }
}

/// Only `http://` can be reached: reqwest is built without TLS (../shared/reference/rust-crates.md).
fn check_reachable_scheme(what: &str, uri: &str) -> Result<(), Refused> {
    let parsed =
        url::Url::parse(uri).map_err(|_| Refused::new(400, format!("{what} {uri} is not an absolute URI.")))?;
    match parsed.scheme() {
        "http" if parsed.host_str().is_some() => Ok(()),
        "https" => Err(Refused::new(
            422,
            format!("{what} uses https://, which this solgate build cannot reach (it has no TLS support)."),
        )),
        _ => Err(Refused::new(400, format!("{what} {uri} is not an http:// URI."))),
    }
}

/// Checks a callback URI: an absolute `http://` URI.
pub fn check_callback_uri(uri: &str) -> Result<(), Refused> {
    check_reachable_scheme("callbackUri", uri)
}

impl CallbackAuth {
    /// Reads an `authentication` object (already schema-valid). Where several `authType`s
    /// are listed the strongest supported one wins, as in Tacker. The parameters of the
    /// chosen type are required: solgate has no out-of-band provisioning (SOL013 clause
    /// 8.3.4: present "if ... the contained information has not been provisioned out of
    /// band"). TLS_CERT and OAUTH2_CLIENT_CERT need TLS, which this build lacks.
    pub fn from_authentication(authentication: Option<&Value>) -> Result<Self, Refused> {
        let Some(authentication) = authentication.filter(|value| !value.is_null()) else {
            return Ok(CallbackAuth::None);
        };
        let types: Vec<&str> =
            authentication["authType"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let text = |params: &Value, key: &str, name: &str| -> Result<String, Refused> {
            params[key]
                .as_str()
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| Refused::new(400, format!("{name}.{key} must be specified.")))
        };
        if types.contains(&"OAUTH2_CLIENT_CREDENTIALS") {
            let params = &authentication["paramsOauth2ClientCredentials"];
            if !params.is_object() {
                return Err(Refused::new(400, "paramsOauth2ClientCredentials must be specified."));
            }
            let name = "paramsOauth2ClientCredentials";
            let token_endpoint = text(params, "tokenEndpoint", name)?;
            check_reachable_scheme("tokenEndpoint", &token_endpoint)?;
            return Ok(CallbackAuth::OAuth2ClientCredentials {
                token_endpoint,
                client_id: text(params, "clientId", name)?,
                client_password: text(params, "clientPassword", name)?,
            });
        }
        if types.contains(&"BASIC") {
            let params = &authentication["paramsBasic"];
            if !params.is_object() {
                return Err(Refused::new(400, "paramsBasic must be specified."));
            }
            return Ok(CallbackAuth::Basic {
                user_name: text(params, "userName", "paramsBasic")?,
                password: text(params, "password", "paramsBasic")?,
            });
        }
        let listed = types.join(", ");
        Err(Refused::new(422, format!("authType {listed} is not supported; use BASIC or OAUTH2_CLIENT_CREDENTIALS.")))
    }
}

/// Why an HTTP exchange with a callback (or its token endpoint) failed: a short text
/// fit for a client, and the cause for the log and the operator-visible `last_error`.
#[derive(Debug, Clone)]
pub struct ExchangeFailure {
    /// A short text fit for a client.
    pub client: String,
    /// The cause, for the log and the operator-visible `last_error`.
    pub cause: String,
}

/// The cause chain of a reqwest error, without the URL (it may carry credentials).
fn cause_of(error: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        parts.push(inner.to_string());
        source = inner.source();
    }
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    if parts.is_empty() { kind.to_owned() } else { format!("{kind}: {}", parts.join(": ")) }
}

fn transport_failure(error: &reqwest::Error, timeout: Duration, what: &str) -> ExchangeFailure {
    let client = if error.is_timeout() {
        format!("The {what} did not answer within {} seconds.", timeout.as_secs())
    } else {
        format!("The {what} could not be reached.")
    };
    ExchangeFailure { client, cause: cause_of(error) }
}

/// A cached OAuth 2.0 access token.
struct CachedToken {
    token: String,
    renew_at: Instant,
}

/// Tokens are cached per client (token endpoint, client id and a digest of the secret),
/// not per subscription: the token fetched for a new subscription's callback test serves
/// its notifications, and subscriptions of one client share a token.
type TokenKey = (String, String, String);

/// The HTTP side of notifications, shared by the gateway (callback tests) and the
/// conductor's delivery worker: one connection pool and one token cache per process.
pub struct Callbacks {
    http: reqwest::Client,
    settings: NotificationSettings,
    tokens: Mutex<HashMap<TokenKey, CachedToken>>,
}

impl std::fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callbacks").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Callbacks {
    pub fn new(settings: NotificationSettings) -> Result<Self, CoreError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(settings.request_timeout_secs.max(1)))
            // A redirect would carry the notification (and its credentials) elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|error| CoreError::Setup(format!("cannot build the notification HTTP client: {error}")))?;
        Ok(Self { http, settings, tokens: Mutex::new(HashMap::new()) })
    }

    pub fn settings(&self) -> &NotificationSettings {
        &self.settings
    }

    /// The callback test of a new subscription (SOL003 clause 5.4.18.3.1 lets the VNFM
    /// test the callback; Tacker does it with a GET that must answer 204). Sent with the
    /// headers and credentials notifications will carry. Every failure is a 422 whose
    /// detail keeps Tacker's text and names no internal host, port or error (Tacker
    /// answers 500 with the raw error for an unreachable callback, its defect 9).
    pub async fn test_callback(&self, uri: &str, auth: &CallbackAuth, version: &str) -> Result<(), Refused> {
        const TEXT: &str = "Can't get from notification callback Uri.";
        let timeout = Duration::from_secs(self.settings.callback_test_timeout_secs.max(1));
        match self.exchange(Method::GET, uri, auth, version, None, timeout).await {
            Ok(StatusCode::NO_CONTENT) => Ok(()),
            Ok(status) => {
                tracing::info!(%status, "subscription refused: the callback test did not answer 204");
                Err(Refused::new(
                    422,
                    format!("{TEXT} It answered {} to a GET; 204 No Content is required.", status.as_u16()),
                ))
            }
            Err(failure) => {
                tracing::warn!(cause = %failure.cause, "subscription refused: the callback test failed");
                Err(Refused::new(422, format!("{TEXT} {}", failure.client)))
            }
        }
    }

    /// One request to a callback with the subscription's credentials. An OAuth 2.0
    /// callback that answers 401 gets one more try with a fresh token (the cached one
    /// may have been revoked before its expiry).
    pub async fn exchange(
        &self,
        method: Method,
        uri: &str,
        auth: &CallbackAuth,
        version: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<StatusCode, ExchangeFailure> {
        let mut fresh_token = false;
        loop {
            let mut request = self
                .http
                .request(method.clone(), uri)
                .timeout(timeout)
                .header(ACCEPT, "application/json")
                .header("Version", version);
            if let Some(body) = body {
                request = request.header(CONTENT_TYPE, "application/json").body(body.to_string());
            }
            match auth {
                CallbackAuth::None => {}
                CallbackAuth::Basic { user_name, password } => request = request.basic_auth(user_name, Some(password)),
                CallbackAuth::OAuth2ClientCredentials { .. } => {
                    request = request.bearer_auth(self.token(auth, fresh_token, timeout).await?);
                }
            }
            let response = request.send().await.map_err(|error| transport_failure(&error, timeout, "callback URI"))?;
            let status = response.status();
            // Read the (small) answer so the connection can be reused.
            let _ = response.bytes().await;
            if status == StatusCode::UNAUTHORIZED
                && matches!(auth, CallbackAuth::OAuth2ClientCredentials { .. })
                && !fresh_token
            {
                fresh_token = true;
                continue;
            }
            return Ok(status);
        }
    }

    /// A token for an OAuth 2.0 callback: the cached one unless it is about to expire or
    /// `renew` is set.
    async fn token(&self, auth: &CallbackAuth, renew: bool, timeout: Duration) -> Result<String, ExchangeFailure> {
        let CallbackAuth::OAuth2ClientCredentials { token_endpoint, client_id, client_password } = auth else {
            return Err(ExchangeFailure { client: String::new(), cause: "not an OAuth 2.0 subscription".into() });
        };
        let key = (token_endpoint.clone(), client_id.clone(), hex::encode(sha2::Sha256::digest(client_password)));
        if !renew {
            let tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(cached) = tokens.get(&key).filter(|cached| cached.renew_at > Instant::now()) {
                return Ok(cached.token.clone());
            }
        }
        let no_token = |cause: String| ExchangeFailure {
            client: "No OAuth 2.0 access token could be obtained from its tokenEndpoint.".into(),
            cause: format!("token endpoint: {cause}"),
        };
        let response = self
            .http
            .post(token_endpoint)
            .timeout(timeout)
            .basic_auth(client_id, Some(client_password))
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials")
            .send()
            .await
            .map_err(|error| no_token(transport_failure(&error, timeout, "token endpoint").cause))?;
        let status = response.status();
        if !status.is_success() {
            return Err(no_token(format!("answered HTTP {}", status.as_u16())));
        }
        let answer: Value = response.json().await.map_err(|error| no_token(format!("unreadable answer: {error}")))?;
        let token = answer["access_token"]
            .as_str()
            .filter(|token| !token.is_empty())
            .ok_or_else(|| no_token("the answer has no access_token".into()))?
            .to_owned();
        // RFC 6749 clause 5.1: expires_in is RECOMMENDED; without it the token is kept for
        // an hour (a 401 renews it earlier).
        let lifetime = answer["expires_in"].as_u64().unwrap_or(3600);
        let usable = lifetime.saturating_sub(self.settings.token_refresh_margin_secs);
        let renew_at = Instant::now() + Duration::from_secs(usable);
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, CachedToken { token: token.clone(), renew_at });
        Ok(token)
    }
}

/// The version a subscription's notifications are rendered for and carry in `Version`:
/// the one it was created with while that is served, else the newest served minor of
/// its major (so a retired minor degrades to its successor, never to another major).
pub fn notification_version<'r>(registry: &'r Registry, major: u64, subscription: &Value) -> Option<&'r VersionEntry> {
    notify::subscription_version(subscription)
        .and_then(|version| version.parse().ok())
        .and_then(|id| registry.find(Api::Vnflcm, id))
        .filter(|entry| entry.major() == major)
        .or_else(|| registry.newest(Api::Vnflcm, major))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn authentication_is_read_strictly() {
        assert_eq!(CallbackAuth::from_authentication(None).unwrap(), CallbackAuth::None);
        let basic = json!({"authType": ["BASIC"], "paramsBasic": {"userName": "u", "password": "p"}});
        assert_eq!(
            CallbackAuth::from_authentication(Some(&basic)).unwrap(),
            CallbackAuth::Basic { user_name: "u".into(), password: "p".into() }
        );
        let both = json!({"authType": ["BASIC", "OAUTH2_CLIENT_CREDENTIALS"], "paramsBasic": {"userName": "u", "password": "p"},
            "paramsOauth2ClientCredentials": {"clientId": "c", "clientPassword": "s", "tokenEndpoint": "http://idp/token"}});
        assert!(matches!(
            CallbackAuth::from_authentication(Some(&both)).unwrap(),
            CallbackAuth::OAuth2ClientCredentials { .. }
        ));
        let missing = json!({"authType": ["BASIC"]});
        assert_eq!(CallbackAuth::from_authentication(Some(&missing)).unwrap_err().status, 400);
        let no_password = json!({"authType": ["BASIC"], "paramsBasic": {"userName": "u"}});
        assert_eq!(
            CallbackAuth::from_authentication(Some(&no_password)).unwrap_err().detail,
            "paramsBasic.password must be specified."
        );
        let tls = json!({"authType": ["TLS_CERT"]});
        assert_eq!(CallbackAuth::from_authentication(Some(&tls)).unwrap_err().status, 422);
        let https_idp = json!({"authType": ["OAUTH2_CLIENT_CREDENTIALS"],
            "paramsOauth2ClientCredentials": {"clientId": "c", "clientPassword": "s", "tokenEndpoint": "https://idp/token"}});
        assert_eq!(CallbackAuth::from_authentication(Some(&https_idp)).unwrap_err().status, 422);
        let debug = format!("{:?}", CallbackAuth::from_authentication(Some(&basic)).unwrap());
        assert_eq!(debug, "Basic(u)");
    }

    #[test]
    fn callback_uris_must_be_reachable() {
        assert!(check_callback_uri("http://127.0.0.1:9/cb").is_ok());
        assert_eq!(check_callback_uri("https://nfvo/cb").unwrap_err().status, 422);
        assert_eq!(check_callback_uri("ftp://nfvo/cb").unwrap_err().status, 400);
        assert_eq!(check_callback_uri("/relative").unwrap_err().status, 400);
    }

    #[test]
    fn notifications_are_rendered_for_the_subscription_version() {
        let registry = Registry::builtin().unwrap();
        let notification = json!({"id": "n", "notificationType": "VnfLcmOperationOccurrenceNotification",
            "subscriptionId": "s", "timeStamp": "2026-11-22T01:34:39Z", "notificationStatus": "START",
            "operationState": "STARTING", "vnfInstanceId": "i", "operation": "INSTANTIATE",
            "isAutomaticInvocation": false, "verbosity": "FULL", "vnfLcmOpOccId": "o",
            "_links": {"vnfInstance": {"href": "x"}, "subscription": {"href": "y"}, "vnfLcmOpOcc": {"href": "z"}}});
        let v1 = notification_version(&registry, 1, &json!({"_solgate": {"version": "1.3.0"}})).unwrap();
        assert_eq!(v1.version_string(), "1.3.0");
        let shown = v1.dictionary.render("VnfLcmOperationOccurrenceNotification", &notification);
        assert!(shown.get("verbosity").is_none(), "SOL003 v2.6.1 has no verbosity: {shown}");
        assert_eq!(shown["_links"], notification["_links"]);

        let v2 = notification_version(&registry, 2, &json!({"_solgate": {"version": "2.0.0"}})).unwrap();
        assert_eq!(v2.version_string(), "2.0.0");
        assert_eq!(v2.dictionary.render("VnfLcmOperationOccurrenceNotification", &notification), notification);
        // Unknown, retired or other-major versions fall back to the newest minor of the major.
        let newest = registry.newest(Api::Vnflcm, 2).unwrap().version_string();
        for stored in [json!({}), json!({"_solgate": {"version": "2.9.0"}}), json!({"_solgate": {"version": "1.3.0"}})]
        {
            assert_eq!(notification_version(&registry, 2, &stored).unwrap().version_string(), newest, "{stored}");
        }
    }
}
