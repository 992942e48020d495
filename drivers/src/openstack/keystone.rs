use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Mutex;
use url::Url;

use super::http::{self, Secret};
use super::{OpenStackError, Result, VimCredentials};

/// keystoneauth1 counts a token as usable while it has at least this much life left
/// (`BaseIdentityPlugin.MIN_TOKEN_LIFE_SECONDS = 120`).
const DEFAULT_TOKEN_MARGIN: Duration = Duration::from_secs(120);

/// Keystone v3 password authentication with a cached, project-scoped token.
///
/// The token is reused until `expires_at` minus a margin; concurrent callers share one
/// authentication (the cache lock is held while Keystone answers).
#[derive(Debug)]
pub struct KeystoneClient {
    http: reqwest::Client,
    creds: VimCredentials,
    margin: Duration,
    session: Mutex<Option<Arc<AuthSession>>>,
}

/// A token and the service catalog that came with it (`POST /v3/auth/tokens` → 201).
#[derive(Debug)]
pub struct AuthSession {
    token: Secret,
    /// `token.expires_at`.
    pub expires_at: DateTime<Utc>,
    /// `token.project.id`, the tenant id Heat's URLs carry.
    pub project_id: Option<String>,
    /// `token.catalog`.
    pub catalog: Vec<CatalogService>,
}

/// One `token.catalog[]` entry.
#[derive(Debug, Clone, Deserialize)]
pub struct CatalogService {
    #[serde(rename = "type")]
    pub service_type: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub endpoints: Vec<CatalogEndpoint>,
}

/// One `token.catalog[].endpoints[]` entry.
#[derive(Debug, Clone, Deserialize)]
pub struct CatalogEndpoint {
    /// `public`, `internal` or `admin`.
    pub interface: String,
    #[serde(default)]
    pub region: Option<String>,
    #[serde(default)]
    pub region_id: Option<String>,
    pub url: String,
}

#[derive(Deserialize)]
struct TokenBody {
    token: TokenData,
}

#[derive(Deserialize)]
struct TokenData {
    expires_at: DateTime<Utc>,
    #[serde(default)]
    project: Option<ProjectData>,
    #[serde(default)]
    catalog: Vec<CatalogService>,
}

#[derive(Deserialize)]
struct ProjectData {
    id: String,
}

impl AuthSession {
    /// The `X-Subject-Token` value, to send as `X-Auth-Token`.
    pub fn token(&self) -> &str {
        self.token.expose()
    }

    /// Whether the token still has more than `margin` of life at `now`.
    pub fn is_fresh(&self, margin: Duration, now: DateTime<Utc>) -> bool {
        let margin = chrono::Duration::from_std(margin).unwrap_or(chrono::Duration::MAX);
        now.checked_add_signed(margin).is_some_and(|limit| limit < self.expires_at)
    }

    /// URL of the `interface` endpoint of `service_type` (e.g. `orchestration`, `public`),
    /// restricted to `region` (matched against `region_id` or the older `region`) when given.
    pub fn endpoint(&self, service_type: &str, interface: &str, region: Option<&str>) -> Result<Url> {
        let found = self
            .catalog
            .iter()
            .filter(|s| s.service_type == service_type)
            .flat_map(|s| &s.endpoints)
            .filter(|e| e.interface == interface)
            .find(|e| region.is_none_or(|r| e.region_id.as_deref() == Some(r) || e.region.as_deref() == Some(r)));
        let endpoint = found.ok_or_else(|| OpenStackError::EndpointNotFound {
            service_type: service_type.to_owned(),
            interface: interface.to_owned(),
            region: region.map(str::to_owned),
        })?;
        Url::parse(&endpoint.url).map_err(|e| OpenStackError::InvalidResponse {
            service: "Keystone",
            detail: format!("catalog URL {}: {e}", endpoint.url),
        })
    }
}

impl KeystoneClient {
    pub fn new(creds: VimCredentials) -> Result<Self> {
        let http = http::build_client(&creds.tls)?;
        Ok(Self { http, creds, margin: DEFAULT_TOKEN_MARGIN, session: Mutex::new(None) })
    }

    pub fn credentials(&self) -> &VimCredentials {
        &self.creds
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// A token valid for at least the margin: the cached one, or a new one from Keystone.
    pub async fn session(&self) -> Result<Arc<AuthSession>> {
        let mut cached = self.session.lock().await;
        if let Some(session) = cached.as_ref()
            && session.is_fresh(self.margin, Utc::now())
        {
            return Ok(Arc::clone(session));
        }
        let session = Arc::new(self.authenticate().await?);
        *cached = Some(Arc::clone(&session));
        Ok(session)
    }

    /// Drops `stale` from the cache (after a 401), unless another task already replaced it.
    pub async fn invalidate(&self, stale: &AuthSession) {
        let mut cached = self.session.lock().await;
        if cached.as_ref().is_some_and(|s| s.token == stale.token) {
            *cached = None;
        }
    }

    /// Public endpoint of `service_type` in the credentials' region.
    pub async fn endpoint(&self, service_type: &str) -> Result<Url> {
        self.session().await?.endpoint(service_type, "public", self.creds.region.as_deref())
    }

    /// `POST {auth_url}/auth/tokens` with password identity and project scope by name
    /// (Identity API v3 reference, "Password authentication with scoped authorization").
    async fn authenticate(&self) -> Result<AuthSession> {
        let c = &self.creds;
        let body = json!({
            "auth": {
                "identity": {
                    "methods": ["password"],
                    "password": {
                        "user": {"name": c.username, "domain": {"name": c.user_domain_name}, "password": c.password()}
                    }
                },
                "scope": {"project": {"name": c.project_name, "domain": {"name": c.project_domain_name}}}
            }
        });
        let mut url = c.auth_url.clone();
        url.path_segments_mut()
            .map_err(|()| OpenStackError::InvalidVimConnectionInfo("endpoint".into()))?
            .extend(["auth", "tokens"]);
        let response = self.http.post(url).timeout(http::REQUEST_TIMEOUT).json(&body).send().await?;
        let status = response.status();
        if status.as_u16() != 201 {
            let text = response.text().await.unwrap_or_default();
            let (message, _) = http::error_message(status, &text);
            tracing::warn!(auth_url = %c.auth_url, user = %c.username, project = %c.project_name, %status,
                "Keystone authentication refused");
            return Err(OpenStackError::Authentication { status: status.as_u16(), message });
        }
        let token =
            response.headers().get("x-subject-token").and_then(|v| v.to_str().ok()).map(Secret::new).ok_or_else(
                || OpenStackError::InvalidResponse {
                    service: "Keystone",
                    detail: "201 without X-Subject-Token header".into(),
                },
            )?;
        let body: TokenBody = http::json_body("Keystone", response).await?;
        tracing::debug!(auth_url = %c.auth_url, user = %c.username, project = %c.project_name,
            expires_at = %body.token.expires_at, "Keystone token issued");
        Ok(AuthSession {
            token,
            expires_at: body.token.expires_at,
            project_id: body.token.project.map(|p| p.id),
            catalog: body.token.catalog,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(expires_in: i64) -> AuthSession {
        AuthSession {
            token: Secret::new("t"),
            expires_at: Utc::now() + chrono::Duration::seconds(expires_in),
            project_id: None,
            catalog: Vec::new(),
        }
    }

    #[test]
    fn a_token_is_fresh_only_while_it_outlives_the_margin() {
        let margin = Duration::from_secs(120);
        assert!(session(3600).is_fresh(margin, Utc::now()));
        assert!(!session(60).is_fresh(margin, Utc::now()));
        assert!(!session(-5).is_fresh(Duration::ZERO, Utc::now()));
    }
}
