//! Notification delivery: POSTs the rows of the notification outbox to their
//! subscriptions' callbacks, and the callback test a new subscription must pass.
//!
//! - At least once: a row is marked delivered only after its callback answered 2xx; a
//!   failure is retried with exponential backoff (with jitter, up to a ceiling) until
//!   `max_attempts` or `max_age`, then it is GIVEN_UP with a warning in the log. The
//!   notification's `id` is fixed when it is queued, so every attempt carries the same id.
//! - In order per subscription: only the oldest pending row of a subscription (its head)
//!   is ever attempted; the next one waits until the head is delivered or given up.
//! - Independent subscriptions: each head is delivered by its own task (bounded by
//!   `max_concurrent_deliveries`), with a per-request timeout, so a slow or dead callback
//!   only delays its own subscription.
//! - Several conductors: a worker claims a head with a lease (`claimed_by`,
//!   `claim_expires_at`) before sending it; a dead worker's claims expire and another
//!   worker takes over. This works the same on SQLite and PostgreSQL.
//! - Tacker sends each notification once from a daemon thread and only logs failures
//!   (its defect 8); nothing here is lost on a restart.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sha2::Digest;
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_db::repo::notifications::{self, NotificationRow};
use solgate_db::repo::{now_text, parse_text, to_text};
use solgate_schemas::{Api, Registry, VersionEntry};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::common::notify;
use crate::context::{ConductorContext, ConductorError};
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

/// Only `http://` can be reached: reqwest is built without TLS (rust-crates.md).
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
struct Failure {
    client: String,
    cause: String,
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

fn transport_failure(error: &reqwest::Error, timeout: Duration, what: &str) -> Failure {
    let client = if error.is_timeout() {
        format!("The {what} did not answer within {} seconds.", timeout.as_secs())
    } else {
        format!("The {what} could not be reached.")
    };
    Failure { client, cause: cause_of(error) }
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
    pub fn new(settings: NotificationSettings) -> Result<Self, ConductorError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(settings.request_timeout_secs.max(1)))
            // A redirect would carry the notification (and its credentials) elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|error| ConductorError::Other(format!("cannot build the notification HTTP client: {error}")))?;
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
    async fn exchange(
        &self,
        method: Method,
        uri: &str,
        auth: &CallbackAuth,
        version: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<StatusCode, Failure> {
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
    async fn token(&self, auth: &CallbackAuth, renew: bool, timeout: Duration) -> Result<String, Failure> {
        let CallbackAuth::OAuth2ClientCredentials { token_endpoint, client_id, client_password } = auth else {
            return Err(Failure { client: String::new(), cause: "not an OAuth 2.0 subscription".into() });
        };
        let key = (token_endpoint.clone(), client_id.clone(), hex::encode(sha2::Sha256::digest(client_password)));
        if !renew {
            let tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(cached) = tokens.get(&key).filter(|cached| cached.renew_at > Instant::now()) {
                return Ok(cached.token.clone());
            }
        }
        let no_token = |cause: String| Failure {
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

/// Delay before attempt `failures + 1`: `initial * 2^(failures - 1)` up to the ceiling,
/// then "equal jitter" (half fixed, half random), so that subscriptions failing together
/// do not retry in lockstep.
pub fn backoff(settings: &NotificationSettings, failures: u32) -> Duration {
    let ceiling = settings.max_backoff_secs.saturating_mul(1000).max(1);
    let exponent = failures.saturating_sub(1).min(40);
    let base = settings.initial_backoff_ms.max(1).saturating_mul(1u64 << exponent).min(ceiling);
    let half = base / 2;
    let random = uuid::Uuid::new_v4().as_u128() % u128::from(half + 1);
    Duration::from_millis(base - half + u64::try_from(random).unwrap_or(0))
}

/// `time` moved `by` into the future (or the past), as stored. Stored times compare as
/// text, so results stay within years 1970..=9999 (settings too large for the calendar
/// saturate instead of panicking or sorting wrongly).
fn shifted(time: chrono::DateTime<chrono::Utc>, by: Duration, forward: bool) -> String {
    let latest = chrono::DateTime::from_timestamp(253_402_300_799, 0).unwrap_or(time);
    let earliest = chrono::DateTime::UNIX_EPOCH;
    let by = chrono::Duration::from_std(by).unwrap_or(chrono::Duration::MAX);
    let moved = if forward { time.checked_add_signed(by) } else { time.checked_sub_signed(by) };
    to_text(moved.unwrap_or(if forward { latest } else { earliest }).clamp(earliest, latest))
}

/// Notifications one task delivers in a row for its subscription before it gives its
/// permit back (so a long queue cannot keep other subscriptions waiting for a permit).
const MAX_IN_A_ROW: usize = 32;

struct Worker {
    ctx: Arc<ConductorContext>,
    /// Subscriptions whose queue a task of this worker is delivering.
    in_flight: Mutex<HashSet<String>>,
    permits: Arc<Semaphore>,
    stop: CancellationToken,
}

/// Delivers until `stop` is cancelled.
pub async fn run(ctx: Arc<ConductorContext>, stop: CancellationToken) {
    let settings = ctx.callbacks.settings().clone();
    let worker = Arc::new(Worker {
        ctx,
        in_flight: Mutex::new(HashSet::new()),
        permits: Arc::new(Semaphore::new(settings.max_concurrent_deliveries.max(1))),
        stop: stop.clone(),
    });
    let mut wake = notify::wake_signal();
    let poll = Duration::from_millis(settings.poll_interval_ms.max(10));
    let mut tasks = JoinSet::new();
    let mut housekeeping_due = Instant::now();
    let mut db_trouble = false;
    loop {
        while tasks.try_join_next().is_some() {}
        match worker.dispatch_due(&mut tasks).await {
            Ok(()) => db_trouble = false,
            Err(error) => {
                // Once per outage, not once per poll.
                if !db_trouble {
                    tracing::warn!(%error, "notification delivery cannot read the outbox; retrying");
                }
                db_trouble = true;
            }
        }
        if Instant::now() >= housekeeping_due {
            housekeeping_due = Instant::now() + Duration::from_secs(10);
            worker.housekeeping(&settings).await;
        }
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(poll) => {}
            changed = wake.changed() => {
                if changed.is_ok() {
                    // The rows were written inside a transaction that may not have
                    // committed yet; give it a moment.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                } else {
                    tokio::time::sleep(poll).await;
                }
            }
        }
    }
    // Attempts under way get a moment; what is cut off is retried when its claim expires
    // (it may then arrive twice, with the same id).
    let grace = tokio::time::timeout(Duration::from_secs(2), async { while tasks.join_next().await.is_some() {} });
    if grace.await.is_err() {
        tasks.abort_all();
    }
}

impl Worker {
    /// Claims due heads of subscriptions nobody is delivering and starts a task for each,
    /// as far as permits allow.
    async fn dispatch_due(self: &Arc<Self>, tasks: &mut JoinSet<()>) -> Result<(), ConductorError> {
        let free = self.permits.available_permits();
        if free == 0 {
            return Ok(());
        }
        let busy = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).len();
        let limit = i64::try_from(free + busy).unwrap_or(i64::MAX);
        let heads = self.ctx.db_run(move |conn| notifications::due_heads(conn, &now_text(), limit)).await?;
        for head in heads {
            if self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).contains(&head.subscription_id) {
                continue;
            }
            let Ok(permit) = self.permits.clone().try_acquire_owned() else { break };
            if !self.claim(head.id).await? {
                continue;
            }
            self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).insert(head.subscription_id.clone());
            let worker = self.clone();
            tasks.spawn(async move { worker.deliver_queue(head, permit).await });
        }
        Ok(())
    }

    async fn claim(&self, id: i64) -> Result<bool, ConductorError> {
        let me = self.ctx.id.clone();
        let lease = Duration::from_secs(self.ctx.callbacks.settings().claim_timeout_secs);
        self.ctx
            .db_run(move |conn| {
                let now = chrono::Utc::now();
                notifications::claim(conn, id, &me, &to_text(now), &shifted(now, lease, true))
            })
            .await
    }

    /// Delivers a claimed head, then (while that succeeds) the subscription's next ones.
    async fn deliver_queue(self: Arc<Self>, head: NotificationRow, permit: OwnedSemaphorePermit) {
        let subscription_id = head.subscription_id.clone();
        let mut row = head;
        for _ in 0..MAX_IN_A_ROW {
            let delivered = match self.attempt(&row).await {
                Ok(delivered) => delivered,
                Err(error) => {
                    // The claim expires and the row is tried again.
                    tracing::warn!(%error, notification = %row.notification_id, "could not record a delivery attempt");
                    false
                }
            };
            if !delivered || self.stop.is_cancelled() {
                break;
            }
            let subscription = subscription_id.clone();
            let next = self.ctx.db_run(move |conn| notifications::due_head_of(conn, &subscription, &now_text())).await;
            let Ok(Some(next)) = next else { break };
            if !matches!(self.claim(next.id).await, Ok(true)) {
                break;
            }
            row = next;
        }
        self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).remove(&subscription_id);
        drop(permit);
    }

    /// One attempt at one claimed row; true if it was delivered.
    async fn attempt(&self, row: &NotificationRow) -> Result<bool, ConductorError> {
        let ctx = &self.ctx;
        let settings = ctx.callbacks.settings();
        let Some(major) = u64::try_from(row.major).ok().and_then(LcmMajor::from_major) else {
            return self.failed(row, "the notification names an unknown API major version", true).await;
        };
        let subscription_id = row.subscription_id.clone();
        let subscription = ctx.db_run(move |conn| lcm::find_subscription(conn, major, &subscription_id)).await?;
        let Some(subscription) = subscription else {
            // Deleted meanwhile: its queue goes with it.
            let subscription_id = row.subscription_id.clone();
            ctx.db_run(move |conn| notifications::drop_for_subscription(conn, &subscription_id)).await?;
            return Ok(false);
        };
        let auth = match CallbackAuth::from_authentication(subscription.authentication.as_ref()) {
            Ok(auth) => auth,
            Err(refused) => return self.failed(row, &refused.detail, true).await,
        };
        let Some(entry) = notification_version(&ctx.registry, major.number(), &subscription.body) else {
            return self.failed(row, "no version of the subscription's major is served", true).await;
        };
        // A subscriber gets the shape of its version: fields it does not define are left out.
        let body = entry.dictionary.render(&row.notification_type, &row.body);
        let version = entry.version_string();
        let timeout = Duration::from_secs(settings.request_timeout_secs.max(1));
        match ctx
            .callbacks
            .exchange(Method::POST, &subscription.callback_uri, &auth, &version, Some(&body), timeout)
            .await
        {
            Ok(status) if status.is_success() => {
                if status != StatusCode::NO_CONTENT {
                    // SOL003 expects 204; any 2xx means the notification arrived.
                    tracing::debug!(%status, subscription = %row.subscription_id, "callback answered 2xx other than 204");
                }
                let (id, me) = (row.id, ctx.id.clone());
                if ctx.db_run(move |conn| notifications::mark_delivered(conn, id, &me)).await? {
                    ctx.metrics.notifications.with_label_values(&["delivered"]).inc();
                }
                Ok(true)
            }
            Ok(status) => self.failed(row, &format!("the callback answered HTTP {}", status.as_u16()), false).await,
            Err(failure) => self.failed(row, &failure.cause, false).await,
        }
    }

    /// Records a failed attempt: a retry after the backoff, or GIVEN_UP once the attempts
    /// or the age are used up (or `permanent`). Returns false (not delivered).
    async fn failed(&self, row: &NotificationRow, error: &str, permanent: bool) -> Result<bool, ConductorError> {
        let ctx = &self.ctx;
        let settings = ctx.callbacks.settings();
        let attempts = u32::try_from(row.attempts).unwrap_or(0).saturating_add(1);
        let now = chrono::Utc::now();
        let age = parse_text(&row.created_at).map(|created| now - created).unwrap_or_default();
        let too_old = age.num_seconds() >= i64::try_from(settings.max_age_secs).unwrap_or(i64::MAX);
        let give_up = permanent || attempts >= settings.max_attempts.max(1) || too_old;
        let delay = backoff(settings, attempts);
        let next = shifted(now, delay, true);
        let (id, me, text) = (row.id, ctx.id.clone(), error.to_owned());
        let recorded = ctx.db_run(move |conn| notifications::mark_failed(conn, id, &me, &text, &next, give_up)).await?;
        if !recorded {
            return Ok(false);
        }
        if give_up {
            ctx.metrics.notifications.with_label_values(&["given_up"]).inc();
            tracing::warn!(
                subscription = %row.subscription_id,
                notification = %row.notification_id,
                notification_type = %row.notification_type,
                attempts,
                last_error = %error,
                "notification given up; the subscription's next notification proceeds"
            );
        } else {
            ctx.metrics.notifications.with_label_values(&["retried"]).inc();
            tracing::debug!(
                subscription = %row.subscription_id,
                notification = %row.notification_id,
                attempts,
                retry_in_ms = delay.as_millis(),
                error,
                "notification delivery failed; will retry"
            );
        }
        Ok(false)
    }

    /// The pending gauge, and removal of finished rows past their retention.
    async fn housekeeping(&self, settings: &NotificationSettings) {
        let keep = Duration::from_secs(settings.keep_finished_secs);
        let result = self
            .ctx
            .db_run(move |conn| {
                let pending = notifications::count_by_state(conn, notifications::PENDING)?;
                let purged = notifications::purge_finished(conn, &shifted(chrono::Utc::now(), keep, false))?;
                Ok((pending, purged))
            })
            .await;
        match result {
            Ok((pending, purged)) => {
                self.ctx.metrics.notifications_pending.set(pending);
                if purged > 0 {
                    tracing::debug!(purged, "finished notifications removed");
                }
            }
            Err(error) => tracing::debug!(%error, "notification housekeeping skipped"),
        }
    }
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
    fn huge_settings_saturate() {
        let now = chrono::Utc::now();
        assert!(shifted(now, Duration::from_secs(u64::MAX), true) > to_text(now));
        assert!(shifted(now, Duration::from_secs(u64::MAX), false) < to_text(now));
        assert_eq!(shifted(now, Duration::ZERO, true), to_text(now));
        let settings =
            NotificationSettings { initial_backoff_ms: u64::MAX, max_backoff_secs: u64::MAX, ..Default::default() };
        assert!(backoff(&settings, 100) >= Duration::from_millis(u64::MAX / 2));
    }

    #[test]
    fn backoff_grows_to_the_ceiling_with_jitter() {
        let settings = NotificationSettings { initial_backoff_ms: 1000, max_backoff_secs: 10, ..Default::default() };
        for (failures, base) in
            [(1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, 10_000), (30, 10_000), (u32::MAX, 10_000)]
        {
            let delay = backoff(&settings, failures).as_millis();
            assert!(
                delay >= base / 2 && delay <= base,
                "failures {failures}: {delay} ms not in [{}, {base}]",
                base / 2
            );
        }
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
