//! Inbound authentication and authorization (SOL013 clause 8): `[auth] mode = "oauth2"`
//! makes every API request carry `Authorization: Bearer <token>`; tokens come from solgate's
//! own OAuth 2.0 token endpoint (`POST /oauth2/token`, client credentials, RFC 6749 clause
//! 4.4) for the clients `[[auth.clients]]` lists. Each request's rule (named as Tacker names
//! its policies) needs a least role. With `mode = "none"` nothing is checked, and solgate
//! listens only on loopback unless `allow_anonymous = true`. Tokens of external
//! authorization servers (`[[auth.issuers]]`) are accepted too: see [`issuers`].
//! `mode = "keystone"` takes OpenStack Keystone tokens in `X-Auth-Token` instead
//! ([`keystone`]).

pub mod endpoint;
pub mod issuers;
pub mod keystone;
pub mod policy;
pub mod secret;
pub mod token;

use std::path::PathBuf;

use actix_web::dev::ServiceRequest;
use actix_web::http::header;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};
use policy::Policy;
use token::{Claims, TokenKeys};

/// The `[auth]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSettings {
    pub mode: AuthMode,
    /// With `mode = "none"`: listen on a non-loopback address anyway (a warning at start).
    pub allow_anonymous: bool,
    /// Lifetime of the access tokens `POST /oauth2/token` issues.
    pub token_lifetime_secs: u64,
    /// A policy file: `"os_nfv_orchestration_api_v2:vnf_instances:delete" = "admin"` per rule
    /// whose least role differs from the default (reads: reader; changes: member).
    pub policy_file: PathBuf,
    /// The OAuth 2.0 clients of the built-in token endpoint.
    pub clients: Vec<ClientSettings>,
    /// External OAuth 2.0 authorization servers whose access tokens are accepted too.
    pub issuers: Vec<issuers::IssuerSettings>,
    /// With `mode = "keystone"`: the Keystone that validates tokens.
    pub keystone: keystone::KeystoneSettings,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            mode: AuthMode::None,
            allow_anonymous: false,
            token_lifetime_secs: 3600,
            policy_file: PathBuf::new(),
            clients: Vec::new(),
            issuers: Vec::new(),
            keystone: keystone::KeystoneSettings::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// No authentication (loopback only, unless `allow_anonymous`).
    None,
    /// OAuth 2.0 bearer tokens from the built-in token endpoint.
    Oauth2,
    /// OpenStack Keystone tokens (`X-Auth-Token`), validated with `[auth.keystone]`.
    Keystone,
}

/// One `[[auth.clients]]` entry.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSettings {
    pub id: String,
    /// A PHC hash (`solgate hash-secret` prints one) or, with a warning, the secret itself.
    pub secret: String,
    pub roles: Vec<Role>,
    #[serde(default)]
    pub project: String,
    /// With mutual TLS (`[http.tls] client_ca_file`): a DNS name in the subjectAltName of a
    /// client certificate that authenticates as this client, without a token.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub certificate_name: String,
}

impl std::fmt::Debug for ClientSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSettings").field("id", &self.id).field("roles", &self.roles).finish_non_exhaustive()
    }
}

/// Roles, each including the ones below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Reader,
    Member,
    Admin,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Reader => "reader",
            Role::Member => "member",
            Role::Admin => "admin",
        })
    }
}

/// Who a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub client_id: String,
    pub roles: Vec<Role>,
    pub project: String,
    /// The token's OAuth 2.0 scopes (SOL013 clause 8.3); `None` when it carried none, and
    /// then the roles alone decide.
    pub scopes: Option<Vec<String>>,
}

impl Principal {
    /// Admins see and change every project's resources.
    pub fn is_admin(&self) -> bool {
        self.has(Role::Admin)
    }

    fn has(&self, least: Role) -> bool {
        self.roles.iter().any(|role| *role >= least)
    }
}

/// What the access-token signing keys are derived for, from the secret key
/// (`SecretBox::derived_keys`): processes sharing the secret key share them.
pub const TOKEN_KEY_PURPOSE: &str = "solgate access token signing v1";

/// Paths that need no token: the token endpoint, the probes Kubernetes and Prometheus call
/// without one, the NFVO's package notifications and Alertmanager's webhooks (credentials
/// of their own, checked by their handlers).
const OPEN_PATHS: &[&str] =
    &[endpoint::PATH, "/healthz", "/readyz", "/metrics", crate::settings::NFVO_NOTIFICATIONS_PATH];

fn is_open(path: &str) -> bool {
    OPEN_PATHS.contains(&path) || crate::alerts::webhook::PATHS.contains(&path)
}

/// Verified tokens kept at most (then the cache starts over).
const VERIFIED_CAPACITY: usize = 10_000;

/// The request-time side of `[auth]`.
#[derive(Debug)]
pub struct Authenticator {
    settings: AuthSettings,
    keys: TokenKeys,
    policy: Policy,
    /// Tokens already verified, with their principal and expiry: a client that repeats its
    /// token pays a lookup, not a signature check and a JSON parse. An introspected token's
    /// expiry is the end of its `introspection_cache_secs`.
    verified: std::sync::Mutex<std::collections::HashMap<String, (Principal, i64)>>,
    issuers: issuers::Issuers,
    keystone: Option<keystone::Keystone>,
}

impl Authenticator {
    /// `derived_keys`: the token signing keys (`SecretBox::derived_keys`); `outbound`: the
    /// client settings for reaching `[[auth.issuers]]` and Keystone.
    pub fn new(
        settings: &AuthSettings,
        derived_keys: Vec<(String, Vec<u8>)>,
        outbound: &solgate_core::egress::Outbound,
    ) -> Result<Self, String> {
        let policy = if settings.policy_file.as_os_str().is_empty() {
            Policy::default()
        } else {
            Policy::load(&settings.policy_file).map_err(|error| format!("auth.policy_file: {error}"))?
        };
        let mut ids = std::collections::HashSet::new();
        for client in &settings.clients {
            if client.id.is_empty() || !ids.insert(client.id.as_str()) {
                return Err(format!("auth.clients: client id `{}` is empty or listed twice", client.id));
            }
            if client.roles.is_empty() {
                return Err(format!("auth.clients: client `{}` has no roles", client.id));
            }
            // Resources belong to projects; a non-admin without one would see only the
            // project-less resources of mode "none" and of admins' subscriptions.
            if client.project.is_empty() && !client.roles.contains(&Role::Admin) {
                return Err(format!(
                    "auth.clients: client `{}` needs a project (only an admin may have none)",
                    client.id
                ));
            }
            if !secret::is_hash(&client.secret) {
                tracing::warn!(client = %client.id, "auth.clients: the secret is plain text; store `solgate hash-secret`'s hash instead");
            }
        }
        if settings.mode == AuthMode::Oauth2 && settings.clients.is_empty() && settings.issuers.is_empty() {
            tracing::warn!("auth.mode = \"oauth2\" with no [[auth.clients]]: no one can get a token");
        }
        if settings.mode != AuthMode::Oauth2 && !settings.issuers.is_empty() {
            tracing::warn!("[[auth.issuers]] is ignored unless auth.mode = \"oauth2\"");
        }
        let keystone = match settings.mode {
            AuthMode::Keystone => Some(keystone::Keystone::new(&settings.keystone, outbound)?),
            _ => None,
        };
        Ok(Self {
            settings: settings.clone(),
            keys: TokenKeys::new(derived_keys),
            policy,
            verified: Default::default(),
            issuers: issuers::Issuers::new(&settings.issuers, outbound)?,
            keystone,
        })
    }

    pub fn mode(&self) -> AuthMode {
        self.settings.mode
    }

    /// The principal of a request, or the 401/403 that refuses it. `Ok(None)`: no check
    /// applies (mode none, or an open path). Async: a token may have to be checked with an
    /// authorization server.
    pub async fn authenticate(&self, req: &ServiceRequest) -> Result<Option<Principal>, ApiError> {
        if self.settings.mode == AuthMode::None || is_open(req.path()) {
            return Ok(None);
        }
        if let Some(keystone) = &self.keystone {
            let token = req.headers().get("x-auth-token").and_then(|value| value.to_str().ok());
            // Mutual TLS combines with Keystone: a known client certificate needs no token.
            if token.is_none()
                && let Some(principal) = self.certificate_principal(req)
            {
                return self.authorize(req, principal).map(Some);
            }
            let principal = keystone.authenticate(token).await?;
            return self.authorize(req, principal).map(Some);
        }
        let header = req.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
        let Some(header) = header else {
            return match self.certificate_principal(req) {
                Some(principal) => self.authorize(req, principal).map(Some),
                None => Err(unauthorized(None, "An access token is required (Authorization: Bearer).")),
            };
        };
        let token = match header.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => token.trim(),
            _ => return Err(unauthorized(Some("invalid_request"), "The Authorization header is not a Bearer token.")),
        };
        let now = chrono::Utc::now().timestamp();
        let cached = {
            let verified = self.verified.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            verified.get(token).filter(|(_, exp)| *exp > now).map(|(principal, _)| principal.clone())
        };
        let principal = match cached {
            Some(principal) => principal,
            None => {
                let (principal, until) = match self.issuers.verify(token, now).await {
                    Some(verdict) => {
                        let verified = verdict.map_err(issuer_refusal)?;
                        (verified.principal, verified.cache_until)
                    }
                    None => {
                        let claims = self.keys.verify(token, now).map_err(|error| {
                            unauthorized(Some("invalid_token"), &format!("{}.", capitalised(&error.to_string())))
                        })?;
                        let scopes = claims.scope.map(|scope| scope.split_whitespace().map(str::to_owned).collect());
                        let principal =
                            Principal { client_id: claims.sub, roles: claims.roles, project: claims.project, scopes };
                        (principal, claims.exp)
                    }
                };
                if until > now {
                    let mut verified = self.verified.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    if verified.len() >= VERIFIED_CAPACITY {
                        verified.clear();
                    }
                    verified.insert(token.to_owned(), (principal.clone(), until));
                }
                principal
            }
        };
        self.authorize(req, principal).map(Some)
    }

    /// Mutual TLS: the configured client a verified client certificate names.
    fn certificate_principal(&self, req: &ServiceRequest) -> Option<Principal> {
        let names = req.conn_data::<crate::tls::PeerNames>()?;
        let client = self
            .settings
            .clients
            .iter()
            .find(|client| !client.certificate_name.is_empty() && names.0.contains(&client.certificate_name))?;
        Some(Principal {
            client_id: client.id.clone(),
            roles: client.roles.clone(),
            project: client.project.clone(),
            scopes: None,
        })
    }

    /// The principal again if the request's rule allows its roles, and its token's scopes
    /// (when it has any) cover the request; else 403.
    fn authorize(&self, req: &ServiceRequest, principal: Principal) -> Result<Principal, ApiError> {
        let Some(rule) = self.policy.rule(req.method(), req.path()) else { return Ok(principal) };
        if !principal.has(rule.role) {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("Policy doesn't allow {} to be performed (it needs the role {}).", rule.name, rule.role),
            ));
        }
        // Every resource belongs to a project: a non-admin without one has none to work in.
        if principal.project.is_empty() && !principal.is_admin() {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("{} is not an admin and names no project; resources belong to projects.", principal.client_id),
            ));
        }
        if let Some(scopes) = &principal.scopes
            && !policy::scopes_allow(scopes, req.method(), req.path())
        {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("The access token's scope does not cover {} (scopes: {}).", rule.name, scopes.join(" ")),
            ));
        }
        Ok(principal)
    }

    /// A token for a client that authenticated with `secret` (the token endpoint).
    fn issue(&self, client_id: &str, secret: &str, scope: Option<&str>) -> Option<(String, u64)> {
        let client = self.settings.clients.iter().find(|client| client.id == client_id)?;
        if !secret::verify(&client.secret, secret) {
            return None;
        }
        let now = chrono::Utc::now().timestamp();
        let lifetime = self.settings.token_lifetime_secs.max(1);
        let claims = Claims {
            iss: token::ISSUER.into(),
            aud: token::ISSUER.into(),
            sub: client.id.clone(),
            iat: now,
            exp: now.saturating_add(i64::try_from(lifetime).unwrap_or(i64::MAX)),
            jti: uuid::Uuid::new_v4().to_string(),
            roles: client.roles.clone(),
            project: client.project.clone(),
            scope: scope.map(str::to_owned),
        };
        Some((self.keys.sign(&claims)?, lifetime))
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// An issuer's refusal: 401 `invalid_token`, or 503 when the issuer could not be asked.
fn issuer_refusal(error: issuers::IssuerError) -> ApiError {
    let detail = format!("{}.", capitalised(&error.to_string()));
    match error {
        issuers::IssuerError::Unavailable => ApiError::unavailable(detail, 5),
        _ => unauthorized(Some("invalid_token"), &detail),
    }
}

/// 401 with `WWW-Authenticate: Bearer` (RFC 6750 clause 3), `error` where it applies.
fn unauthorized(error: Option<&str>, detail: &str) -> ApiError {
    let challenge = match error {
        Some(error) => format!("Bearer realm=\"solgate\", error=\"{error}\""),
        None => "Bearer realm=\"solgate\"".to_owned(),
    };
    ApiError::new(ErrorKind::Unauthorized { challenge }, detail)
}

/// Whether solgate may listen on `address` with these settings: `mode = "none"` only on
/// loopback unless `allow_anonymous`. `Ok(true)` asks for a warning.
pub fn check_listener(settings: &AuthSettings, address: std::net::SocketAddr) -> Result<bool, String> {
    if settings.mode != AuthMode::None || address.ip().is_loopback() {
        return Ok(false);
    }
    if settings.allow_anonymous {
        return Ok(true);
    }
    Err(format!(
        "refusing to listen on {address} without authentication: set [auth] mode = \"oauth2\" (docs/security.md), \
         listen on 127.0.0.1, or set [auth] allow_anonymous = true to accept anyone who can reach the port"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_include_the_ones_below() {
        let member =
            Principal { client_id: "c".into(), roles: vec![Role::Member], project: String::new(), scopes: None };
        assert!(member.has(Role::Reader) && member.has(Role::Member) && !member.has(Role::Admin));
    }

    #[test]
    fn anonymous_listeners_stay_on_loopback_unless_allowed() {
        let none = AuthSettings::default();
        assert_eq!(check_listener(&none, "127.0.0.1:9890".parse().unwrap()), Ok(false));
        assert_eq!(check_listener(&none, "[::1]:9890".parse().unwrap()), Ok(false));
        assert!(check_listener(&none, "0.0.0.0:9890".parse().unwrap()).unwrap_err().contains("allow_anonymous"));
        let allowed = AuthSettings { allow_anonymous: true, ..AuthSettings::default() };
        assert_eq!(check_listener(&allowed, "0.0.0.0:9890".parse().unwrap()), Ok(true));
        let oauth2 = AuthSettings { mode: AuthMode::Oauth2, ..AuthSettings::default() };
        assert_eq!(check_listener(&oauth2, "0.0.0.0:9890".parse().unwrap()), Ok(false));
    }
}
