//! The HTTP side of notifications, shared by both doors: how solgate authenticates
//! towards a subscription's callback (SOL013 SubscriptionAuthentication), the check of a
//! callback URI, the callback test of a new subscription, and the delivery exchange with
//! its OAuth 2.0 token cache.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use sha2::Digest;
use solgate_schemas::{Api, Registry, VersionEntry};

use crate::CoreError;
use crate::egress::Outbound;
pub use crate::egress::Refused;
use crate::notify;
use crate::settings::NotificationSettings;

/// The credentials solgate sends to a callback (SOL013 clause 8.3.4 SubscriptionAuthentication).
#[derive(Clone, PartialEq, Eq)]
pub enum CallbackCredentials {
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
    /// A Bearer token obtained with the client credentials grant, the client
    /// authenticating with its certificate (RFC 8705 clause 2; SOL013 V3.5.1 OAUTH2_CLIENT_CERT).
    OAuth2ClientCert {
        token_endpoint: String,
        client_id: String,
    },
}

/// How solgate authenticates towards a callback: credentials, and whether the TLS
/// connection presents solgate's client certificate (`TLS_CERT`, `OAUTH2_CLIENT_CERT`).
#[derive(Clone, PartialEq, Eq)]
pub struct CallbackAuth {
    pub credentials: CallbackCredentials,
    pub client_certificate: bool,
}

impl CallbackAuth {
    pub const NONE: CallbackAuth = CallbackAuth { credentials: CallbackCredentials::None, client_certificate: false };
}

impl std::fmt::Debug for CallbackCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Secrets never reach a log line.
        match self {
            CallbackCredentials::None => f.write_str("None"),
            CallbackCredentials::Basic { user_name, .. } => write!(f, "Basic({user_name})"),
            CallbackCredentials::OAuth2ClientCredentials { client_id, .. } => {
                write!(f, "OAuth2ClientCredentials({client_id})")
            }
            CallbackCredentials::OAuth2ClientCert { client_id, .. } => write!(f, "OAuth2ClientCert({client_id})"),
        }
    }
}

impl std::fmt::Debug for CallbackAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.credentials)?;
        if self.client_certificate { f.write_str("+TlsCert") } else { Ok(()) }
    }
}

/// SOL013 clause 8.3.4 SubscriptionAuthentication, as a subscription request gives it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SubscriptionAuthentication {
    auth_type: Vec<String>,
    params_basic: Option<ParamsBasic>,
    params_oauth2_client_credentials: Option<ParamsOauth2ClientCredentials>,
    params_oauth2_client_cert: Option<ParamsOauth2ClientCert>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ParamsBasic {
    user_name: Option<String>,
    password: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ParamsOauth2ClientCredentials {
    client_id: Option<String>,
    client_password: Option<String>,
    token_endpoint: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ParamsOauth2ClientCert {
    client_id: Option<String>,
    certificate_ref: CertificateRef,
    token_endpoint: Option<String>,
}

/// SOL013 V3.5.1 paramsOauth2ClientCert.certificateRef: which certificate the client means.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CertificateRef {
    #[serde(rename = "type")]
    kind: String,
    value: String,
}

/// The parameters of the chosen `authType`: required (no out-of-band provisioning).
fn specified<'a, T>(params: Option<&'a T>, name: &str) -> Result<&'a T, Refused> {
    params.ok_or_else(|| Refused::new(400, format!("{name} must be specified.")))
}

/// A required, non-empty member `key` of the parameters `name`.
fn text(given: Option<&String>, name: &str, key: &str) -> Result<String, Refused> {
    given
        .filter(|text| !text.is_empty())
        .cloned()
        .ok_or_else(|| Refused::new(400, format!("{name}.{key} must be specified.")))
}

/// The answer of a token endpoint (RFC 6749 clause 5.1), read leniently: members of
/// another type count as absent.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TokenAnswer {
    access_token: Option<Value>,
    expires_in: Option<Value>,
}

/// solgate's client certificate for `TLS_CERT` and `OAUTH2_CLIENT_CERT` subscriptions:
/// a client that presents it, and its thumbprints for `certificateRef`.
struct ClientCertificate {
    http: reqwest::Client,
    /// base64url SHA-256 of the DER certificate (RFC 7515 `x5t#S256`, RFC 8705 clause 3.1).
    x5t_s256: String,
    /// The same digest in hex (a `sha256` fingerprint as `openssl x509 -fingerprint` shows it).
    sha256_hex: String,
}

impl ClientCertificate {
    fn load(
        settings: &NotificationSettings,
        outbound: &Outbound,
        timeout: Duration,
    ) -> Result<Option<Self>, CoreError> {
        let (cert_file, key_file) = (&settings.mtls_client_cert_file, &settings.mtls_client_key_file);
        if cert_file.as_os_str().is_empty() && key_file.as_os_str().is_empty() {
            return Ok(None);
        }
        let setup = |message: String| CoreError::Setup(format!("notifications.mtls_client_*: {message}"));
        let read = |path: &std::path::Path| {
            std::fs::read(path).map_err(|error| setup(format!("cannot read {}: {error}", path.display())))
        };
        let (cert_pem, key_pem) = (read(cert_file)?, read(key_file)?);
        use rustls_pki_types::pem::PemObject;
        let first = rustls_pki_types::CertificateDer::pem_slice_iter(&cert_pem)
            .next()
            .ok_or_else(|| setup(format!("{} holds no certificate", cert_file.display())))?
            .map_err(|error| setup(format!("{}: {error}", cert_file.display())))?;
        let digest = sha2::Sha256::digest(first.as_ref());
        let mut identity_pem = cert_pem.clone();
        identity_pem.push(b'\n');
        identity_pem.extend_from_slice(&key_pem);
        let identity = reqwest::Identity::from_pem(&identity_pem).map_err(|error| setup(error.to_string()))?;
        let http = outbound
            .client_builder(false)?
            .identity(identity)
            .connect_timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|error| setup(format!("cannot build the client: {error}")))?;
        use base64::Engine;
        Ok(Some(Self {
            http,
            x5t_s256: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest),
            sha256_hex: hex::encode(digest),
        }))
    }

    /// Whether a `certificateRef` names this certificate: type `x5t#S256` with the
    /// base64url thumbprint, or `sha256` with the hex fingerprint (colons allowed).
    fn check_reference(&self, reference: &CertificateRef) -> Result<(), Refused> {
        let (kind, value) = (reference.kind.as_str(), reference.value.as_str());
        let matches = match kind.to_ascii_lowercase().as_str() {
            "x5t#s256" => value == self.x5t_s256,
            "sha256" | "sha-256" => value.replace(':', "").eq_ignore_ascii_case(&self.sha256_hex),
            _ => {
                return Err(Refused::new(
                    422,
                    format!(
                        "paramsOauth2ClientCert.certificateRef.type {kind} is not supported; use x5t#S256 (the \
                         base64url SHA-256 thumbprint) or sha256 (the hex fingerprint)."
                    ),
                ));
            }
        };
        if matches {
            Ok(())
        } else {
            Err(Refused::new(
                422,
                "paramsOauth2ClientCert.certificateRef does not name the client certificate this VNFM presents.",
            ))
        }
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
pub fn cause_of(error: &reqwest::Error) -> String {
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
    client_certificate: Option<ClientCertificate>,
    outbound: Outbound,
    settings: NotificationSettings,
    tokens: Mutex<HashMap<TokenKey, CachedToken>>,
}

impl std::fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callbacks").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Callbacks {
    pub fn new(settings: NotificationSettings, outbound: &Outbound) -> Result<Self, CoreError> {
        let timeout = Duration::from_secs(settings.request_timeout_secs.max(1));
        // A redirect would carry the notification (and its credentials) elsewhere: none is followed.
        let http = outbound
            .client_builder(false)?
            .connect_timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|error| CoreError::Setup(format!("cannot build the notification HTTP client: {error}")))?;
        let client_certificate = ClientCertificate::load(&settings, outbound, timeout)?;
        Ok(Self { http, client_certificate, outbound: outbound.clone(), settings, tokens: Mutex::new(HashMap::new()) })
    }

    /// Reads an `authentication` object (already schema-valid). Where several `authType`s
    /// are listed the strongest credentials win, as in Tacker; `TLS_CERT` beside another
    /// type adds the client certificate to its credentials. The parameters of the chosen
    /// type are required: solgate has no out-of-band provisioning (SOL013 clause 8.3.4:
    /// present "if ... the contained information has not been provisioned out of band").
    pub fn auth_of(&self, authentication: Option<&Value>) -> Result<CallbackAuth, Refused> {
        let Some(authentication) = authentication.filter(|value| !value.is_null()) else {
            return Ok(CallbackAuth::NONE);
        };
        let given = SubscriptionAuthentication::deserialize(authentication)
            .map_err(|error| Refused::new(400, format!("authentication is not readable: {error}.")))?;
        let types: Vec<&str> = given.auth_type.iter().map(String::as_str).collect();
        let policy = self.outbound.policy();
        let credentials = if types.contains(&"OAUTH2_CLIENT_CERT") {
            let name = "paramsOauth2ClientCert";
            let params = specified(given.params_oauth2_client_cert.as_ref(), name)?;
            let token_endpoint = text(params.token_endpoint.as_ref(), name, "tokenEndpoint")?;
            policy.check_uri(&format!("{name}.tokenEndpoint"), &token_endpoint)?;
            let client_id = text(params.client_id.as_ref(), name, "clientId")?;
            self.certificate("OAUTH2_CLIENT_CERT")?.check_reference(&params.certificate_ref)?;
            CallbackCredentials::OAuth2ClientCert { token_endpoint, client_id }
        } else if types.contains(&"OAUTH2_CLIENT_CREDENTIALS") {
            let name = "paramsOauth2ClientCredentials";
            let params = specified(given.params_oauth2_client_credentials.as_ref(), name)?;
            let token_endpoint = text(params.token_endpoint.as_ref(), name, "tokenEndpoint")?;
            policy.check_uri(&format!("{name}.tokenEndpoint"), &token_endpoint)?;
            CallbackCredentials::OAuth2ClientCredentials {
                token_endpoint,
                client_id: text(params.client_id.as_ref(), name, "clientId")?,
                client_password: text(params.client_password.as_ref(), name, "clientPassword")?,
            }
        } else if types.contains(&"BASIC") {
            let name = "paramsBasic";
            let params = specified(given.params_basic.as_ref(), name)?;
            CallbackCredentials::Basic {
                user_name: text(params.user_name.as_ref(), name, "userName")?,
                password: text(params.password.as_ref(), name, "password")?,
            }
        } else if types.contains(&"TLS_CERT") {
            CallbackCredentials::None
        } else {
            let listed = types.join(", ");
            return Err(Refused::new(
                422,
                format!(
                    "authType {listed} is not supported; use BASIC, OAUTH2_CLIENT_CREDENTIALS, TLS_CERT or \
                     OAUTH2_CLIENT_CERT."
                ),
            ));
        };
        let client_certificate = types.contains(&"TLS_CERT") || types.contains(&"OAUTH2_CLIENT_CERT");
        if client_certificate && !types.contains(&"OAUTH2_CLIENT_CERT") {
            self.certificate("TLS_CERT")?;
        }
        Ok(CallbackAuth { credentials, client_certificate })
    }

    fn certificate(&self, auth_type: &str) -> Result<&ClientCertificate, Refused> {
        self.client_certificate.as_ref().ok_or_else(|| {
            Refused::new(
                422,
                format!(
                    "authType {auth_type} needs a client certificate, and this VNFM has none configured \
                     (notifications.mtls_client_cert_file and mtls_client_key_file)."
                ),
            )
        })
    }

    /// The SSRF checks of a new subscription: its callback URI and token endpoint, by
    /// scheme, literal address and the addresses their host names resolve to.
    pub async fn check_uris(&self, callback_uri: &str, auth: &CallbackAuth) -> Result<(), Refused> {
        let policy = self.outbound.policy();
        policy.check_uri_resolved("callbackUri", callback_uri).await?;
        match &auth.credentials {
            CallbackCredentials::OAuth2ClientCredentials { token_endpoint, .. } => {
                policy.check_uri_resolved("paramsOauth2ClientCredentials.tokenEndpoint", token_endpoint).await?;
            }
            CallbackCredentials::OAuth2ClientCert { token_endpoint, .. } => {
                policy.check_uri_resolved("paramsOauth2ClientCert.tokenEndpoint", token_endpoint).await?;
            }
            CallbackCredentials::None | CallbackCredentials::Basic { .. } => {}
        }
        Ok(())
    }

    /// The client for `auth`: the one that presents the client certificate when it asks for it.
    fn client_for(&self, auth: &CallbackAuth) -> Result<&reqwest::Client, ExchangeFailure> {
        if !auth.client_certificate {
            return Ok(&self.http);
        }
        self.client_certificate.as_ref().map(|certificate| &certificate.http).ok_or_else(|| ExchangeFailure {
            client: "No client certificate is configured.".into(),
            cause: "the subscription asks for a client certificate and notifications.mtls_client_cert_file is unset"
                .into(),
        })
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
        let http = self.client_for(auth)?;
        let oauth2 = matches!(
            auth.credentials,
            CallbackCredentials::OAuth2ClientCredentials { .. } | CallbackCredentials::OAuth2ClientCert { .. }
        );
        loop {
            let mut request = http
                .request(method.clone(), uri)
                .timeout(timeout)
                .header(ACCEPT, "application/json")
                .header("Version", version);
            if let Some(body) = body {
                request = request.header(CONTENT_TYPE, "application/json").body(body.to_string());
            }
            match &auth.credentials {
                CallbackCredentials::None => {}
                CallbackCredentials::Basic { user_name, password } => {
                    request = request.basic_auth(user_name, Some(password));
                }
                CallbackCredentials::OAuth2ClientCredentials { .. } | CallbackCredentials::OAuth2ClientCert { .. } => {
                    request = request.bearer_auth(self.token(auth, fresh_token, timeout).await?);
                }
            }
            let response = request.send().await.map_err(|error| transport_failure(&error, timeout, "callback URI"))?;
            let status = response.status();
            // Read the (small) answer so the connection can be reused.
            let _ = response.bytes().await;
            if status == StatusCode::UNAUTHORIZED && oauth2 && !fresh_token {
                fresh_token = true;
                continue;
            }
            return Ok(status);
        }
    }

    /// A token for an OAuth 2.0 callback (or another OAuth 2.0 protected peer, such as the
    /// external NFVO): the cached one unless it is about to expire or `renew` is set.
    pub async fn token(&self, auth: &CallbackAuth, renew: bool, timeout: Duration) -> Result<String, ExchangeFailure> {
        let (token_endpoint, client_id, secret) = match &auth.credentials {
            CallbackCredentials::OAuth2ClientCredentials { token_endpoint, client_id, client_password } => {
                (token_endpoint, client_id, Some(client_password))
            }
            CallbackCredentials::OAuth2ClientCert { token_endpoint, client_id } => (token_endpoint, client_id, None),
            CallbackCredentials::None | CallbackCredentials::Basic { .. } => {
                return Err(ExchangeFailure { client: String::new(), cause: "not an OAuth 2.0 subscription".into() });
            }
        };
        let client_key = match secret {
            Some(secret) => hex::encode(sha2::Sha256::digest(secret)),
            None => format!("mtls:{}", self.client_certificate.as_ref().map(|c| c.sha256_hex.as_str()).unwrap_or("")),
        };
        let key = (token_endpoint.clone(), client_id.clone(), client_key);
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
        let mut request = self.client_for(auth)?.post(token_endpoint.as_str()).timeout(timeout);
        let form = match secret {
            Some(secret) => {
                request = request.basic_auth(client_id, Some(secret));
                "grant_type=client_credentials".to_owned()
            }
            // RFC 8705 clause 2: the certificate authenticates; client_id names the client.
            None => url::form_urlencoded::Serializer::new(String::new())
                .append_pair("grant_type", "client_credentials")
                .append_pair("client_id", client_id)
                .finish(),
        };
        let response = request
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|error| no_token(transport_failure(&error, timeout, "token endpoint").cause))?;
        let status = response.status();
        if !status.is_success() {
            return Err(no_token(format!("answered HTTP {}", status.as_u16())));
        }
        let answer: Value = response.json().await.map_err(|error| no_token(format!("unreadable answer: {error}")))?;
        // Any JSON answer is read; one without the members has no token.
        let answer = TokenAnswer::deserialize(&answer).unwrap_or_default();
        let token = answer
            .access_token
            .as_ref()
            .and_then(Value::as_str)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| no_token("the answer has no access_token".into()))?
            .to_owned();
        // RFC 6749 clause 5.1: expires_in is RECOMMENDED; without it the token is kept for
        // an hour (a 401 renews it earlier).
        let lifetime = answer.expires_in.as_ref().and_then(Value::as_u64).unwrap_or(3600);
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
    notification_version_of(registry, Api::Vnflcm, major, subscription)
}

/// [`notification_version`] for a subscription of any API.
pub fn notification_version_of<'r>(
    registry: &'r Registry,
    api: Api,
    major: u64,
    subscription: &Value,
) -> Option<&'r VersionEntry> {
    notify::subscription_version(subscription)
        .and_then(|version| version.parse().ok())
        .and_then(|id| registry.find(api, id))
        .filter(|entry| entry.major() == major)
        .or_else(|| registry.newest(api, major))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn callbacks(settings: NotificationSettings) -> Callbacks {
        let outbound = Outbound::new(&Default::default(), &Default::default()).unwrap();
        Callbacks::new(settings, &outbound).unwrap()
    }

    #[test]
    fn authentication_is_read_strictly() {
        let callbacks = callbacks(NotificationSettings::default());
        assert_eq!(callbacks.auth_of(None).unwrap(), CallbackAuth::NONE);
        let basic = json!({"authType": ["BASIC"], "paramsBasic": {"userName": "u", "password": "p"}});
        assert_eq!(
            callbacks.auth_of(Some(&basic)).unwrap().credentials,
            CallbackCredentials::Basic { user_name: "u".into(), password: "p".into() }
        );
        let both = json!({"authType": ["BASIC", "OAUTH2_CLIENT_CREDENTIALS"], "paramsBasic": {"userName": "u", "password": "p"},
            "paramsOauth2ClientCredentials": {"clientId": "c", "clientPassword": "s", "tokenEndpoint": "https://idp/token"}});
        assert!(matches!(
            callbacks.auth_of(Some(&both)).unwrap().credentials,
            CallbackCredentials::OAuth2ClientCredentials { .. }
        ));
        let missing = json!({"authType": ["BASIC"]});
        assert_eq!(callbacks.auth_of(Some(&missing)).unwrap_err().status, 400);
        let no_password = json!({"authType": ["BASIC"], "paramsBasic": {"userName": "u"}});
        assert_eq!(
            callbacks.auth_of(Some(&no_password)).unwrap_err().detail,
            "paramsBasic.password must be specified."
        );
        // Without a configured client certificate, certificate types are refused by name.
        let tls = json!({"authType": ["TLS_CERT"]});
        let refused = callbacks.auth_of(Some(&tls)).unwrap_err();
        assert_eq!(refused.status, 422);
        assert!(refused.detail.contains("mtls_client_cert_file"), "{refused:?}");
        let metadata_idp = json!({"authType": ["OAUTH2_CLIENT_CREDENTIALS"],
            "paramsOauth2ClientCredentials": {"clientId": "c", "clientPassword": "s", "tokenEndpoint": "http://169.254.169.254/token"}});
        let refused = callbacks.auth_of(Some(&metadata_idp)).unwrap_err();
        assert!(refused.detail.starts_with("paramsOauth2ClientCredentials.tokenEndpoint"), "{refused:?}");
        let debug = format!("{:?}", callbacks.auth_of(Some(&basic)).unwrap());
        assert_eq!(debug, "Basic(u)");
    }

    #[test]
    fn certificate_references_name_the_configured_client_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let certificate =
            rcgen::CertificateParams::new(vec!["vnfm.example".into()]).unwrap().self_signed(&key).unwrap();
        let (cert_file, key_file) = (dir.path().join("client.pem"), dir.path().join("client.key"));
        std::fs::write(&cert_file, certificate.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        let settings = NotificationSettings {
            mtls_client_cert_file: cert_file,
            mtls_client_key_file: key_file,
            ..NotificationSettings::default()
        };
        let callbacks = callbacks(settings);
        let digest = sha2::Sha256::digest(certificate.der());
        use base64::Engine;
        let thumbprint = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
        let request = |reference: Value| {
            json!({"authType": ["OAUTH2_CLIENT_CERT"], "paramsOauth2ClientCert": {"clientId": "vnfm",
                "certificateRef": reference, "tokenEndpoint": "https://idp.example/token"}})
        };
        let auth = callbacks.auth_of(Some(&request(json!({"type": "x5t#S256", "value": thumbprint})))).unwrap();
        assert!(auth.client_certificate);
        assert!(matches!(auth.credentials, CallbackCredentials::OAuth2ClientCert { .. }));
        let colons = hex::encode(digest)
            .to_uppercase()
            .as_bytes()
            .chunks(2)
            .map(|pair| String::from_utf8_lossy(pair).into_owned())
            .collect::<Vec<_>>()
            .join(":");
        assert!(callbacks.auth_of(Some(&request(json!({"type": "sha256", "value": colons})))).is_ok());
        let other = callbacks.auth_of(Some(&request(json!({"type": "x5t#S256", "value": "AAAA"})))).unwrap_err();
        assert_eq!(other.status, 422);
        assert!(other.detail.contains("certificateRef"), "{other:?}");
        let unknown = callbacks.auth_of(Some(&request(json!({"type": "pkcs11", "value": "x"})))).unwrap_err();
        assert!(unknown.detail.contains("pkcs11"), "{unknown:?}");
        let tls = callbacks
            .auth_of(Some(&json!({"authType": ["TLS_CERT", "BASIC"],
            "paramsBasic": {"userName": "u", "password": "p"}})))
            .unwrap();
        assert_eq!(format!("{tls:?}"), "Basic(u)+TlsCert");
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
