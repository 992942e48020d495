//! `[auth] mode = "keystone"`: OpenStack Keystone tokens in `X-Auth-Token`, as Tacker takes
//! them through keystonemiddleware, so python-tackerclient with `OS_AUTH_TYPE=password` works
//! unchanged. A token is validated with Keystone v3 (`GET /v3/auth/tokens`, the token in
//! `X-Subject-Token`, solgate's own service token in `X-Auth-Token`); its roles and project
//! become the principal. A valid token is remembered until it expires, but for at most
//! `cache_secs`: that bounds how long a revoked token keeps working.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Principal, Role};
use crate::error::{ApiError, ErrorKind};

/// The `[auth.keystone]` table.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeystoneSettings {
    /// Keystone's identity API, as clients' `OS_AUTH_URL` names it
    /// (`https://keystone.example.com:5000/v3`; `/v3` is added when missing). 401 answers
    /// point clients to it (`WWW-Authenticate: Keystone uri="..."`).
    pub auth_url: String,
    /// solgate's service user, which validates tokens (Keystone's default policy lets a
    /// user with the `admin` or `service` role validate other users' tokens).
    pub username: String,
    pub password: String,
    pub user_domain_name: String,
    /// The project the service token is scoped to.
    pub project_name: String,
    pub project_domain_name: String,
    /// How long a valid token is remembered, at most (never past its `expires_at`); a token
    /// revoked in Keystone keeps working here for up to this long. 0: ask Keystone every time.
    pub cache_secs: u64,
    /// Timeout of each request to Keystone; Keystone unreachable or slow is 503, not 401.
    pub timeout_secs: u64,
}

impl Default for KeystoneSettings {
    fn default() -> Self {
        Self {
            auth_url: String::new(),
            username: String::new(),
            password: String::new(),
            user_domain_name: "Default".into(),
            project_name: "service".into(),
            project_domain_name: "Default".into(),
            cache_secs: 60,
            timeout_secs: 10,
        }
    }
}

impl std::fmt::Debug for KeystoneSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeystoneSettings")
            .field("auth_url", &self.auth_url)
            .field("username", &self.username)
            .field("project_name", &self.project_name)
            .field("cache_secs", &self.cache_secs)
            .finish_non_exhaustive()
    }
}

/// Tokens remembered at most (expired ones are dropped first, then all).
const CACHE_CAPACITY: usize = 10_000;
/// Longer tokens are refused without asking Keystone (fernet tokens are about 200 bytes,
/// PKI-era ones a few KB).
const MAX_TOKEN_LEN: usize = 8192;
/// Seconds a client is told to wait when Keystone cannot answer.
const RETRY_AFTER_SECS: u32 = 5;

type Digest = [u8; 32];

/// Validates Keystone tokens for [`super::Authenticator`].
pub struct Keystone {
    settings: KeystoneSettings,
    /// Ends in `/v3`, no trailing slash.
    api: String,
    http: reqwest::Client,
    service: tokio::sync::Mutex<Option<ServiceToken>>,
    /// Valid tokens by SHA-256 of the token (the tokens themselves are not kept).
    cache: Mutex<HashMap<Digest, (Principal, DateTime<Utc>)>>,
    /// One validation per token at a time: concurrent requests with the same new token wait
    /// for the first one's answer instead of each asking Keystone.
    inflight: Mutex<HashMap<Digest, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for Keystone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keystone").field("settings", &self.settings).finish_non_exhaustive()
    }
}

struct ServiceToken {
    value: String,
    renew_at: DateTime<Utc>,
}

/// Why a token was not accepted.
#[derive(Debug)]
enum Failure {
    /// Keystone says the token is not valid (or it cannot be one): 401.
    Invalid(&'static str),
    /// Keystone could not be asked, or refused solgate's own credentials: 503.
    Unavailable(String),
}

impl Keystone {
    pub fn new(settings: &KeystoneSettings, outbound: &solgate_core::egress::Outbound) -> Result<Self, String> {
        let url = url::Url::parse(&settings.auth_url)
            .map_err(|error| format!("auth.keystone.auth_url `{}`: {error}", settings.auth_url))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(format!("auth.keystone.auth_url `{}` is not an http(s) URL", settings.auth_url));
        }
        if settings.username.is_empty() || settings.password.is_empty() {
            return Err("auth.keystone.username and auth.keystone.password (solgate's service user) are required \
                        with auth.mode = \"keystone\""
                .into());
        }
        let loopback = matches!(url.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
            || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
            || url.host_str() == Some("localhost");
        if url.scheme() == "http" && !loopback {
            tracing::warn!(auth_url = %settings.auth_url, "auth.keystone.auth_url is plain http: tokens and the service password cross the network unencrypted");
        }
        let base = settings.auth_url.trim_end_matches('/');
        let api = if base.ends_with("/v3") { base.to_owned() } else { format!("{base}/v3") };
        // Keystone is the operator's, not a URI a client handed in: the trust anchors of
        // `[tls]` apply, the `[egress]` guard does not. No redirect is followed (it would
        // carry the service token elsewhere).
        let timeout = Duration::from_secs(settings.timeout_secs.max(1));
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout)
            .timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(30));
        if let Some(pem) = outbound.extra_ca_pem() {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|error| format!("tls.ca_file: {error}"))?;
            builder = builder.tls_certs_merge(certificates);
        }
        let http = builder.build().map_err(|error| format!("cannot build the Keystone HTTP client: {error}"))?;
        Ok(Self {
            settings: settings.clone(),
            api,
            http,
            service: tokio::sync::Mutex::new(None),
            cache: Mutex::default(),
            inflight: Mutex::default(),
        })
    }

    /// The principal of an `X-Auth-Token` (`None`: the header is missing or empty), or the
    /// 401/503 that refuses it.
    pub async fn authenticate(&self, token: Option<&str>) -> Result<Principal, ApiError> {
        let Some(token) = token.map(str::trim).filter(|token| !token.is_empty()) else {
            return Err(self.unauthorized("A Keystone token is required (X-Auth-Token)."));
        };
        match self.principal(token).await {
            Ok(principal) => Ok(principal),
            Err(Failure::Invalid(detail)) => Err(self.unauthorized(detail)),
            Err(Failure::Unavailable(cause)) => {
                tracing::error!(%cause, "Keystone token validation failed");
                Err(ApiError::unavailable(
                    "The identity service (Keystone) could not validate the token; try again later.",
                    RETRY_AFTER_SECS,
                ))
            }
        }
    }

    /// 401 as keystonemiddleware answers it: `WWW-Authenticate: Keystone uri="<auth_url>"`.
    fn unauthorized(&self, detail: &str) -> ApiError {
        let challenge = format!("Keystone uri=\"{}\"", self.settings.auth_url.replace('"', "%22"));
        ApiError::new(ErrorKind::Unauthorized { challenge }, detail)
    }

    async fn principal(&self, token: &str) -> Result<Principal, Failure> {
        if token.len() > MAX_TOKEN_LEN || !token.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(Failure::Invalid("The token is not a Keystone token."));
        }
        let digest = digest(token);
        if let Some(principal) = self.cached(&digest) {
            return Ok(principal);
        }
        let gate = {
            let mut inflight = self.inflight.lock().unwrap_or_else(PoisonError::into_inner);
            inflight.entry(digest).or_default().clone()
        };
        let result = {
            let _turn = gate.lock().await;
            // The request ahead of this one may have validated the same token.
            match self.cached(&digest) {
                Some(principal) => Ok(principal),
                None => self.validate(token, &digest).await,
            }
        };
        let mut inflight = self.inflight.lock().unwrap_or_else(PoisonError::into_inner);
        if inflight.get(&digest).is_some_and(|entry| Arc::ptr_eq(entry, &gate)) && Arc::strong_count(&gate) <= 2 {
            inflight.remove(&digest);
        }
        result
    }

    fn cached(&self, digest: &Digest) -> Option<Principal> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.get(digest).filter(|(_, until)| *until > Utc::now()).map(|(principal, _)| principal.clone())
    }

    async fn validate(&self, token: &str, digest: &Digest) -> Result<Principal, Failure> {
        let mut renewed = false;
        loop {
            let service = self.service_token(renewed).await?;
            let request = self
                .http
                .get(format!("{}/auth/tokens?nocatalog", self.api))
                .header("X-Auth-Token", service)
                .header("X-Subject-Token", token)
                .header("Accept", "application/json");
            let response = send(request)
                .await
                .map_err(|error| Failure::Unavailable(format!("GET {}/auth/tokens: {}", self.api, cause(&error))))?;
            let status = response.status();
            match status.as_u16() {
                200 => {
                    let body: TokenBody = response.json().await.map_err(|error| {
                        Failure::Unavailable(format!("Keystone's token validation answer: {}", cause(&error)))
                    })?;
                    let now = Utc::now();
                    let (principal, expires_at) = principal_of(&body.token, now)?;
                    let cache_for =
                        chrono::Duration::seconds(i64::try_from(self.settings.cache_secs).unwrap_or(i64::MAX));
                    let until = expires_at.min(now.checked_add_signed(cache_for).unwrap_or(expires_at));
                    if until > now {
                        self.remember(*digest, principal.clone(), until, now);
                    }
                    return Ok(principal);
                }
                // Keystone answers 404 for a token that is malformed, expired or revoked.
                400 | 404 => return Err(Failure::Invalid("The token is invalid, expired or revoked.")),
                // Our service token expired or was revoked: once more with a new one.
                401 if !renewed => renewed = true,
                _ => {
                    return Err(Failure::Unavailable(format!(
                        "GET {}/auth/tokens answered {status} (does user `{}` have the admin or service role?)",
                        self.api, self.settings.username
                    )));
                }
            }
            *self.service.lock().await = None;
        }
    }

    fn remember(&self, digest: Digest, principal: Principal, until: DateTime<Utc>, now: DateTime<Utc>) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= CACHE_CAPACITY {
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
        }
        cache.insert(digest, (principal, until));
    }

    /// solgate's own token, obtained with the service credentials and renewed once three
    /// quarters of its lifetime have passed (or when Keystone no longer takes it).
    async fn service_token(&self, renew: bool) -> Result<String, Failure> {
        let mut service = self.service.lock().await;
        let now = Utc::now();
        if !renew && let Some(current) = service.as_ref().filter(|current| current.renew_at > now) {
            return Ok(current.value.clone());
        }
        let s = &self.settings;
        let body = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": s.username, "domain": {"name": s.user_domain_name}, "password": s.password}}},
            "scope": {"project": {"name": s.project_name, "domain": {"name": s.project_domain_name}}},
        }});
        let url = format!("{}/auth/tokens?nocatalog", self.api);
        let response = send(self.http.post(&url).json(&body))
            .await
            .map_err(|error| Failure::Unavailable(format!("POST {}/auth/tokens: {}", self.api, cause(&error))))?;
        let status = response.status();
        if status.as_u16() != 201 {
            return Err(Failure::Unavailable(format!(
                "Keystone refused solgate's service credentials (user `{}`, project `{}`): {status}",
                s.username, s.project_name
            )));
        }
        let value = response
            .headers()
            .get("x-subject-token")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| Failure::Unavailable("Keystone issued a service token without X-Subject-Token".into()))?;
        let body: TokenBody = response
            .json()
            .await
            .map_err(|error| Failure::Unavailable(format!("Keystone's service token answer: {}", cause(&error))))?;
        let expires_at = parse_time(&body.token.expires_at)
            .ok_or_else(|| Failure::Unavailable("Keystone's service token has no valid expires_at".into()))?;
        let renew_at = now + (expires_at - now) * 3 / 4;
        tracing::debug!(%expires_at, "obtained a Keystone service token");
        *service = Some(ServiceToken { value: value.clone(), renew_at });
        Ok(value)
    }
}

#[derive(Debug, Deserialize)]
struct TokenBody {
    token: TokenInfo,
}

/// The parts of a Keystone v3 token that solgate reads.
#[derive(Debug, Deserialize)]
struct TokenInfo {
    expires_at: String,
    #[serde(default)]
    roles: Vec<Named>,
    project: Option<Named>,
    /// Present (`{"all": true}`) on system-scoped tokens.
    system: Option<serde_json::Value>,
    user: Option<Named>,
}

#[derive(Debug, Deserialize)]
struct Named {
    #[serde(default)]
    id: String,
    #[serde(default)]
    name: String,
}

fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|time| time.with_timezone(&Utc))
}

/// Keystone role names as solgate roles: `admin`, `member` (and the legacy `_member_`),
/// `reader`; others carry nothing. Only project- and system-scoped tokens carry roles here
/// (an unscoped or domain-scoped token names no project to act in). The project is the
/// token's project id, as Tacker takes it for the tenant.
fn principal_of(token: &TokenInfo, now: DateTime<Utc>) -> Result<(Principal, DateTime<Utc>), Failure> {
    let expires_at = parse_time(&token.expires_at)
        .ok_or_else(|| Failure::Unavailable(format!("Keystone answered an expires_at of `{}`", token.expires_at)))?;
    if expires_at <= now {
        return Err(Failure::Invalid("The token is invalid, expired or revoked."));
    }
    let scoped = token.project.is_some() || token.system.is_some();
    let mut roles: Vec<Role> =
        if scoped { token.roles.iter().filter_map(|role| role_of(&role.name)).collect() } else { Vec::new() };
    roles.sort();
    roles.dedup();
    let principal = Principal {
        client_id: token.user.as_ref().map(|user| user.id.clone()).unwrap_or_default(),
        roles,
        project: token.project.as_ref().map(|project| project.id.clone()).unwrap_or_default(),
        scopes: None,
    };
    Ok((principal, expires_at))
}

fn role_of(name: &str) -> Option<Role> {
    match name.to_ascii_lowercase().as_str() {
        "admin" => Some(Role::Admin),
        "member" | "_member_" => Some(Role::Member),
        "reader" => Some(Role::Reader),
        _ => None,
    }
}

/// Sends once more when the connection failed before an answer (a server may close an
/// idle pooled connection just as it is reused); a timeout is not repeated.
async fn send(request: reqwest::RequestBuilder) -> Result<reqwest::Response, reqwest::Error> {
    let again = request.try_clone();
    match request.send().await {
        Err(error) if !error.is_timeout() && error.status().is_none() => match again {
            Some(again) => again.send().await,
            None => Err(error),
        },
        result => result,
    }
}

fn digest(token: &str) -> Digest {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
    let mut out = [0; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// The cause chain of a reqwest error, without the URL.
fn cause(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(value: serde_json::Value) -> TokenInfo {
        serde_json::from_value(value).unwrap()
    }

    fn now() -> DateTime<Utc> {
        parse_time("2026-11-24T15:00:00Z").unwrap()
    }

    #[test]
    fn roles_and_project_come_from_a_project_scoped_token() {
        let info = token(json!({
            "expires_at": "2026-11-24T16:33:59.000000Z",
            "user": {"id": "u1", "name": "demo-member"},
            "project": {"id": "p1", "name": "demo"},
            "roles": [{"id": "r1", "name": "member"}, {"id": "r2", "name": "reader"}, {"id": "r3", "name": "load-balancer_member"}],
        }));
        let (principal, expires_at) = principal_of(&info, now()).unwrap();
        assert_eq!(principal.roles, vec![Role::Reader, Role::Member]);
        assert_eq!(principal.project, "p1");
        assert_eq!(principal.client_id, "u1");
        assert_eq!(expires_at.to_rfc3339(), "2026-11-24T16:33:59+00:00");
        assert_eq!(role_of("_member_"), Some(Role::Member));
        assert_eq!(role_of("Admin"), Some(Role::Admin));
        assert_eq!(role_of("service"), None);
    }

    #[test]
    fn unscoped_tokens_carry_no_roles_and_expired_ones_are_invalid() {
        let unscoped = token(json!({"expires_at": "2026-11-24T16:00:00Z", "roles": [{"name": "admin"}]}));
        assert!(principal_of(&unscoped, now()).unwrap().0.roles.is_empty());
        let system =
            token(json!({"expires_at": "2026-11-24T16:00:00Z", "system": {"all": true}, "roles": [{"name": "admin"}]}));
        let (principal, _) = principal_of(&system, now()).unwrap();
        assert_eq!((principal.roles, principal.project), (vec![Role::Admin], String::new()));
        let expired = token(json!({"expires_at": "2026-11-24T14:59:59Z", "project": {"id": "p"}, "roles": []}));
        assert!(matches!(principal_of(&expired, now()), Err(Failure::Invalid(_))));
    }

    #[test]
    fn settings_need_a_url_and_credentials_and_hide_the_password() {
        let outbound = solgate_core::egress::Outbound::new(&Default::default(), &Default::default()).unwrap();
        let mut settings = KeystoneSettings { auth_url: "ftp://x".into(), ..KeystoneSettings::default() };
        assert!(Keystone::new(&settings, &outbound).unwrap_err().contains("http(s)"));
        settings.auth_url = "http://127.0.0.1:5000".into();
        assert!(Keystone::new(&settings, &outbound).unwrap_err().contains("username"));
        settings.username = "solgate".into();
        settings.password = "s3cret-pass".into();
        let keystone = Keystone::new(&settings, &outbound).unwrap();
        assert_eq!(keystone.api, "http://127.0.0.1:5000/v3");
        assert!(!format!("{keystone:?}").contains("s3cret"));
        settings.auth_url = "http://127.0.0.1:5000/v3/".into();
        assert_eq!(Keystone::new(&settings, &outbound).unwrap().api, "http://127.0.0.1:5000/v3");
    }
}
