//! Working beside an external NFVO: the `[nfvo]` settings and the SOL003 Grant client
//! (v3.3.1 clause 9 for VNF LCM v2, v2.6.1 for v1). In `local` mode (the default) the
//! VNFM grants itself, as before; in `external` mode every resource change asks the
//! NFVO first (`POST {endpoint}/grant/v1/grants`), and a VNF package whose VNFD is not
//! onboarded here is taken from the NFVO's VNF package management interface
//! (`GET {endpoint}/vnfpkgm/v2/onboarded_vnf_packages/{vnfdId}` and its `package_content`).
//!
//! The endpoint is the operator's, not a client's: it is not checked against the
//! `[egress]` SSRF guard (which confines URIs that API clients hand in), but it must be
//! HTTPS unless `allow_http` is set, and the `Location` of an asynchronous grant must be
//! on the endpoint's origin (the NFVO's credentials go nowhere else).

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use solgate_core::CoreError;
use solgate_core::callbacks::{CallbackAuth, CallbackCredentials, Callbacks};
use solgate_core::egress::Outbound;
use solgate_model::grant::{Grant, GrantRequest};

use crate::lcm::views::view;

/// The SOL003 Grant interface version sent in `Version` (SOL003 v3.3.1: 1.4.0).
pub const GRANT_API_VERSION: &str = "1.4.0";

/// The SOL003 VNF package management interface version sent in `Version` when packages are
/// taken from the NFVO (SOL003 v3.3.1: `/vnfpkgm/v2`, 2.1.0; Tacker's default too).
pub const VNFPKGM_API_VERSION: &str = "2.1.0";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NfvoMode {
    /// The VNFM grants every change itself.
    #[default]
    Local,
    /// Every change is granted by the NFVO at `endpoint`.
    External,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NfvoAuthType {
    /// No credentials (an NFVO that authenticates the VNFM by other means, e.g. mTLS at a proxy).
    #[default]
    None,
    /// HTTP Basic with `user_name` / `password`.
    Basic,
    /// OAuth 2.0 client credentials (RFC 6749 clause 4.4) at `token_endpoint` with
    /// `client_id` / `client_password`; the Bearer token is cached until it expires.
    Oauth2,
}

/// The `[nfvo]` table.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NfvoSettings {
    /// `local` (the VNFM grants itself) or `external` (the NFVO at `endpoint` grants).
    pub mode: NfvoMode,
    /// The NFVO's apiRoot, e.g. `https://nfvo.example.com:9890`; the Grant API is under
    /// `{endpoint}/grant/v1/`.
    pub endpoint: String,
    /// Accept an `http://` endpoint (tests, a loopback sidecar). Off: credentials and
    /// grants only travel over HTTPS (trusting the platform roots and `[tls] ca_file`).
    pub allow_http: bool,
    /// `none`, `basic` or `oauth2` (client credentials).
    pub auth_type: NfvoAuthType,
    /// HTTP Basic user name (`auth_type = "basic"`).
    pub user_name: String,
    /// HTTP Basic password (`auth_type = "basic"`).
    pub password: String,
    /// OAuth 2.0 token endpoint (`auth_type = "oauth2"`).
    pub token_endpoint: String,
    pub client_id: String,
    pub client_password: String,
    /// Seconds one HTTP exchange with the NFVO (or its token endpoint) may take.
    pub timeout_secs: u64,
    /// Seconds an asynchronous grant (202 + `Location`) may take to be decided.
    pub grant_timeout_secs: u64,
    /// Seconds between polls of an asynchronous grant when the NFVO sends no `Retry-After`.
    pub grant_poll_interval_secs: u64,
    /// Subscribe to the NFVO's VNF package change notifications (external mode) and serve
    /// them at `/nfvo/v1/package_notifications`: a cached package the NFVO disables or
    /// deletes is disabled or deleted here too.
    pub package_notifications: bool,
    /// The HTTP Basic user name the NFVO must send with its notifications (solgate gives it
    /// to the NFVO in the subscription).
    pub notification_user_name: String,
    /// The HTTP Basic password of the NFVO's notifications.
    pub notification_password: String,
}

impl Default for NfvoSettings {
    fn default() -> Self {
        Self {
            mode: NfvoMode::Local,
            endpoint: String::new(),
            allow_http: false,
            auth_type: NfvoAuthType::None,
            user_name: String::new(),
            password: String::new(),
            token_endpoint: String::new(),
            client_id: String::new(),
            client_password: String::new(),
            timeout_secs: 30,
            grant_timeout_secs: 300,
            grant_poll_interval_secs: 2,
            package_notifications: false,
            notification_user_name: String::new(),
            notification_password: String::new(),
        }
    }
}

impl std::fmt::Debug for NfvoSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Secrets never reach a log line.
        let redacted = |secret: &str| if secret.is_empty() { "" } else { "<redacted>" };
        f.debug_struct("NfvoSettings")
            .field("mode", &self.mode)
            .field("endpoint", &self.endpoint)
            .field("allow_http", &self.allow_http)
            .field("auth_type", &self.auth_type)
            .field("user_name", &self.user_name)
            .field("password", &redacted(&self.password))
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_password", &redacted(&self.client_password))
            .field("timeout_secs", &self.timeout_secs)
            .field("grant_timeout_secs", &self.grant_timeout_secs)
            .field("grant_poll_interval_secs", &self.grant_poll_interval_secs)
            .field("package_notifications", &self.package_notifications)
            .field("notification_user_name", &self.notification_user_name)
            .field("notification_password", &redacted(&self.notification_password))
            .finish()
    }
}

impl NfvoSettings {
    /// The settings are coherent; checked at start-up.
    pub fn validate(&self) -> Result<(), String> {
        if self.package_notifications {
            if self.mode != NfvoMode::External {
                return Err("nfvo.package_notifications needs nfvo.mode = \"external\"".into());
            }
            if self.notification_user_name.is_empty() || self.notification_password.is_empty() {
                return Err("nfvo.package_notifications needs nfvo.notification_user_name and \
                            nfvo.notification_password (the NFVO's credentials for its notifications)"
                    .into());
            }
        }
        if self.mode == NfvoMode::Local {
            return Ok(());
        }
        let check_uri = |key: &str, uri: &str| -> Result<url::Url, String> {
            let url = url::Url::parse(uri).map_err(|error| format!("nfvo.{key} {uri:?}: {error}"))?;
            match url.scheme() {
                "https" => Ok(url),
                "http" if self.allow_http => Ok(url),
                "http" => Err(format!("nfvo.{key} must be https (or set nfvo.allow_http = true)")),
                other => Err(format!("nfvo.{key}: scheme {other} is not supported")),
            }
        };
        if self.endpoint.is_empty() {
            return Err("nfvo.mode = \"external\" needs nfvo.endpoint".into());
        }
        check_uri("endpoint", &self.endpoint)?;
        match self.auth_type {
            NfvoAuthType::None => {}
            NfvoAuthType::Basic if self.user_name.is_empty() => {
                return Err("nfvo.auth_type = \"basic\" needs nfvo.user_name and nfvo.password".into());
            }
            NfvoAuthType::Basic => {}
            NfvoAuthType::Oauth2 => {
                if self.token_endpoint.is_empty() || self.client_id.is_empty() {
                    return Err(
                        "nfvo.auth_type = \"oauth2\" needs nfvo.token_endpoint, nfvo.client_id and nfvo.client_password"
                            .into(),
                    );
                }
                check_uri("token_endpoint", &self.token_endpoint)?;
            }
        }
        Ok(())
    }
}

/// Why no grant was obtained.
#[derive(Debug, Clone)]
pub enum GrantError {
    /// The NFVO refused (403, or another 4xx): its ProblemDetails. The operation ends
    /// before processing (ROLLED_BACK).
    Rejected(NfvoProblem),
    /// The NFVO could not be reached, failed (5xx), did not decide in time, or answered
    /// something that is not a Grant: the operation may be retried later (FAILED_TEMP).
    Unavailable(String),
}

/// The ProblemDetails (SOL013 clause 6.3) of an NFVO's refusal, kept to its standard
/// members (and made one when it sent none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NfvoProblem {
    pub status: u16,
    pub detail: String,
    pub title: String,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub problem_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

impl NfvoProblem {
    /// As an occurrence's `error`.
    pub fn to_value(&self) -> Value {
        json!(self)
    }
}

/// What the NFVO answered a GrantRequest.
#[derive(Debug, Clone)]
pub enum GrantAnswer {
    /// 201 (or 200): the Grant.
    Granted(Box<Grant>),
    /// 202: the Grant is to be fetched from `location` (absolute, on the endpoint's origin),
    /// first after `delay`.
    Pending { location: String, delay: Duration },
}

/// The client of the NFVO's Grant interface; one per conductor.
pub struct GrantClient {
    settings: NfvoSettings,
    http: reqwest::Client,
    /// OAuth 2.0 tokens come from the process's one token cache (the notifications' too).
    callbacks: Arc<Callbacks>,
    oauth: CallbackAuth,
}

impl std::fmt::Debug for GrantClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantClient").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl GrantClient {
    /// The client of an `external` NFVO; `None` in `local` mode.
    pub fn new(
        settings: &NfvoSettings,
        outbound: &Outbound,
        callbacks: Arc<Callbacks>,
    ) -> Result<Option<Self>, CoreError> {
        if settings.mode == NfvoMode::Local {
            return Ok(None);
        }
        settings.validate().map_err(CoreError::Setup)?;
        // rustls with the platform roots and `[tls] ca_file`; no redirects (a grant is
        // never re-sent elsewhere); no SSRF guard (see the module text).
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(settings.timeout_secs.max(1)));
        if let Some(pem) = outbound.extra_ca_pem() {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|error| CoreError::Setup(format!("tls.ca_file: {error}")))?;
            builder = builder.tls_certs_merge(certificates);
        }
        let http =
            builder.build().map_err(|error| CoreError::Setup(format!("nfvo: cannot build the client: {error}")))?;
        let oauth = CallbackAuth {
            credentials: CallbackCredentials::OAuth2ClientCredentials {
                token_endpoint: settings.token_endpoint.clone(),
                client_id: settings.client_id.clone(),
                client_password: settings.client_password.clone(),
            },
            client_certificate: false,
        };
        Ok(Some(Self { settings: settings.clone(), http, callbacks, oauth }))
    }

    pub fn settings(&self) -> &NfvoSettings {
        &self.settings
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.settings.timeout_secs.max(1))
    }

    fn grants_uri(&self) -> String {
        format!("{}/grant/v1/grants", self.settings.endpoint.trim_end_matches('/'))
    }

    /// Sends the GrantRequest: the Grant (201), or where to wait for it (202 + `Location`).
    pub async fn submit_grant(&self, request: &GrantRequest) -> Result<GrantAnswer, GrantError> {
        let body = json!(request);
        let response = self.send(reqwest::Method::POST, &self.grants_uri(), Some(&body)).await?;
        match response.status() {
            StatusCode::CREATED | StatusCode::OK => {
                read_grant(response).await.map(|grant| GrantAnswer::Granted(Box::new(grant)))
            }
            StatusCode::ACCEPTED => {
                let location = self.location_of(&response)?;
                let delay = retry_after(&response).unwrap_or(self.poll_interval());
                Ok(GrantAnswer::Pending { location, delay })
            }
            _ => Err(failure(response).await),
        }
    }

    /// Polls an asynchronous grant's `Location` (one that [`Self::submit_grant`] gave, maybe
    /// to a conductor that stopped since) until the NFVO decides.
    pub async fn await_grant(&self, location: &str, delay: Duration) -> Result<Grant, GrantError> {
        let on_endpoint = url::Url::parse(location).ok().zip(url::Url::parse(&self.grants_uri()).ok());
        if !on_endpoint.is_some_and(|(location, endpoint)| location.origin() == endpoint.origin()) {
            return Err(GrantError::Unavailable(
                "The NFVO's asynchronous grant: Location is not on nfvo.endpoint's origin.".into(),
            ));
        }
        let mut delay = delay;
        self.poll(location, &mut delay).await
    }

    /// Between polls when the NFVO sends no `Retry-After`.
    pub fn poll_interval(&self) -> Duration {
        Duration::from_secs(self.settings.grant_poll_interval_secs.max(1))
    }

    async fn poll(&self, location: &str, delay: &mut Duration) -> Result<Grant, GrantError> {
        let deadline = Instant::now() + Duration::from_secs(self.settings.grant_timeout_secs);
        loop {
            if Instant::now() + *delay > deadline {
                return Err(GrantError::Unavailable(format!(
                    "The NFVO did not decide the grant within {} s (nfvo.grant_timeout_secs).",
                    self.settings.grant_timeout_secs
                )));
            }
            tokio::time::sleep(*delay).await;
            let response = self.send(reqwest::Method::GET, location, None).await?;
            match response.status() {
                StatusCode::OK | StatusCode::CREATED => return read_grant(response).await,
                StatusCode::ACCEPTED => {
                    *delay = retry_after(&response).unwrap_or(self.poll_interval());
                }
                _ => return Err(failure(response).await),
            }
        }
    }

    /// The `Location` of a 202, resolved against the endpoint and kept on its origin.
    fn location_of(&self, response: &reqwest::Response) -> Result<String, GrantError> {
        let malformed = |detail: &str| GrantError::Unavailable(format!("The NFVO's asynchronous grant: {detail}."));
        let text = response
            .headers()
            .get(LOCATION)
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| malformed("202 without Location"))?;
        let base = url::Url::parse(&self.grants_uri()).map_err(|_| malformed("bad endpoint"))?;
        let url = base.join(text).map_err(|_| malformed("unreadable Location"))?;
        if url.origin() != base.origin() {
            return Err(malformed("Location is not on nfvo.endpoint's origin"));
        }
        Ok(url.to_string())
    }

    async fn send(
        &self,
        method: reqwest::Method,
        uri: &str,
        body: Option<&Value>,
    ) -> Result<reqwest::Response, GrantError> {
        self.send_as(method, uri, body, "application/json", GRANT_API_VERSION, Some(self.timeout())).await
    }

    /// One exchange with the NFVO with its credentials; `timeout` bounds the whole exchange
    /// (`None`: the caller bounds the body's transfer itself).
    async fn send_as(
        &self,
        method: reqwest::Method,
        uri: &str,
        body: Option<&Value>,
        accept: &str,
        version: &str,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, GrantError> {
        let mut fresh_token = false;
        loop {
            let mut request = self.http.request(method.clone(), uri).header(ACCEPT, accept).header("Version", version);
            if let Some(timeout) = timeout {
                request = request.timeout(timeout);
            }
            if let Some(body) = body {
                request = request.header(CONTENT_TYPE, "application/json").body(body.to_string());
            }
            match self.settings.auth_type {
                NfvoAuthType::None => {}
                NfvoAuthType::Basic => {
                    request = request.basic_auth(&self.settings.user_name, Some(&self.settings.password));
                }
                NfvoAuthType::Oauth2 => request = request.bearer_auth(self.token(fresh_token).await?),
            }
            let response = request.send().await.map_err(|error| {
                GrantError::Unavailable(format!(
                    "The NFVO cannot be reached: {}",
                    solgate_core::callbacks::cause_of(&error)
                ))
            })?;
            // A cached token may have been revoked before its expiry: one more try.
            if response.status() == StatusCode::UNAUTHORIZED
                && self.settings.auth_type == NfvoAuthType::Oauth2
                && !fresh_token
            {
                fresh_token = true;
                continue;
            }
            return Ok(response);
        }
    }

    /// `{endpoint}/vnfpkgm/v2/onboarded_vnf_packages/{vnfdId}` (with `suffix`), the vnfdId
    /// one path segment whatever it holds.
    fn onboarded_package_uri(&self, vnfd_id: &str, suffix: &str) -> Result<url::Url, GrantError> {
        let mut url = url::Url::parse(&self.settings.endpoint)
            .map_err(|error| GrantError::Unavailable(format!("nfvo.endpoint: {error}")))?;
        url.path_segments_mut()
            .map_err(|()| GrantError::Unavailable("nfvo.endpoint cannot be a base URL".into()))?
            .pop_if_empty()
            .extend(["vnfpkgm", "v2", "onboarded_vnf_packages", vnfd_id])
            .extend(suffix.split('/').filter(|part| !part.is_empty()));
        Ok(url)
    }

    /// The NFVO's VnfPkgInfo of the package that holds VNFD `vnfd_id` (SOL003 v3.3.1
    /// clause 10.4.3). A 4xx (404: the NFVO has no such package) is `Rejected`.
    pub async fn onboarded_package(&self, vnfd_id: &str) -> Result<Value, GrantError> {
        let uri = self.onboarded_package_uri(vnfd_id, "")?;
        let response = self
            .send_as(
                reqwest::Method::GET,
                uri.as_str(),
                None,
                "application/json",
                VNFPKGM_API_VERSION,
                Some(self.timeout()),
            )
            .await?;
        if !response.status().is_success() {
            return Err(failure(response).await);
        }
        let info: Value = response
            .json()
            .await
            .map_err(|error| GrantError::Unavailable(format!("The NFVO's VnfPkgInfo is not JSON: {error}")))?;
        if !info.is_object() {
            return Err(GrantError::Unavailable("The NFVO's VnfPkgInfo is not an object.".into()));
        }
        Ok(info)
    }

    /// The response whose body is the package's content (a zip, clause 10.4.5); the caller
    /// reads it within its own size and time bounds.
    pub async fn onboarded_package_content(&self, vnfd_id: &str) -> Result<reqwest::Response, GrantError> {
        let uri = self.onboarded_package_uri(vnfd_id, "package_content")?;
        let response = self
            .send_as(reqwest::Method::GET, uri.as_str(), None, "application/zip", VNFPKGM_API_VERSION, None)
            .await?;
        if !response.status().is_success() {
            return Err(failure(response).await);
        }
        Ok(response)
    }

    /// `{endpoint}/vnfpkgm/v2/subscriptions`.
    fn package_subscriptions_uri(&self) -> String {
        format!("{}/vnfpkgm/v2/subscriptions", self.settings.endpoint.trim_end_matches('/'))
    }

    /// The NFVO's VNF package subscriptions (SOL003 v3.3.1 clause 10.4.7.3.2, the first
    /// page when it pages): the PkgmSubscriptions it answers with.
    pub async fn package_subscriptions(&self) -> Result<Vec<Value>, GrantError> {
        let uri = self.package_subscriptions_uri();
        let response = self
            .send_as(reqwest::Method::GET, &uri, None, "application/json", VNFPKGM_API_VERSION, Some(self.timeout()))
            .await?;
        if !response.status().is_success() {
            return Err(failure(response).await);
        }
        match response.json::<Value>().await {
            Ok(Value::Array(subscriptions)) => Ok(subscriptions),
            Ok(_) => Err(GrantError::Unavailable("The NFVO's list of subscriptions is not an array.".into())),
            Err(error) => {
                Err(GrantError::Unavailable(format!("The NFVO's list of subscriptions is not JSON: {error}")))
            }
        }
    }

    /// Subscribes with a PkgmSubscriptionRequest (clause 10.4.7.3.1): 201 (created) and 303
    /// (the NFVO has an equal one already) both leave solgate subscribed.
    pub async fn subscribe_to_packages(&self, request: &Value) -> Result<(), GrantError> {
        let uri = self.package_subscriptions_uri();
        let response = self
            .send_as(
                reqwest::Method::POST,
                &uri,
                Some(request),
                "application/json",
                VNFPKGM_API_VERSION,
                Some(self.timeout()),
            )
            .await?;
        match response.status() {
            StatusCode::CREATED | StatusCode::SEE_OTHER => Ok(()),
            _ => Err(failure(response).await),
        }
    }

    async fn token(&self, renew: bool) -> Result<String, GrantError> {
        self.callbacks.token(&self.oauth, renew, self.timeout()).await.map_err(|failure| {
            GrantError::Unavailable(format!("No OAuth 2.0 access token from nfvo.token_endpoint: {}", failure.cause))
        })
    }
}

/// The PkgmSubscriptionRequest solgate sends (SOL003 v3.3.1 clause 10.5.2.2): change
/// notifications only, to `callback_uri`, with the notification credentials as HTTP Basic.
pub fn package_subscription_request(settings: &NfvoSettings, callback_uri: &str) -> Value {
    json!({
        "filter": {"notificationTypes": ["VnfPackageChangeNotification"]},
        "callbackUri": callback_uri,
        "authentication": {
            "authType": ["BASIC"],
            "paramsBasic": {
                "userName": settings.notification_user_name,
                "password": settings.notification_password,
            },
        },
    })
}

/// Makes sure the NFVO has one subscription for `callback_uri`: looks for it among the
/// NFVO's subscriptions and subscribes when there is none. An NFVO that cannot be reached
/// or refuses is asked again, 1 s after the first failure, doubling up to 60 s, until it
/// answers or `stop` is cancelled.
pub async fn keep_package_subscription(
    client: Arc<GrantClient>,
    callback_uri: String,
    stop: tokio_util::sync::CancellationToken,
) {
    const FIRST_DELAY: Duration = Duration::from_secs(1);
    const MAX_DELAY: Duration = Duration::from_secs(60);
    let mut delay = FIRST_DELAY;
    loop {
        let attempt = async {
            let subscriptions = client.package_subscriptions().await?;
            let subscribed = |subscription: &Value| {
                view::<PkgmSubscription>(subscription).callback_uri.is_some_and(|uri| uri == callback_uri)
            };
            if subscriptions.iter().any(subscribed) {
                return Ok(false);
            }
            let request = package_subscription_request(&client.settings, &callback_uri);
            client.subscribe_to_packages(&request).await.map(|()| true)
        };
        let outcome = tokio::select! {
            () = stop.cancelled() => return,
            outcome = attempt => outcome,
        };
        match outcome {
            Ok(true) => {
                tracing::info!(callback_uri = %callback_uri, "subscribed to the NFVO's VNF package notifications");
                return;
            }
            Ok(false) => {
                tracing::info!(callback_uri = %callback_uri, "the NFVO's VNF package subscription is in place");
                return;
            }
            Err(error) => {
                let cause = match error {
                    GrantError::Rejected(problem) => problem.detail,
                    GrantError::Unavailable(cause) => cause,
                };
                tracing::warn!(%cause, retry_in_secs = delay.as_secs(),
                    "cannot subscribe to the NFVO's VNF package notifications; trying again");
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(MAX_DELAY);
    }
}

/// SOL003 clause 10.5.2.4 PkgmSubscription, the member read here.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PkgmSubscription {
    callback_uri: Option<String>,
}

fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let seconds: u64 = response.headers().get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds.min(60)))
}

async fn read_grant(response: reqwest::Response) -> Result<Grant, GrantError> {
    let grant: Value = response
        .json()
        .await
        .map_err(|error| GrantError::Unavailable(format!("The NFVO's Grant is not JSON: {error}")))?;
    let grant: Grant = serde_json::from_value(grant)
        .map_err(|error| GrantError::Unavailable(format!("The NFVO's answer is not a Grant: {error}")))?;
    if grant.id.is_empty() {
        return Err(GrantError::Unavailable("The NFVO's Grant has no id.".into()));
    }
    Ok(grant)
}

/// A 4xx is the NFVO's decision (ROLLED_BACK); anything else may pass (FAILED_TEMP).
async fn failure(response: reqwest::Response) -> GrantError {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if status.is_client_error() && status != StatusCode::UNAUTHORIZED && status != StatusCode::TOO_MANY_REQUESTS {
        GrantError::Rejected(problem_of(status, &body))
    } else {
        let detail = view::<ProblemBody>(&body).detail().map(|detail| format!(": {detail}")).unwrap_or_default();
        GrantError::Unavailable(format!("The NFVO answered with HTTP {}{detail}", status.as_u16()))
    }
}

/// An NFVO's error body as it came: a ProblemDetails, maybe, of any member types.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ProblemBody {
    detail: Option<Value>,
    title: Option<Value>,
    #[serde(rename = "type")]
    problem_type: Option<Value>,
    instance: Option<Value>,
}

impl ProblemBody {
    fn detail(&self) -> Option<&str> {
        self.detail.as_ref().and_then(Value::as_str)
    }
}

/// The NFVO's ProblemDetails, kept to its standard members (and made one when it sent none).
fn problem_of(status: StatusCode, body: &Value) -> NfvoProblem {
    let body: ProblemBody = view(body);
    let text = |member: &Option<Value>| member.as_ref().and_then(Value::as_str).map(str::to_owned);
    NfvoProblem {
        status: status.as_u16(),
        detail: body
            .detail()
            .map_or_else(|| format!("The NFVO rejected the grant (HTTP {}).", status.as_u16()), str::to_owned),
        title: text(&body.title).or(status.canonical_reason().map(str::to_owned)).unwrap_or("Grant rejected".into()),
        problem_type: text(&body.problem_type),
        instance: text(&body.instance),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_mode_needs_an_https_endpoint_and_complete_credentials() {
        let mut settings = NfvoSettings { mode: NfvoMode::External, ..NfvoSettings::default() };
        assert!(settings.validate().unwrap_err().contains("nfvo.endpoint"));
        settings.endpoint = "http://nfvo.example.com".into();
        assert!(settings.validate().unwrap_err().contains("https"));
        settings.allow_http = true;
        assert!(settings.validate().is_ok());
        settings.auth_type = NfvoAuthType::Oauth2;
        assert!(settings.validate().unwrap_err().contains("token_endpoint"));
        assert!(NfvoSettings::default().validate().is_ok(), "local mode needs nothing");
    }

    #[test]
    fn package_notifications_need_external_mode_and_credentials() {
        let mut settings = NfvoSettings { package_notifications: true, ..NfvoSettings::default() };
        assert!(settings.validate().unwrap_err().contains("mode = \"external\""));
        settings.mode = NfvoMode::External;
        settings.endpoint = "https://nfvo.example.com".into();
        assert!(settings.validate().unwrap_err().contains("nfvo.notification_user_name"));
        settings.notification_user_name = "nfvo".into();
        assert!(settings.validate().unwrap_err().contains("nfvo.notification_password"));
        settings.notification_password = "s3cret".into();
        assert!(settings.validate().is_ok());
        let request = package_subscription_request(&settings, "https://vnfm/nfvo/v1/package_notifications");
        assert_eq!(request["authentication"]["paramsBasic"], json!({"userName": "nfvo", "password": "s3cret"}));
    }

    #[test]
    fn debug_hides_the_secrets() {
        let settings = NfvoSettings {
            password: "s3cret-basic".into(),
            client_password: "s3cret-oauth".into(),
            notification_password: "s3cret-notification".into(),
            ..Default::default()
        };
        let text = format!("{settings:?}");
        assert!(!text.contains("s3cret"), "{text}");
    }

    #[test]
    fn a_rejection_keeps_the_nfvo_problem_details() {
        let problem = problem_of(
            StatusCode::FORBIDDEN,
            &json!({"status": 403, "title": "Forbidden", "detail": "no capacity in zone A", "extra": 1}),
        );
        assert_eq!(problem.to_value(), json!({"status": 403, "title": "Forbidden", "detail": "no capacity in zone A"}));
    }
}
