//! The two Nova compute v2.1 calls the OpenStack driver needs for Operate: a server's
//! status, and its `os-stop` / `os-start` actions (Compute API reference, "Servers - run
//! an action"). Heat has no power-state property, so stopping a VNF goes to Nova directly.

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::Url;

use super::http::{self, api_error, json_body};
use super::{KeystoneClient, OpenStackError, Result, VimCredentials};

const SERVICE: &str = "Nova";
/// Catalog type of Nova (Tacker's nova_utils: `HttpClient(auth, service_type='compute')`).
const SERVICE_TYPE: &str = "compute";

/// Nova compute v2.1 client, for server status and power actions.
#[derive(Debug)]
pub struct NovaClient {
    keystone: KeystoneClient,
}

/// `GET /servers/{id}` → `server` (the members solgate reads).
#[derive(Debug, Clone, Deserialize)]
pub struct Server {
    pub id: String,
    /// `ACTIVE`, `SHUTOFF`, `ERROR`, `BUILD`, ...
    pub status: String,
    /// `OS-EXT-STS:task_state`: set while an action is still running (e.g. `powering-off`).
    #[serde(default, rename = "OS-EXT-STS:task_state")]
    pub task_state: Option<String>,
    #[serde(default)]
    pub fault: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct ServerEnvelope {
    server: Server,
}

impl NovaClient {
    pub fn new(creds: VimCredentials) -> Result<Self> {
        Ok(Self { keystone: KeystoneClient::new(creds)? })
    }

    pub fn from_keystone(keystone: KeystoneClient) -> Self {
        Self { keystone }
    }

    /// `GET /servers/{id}`; `None` on 404.
    pub async fn get_server(&self, server_id: &str) -> Result<Option<Server>> {
        let response = self.send(Method::GET, &["servers", server_id], None).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if response.status() != StatusCode::OK {
            return Err(api_error(SERVICE, response).await);
        }
        let envelope: ServerEnvelope = json_body(SERVICE, response).await?;
        Ok(Some(envelope.server))
    }

    /// `POST /servers/{id}/action` with `{"<action>": null}` (e.g. `os-stop`, `os-start`) → 202.
    pub async fn server_action(&self, server_id: &str, action: &str) -> Result<()> {
        let body = json!({ action: null });
        let response = self.send(Method::POST, &["servers", server_id, "action"], Some(&body)).await?;
        if response.status() != StatusCode::ACCEPTED {
            return Err(api_error(SERVICE, response).await);
        }
        tracing::info!(server = server_id, action, "Nova server action accepted");
        Ok(())
    }

    /// One call with the cached token, re-authenticating once on 401.
    async fn send(&self, method: Method, path: &[&str], body: Option<&Value>) -> Result<reqwest::Response> {
        let mut session = self.keystone.session().await?;
        let region = self.keystone.credentials().region.as_deref();
        let url = join(&session.endpoint(SERVICE_TYPE, "public", region)?, path)?;
        let mut reauthenticated = false;
        loop {
            let mut request = self
                .keystone
                .http()
                .request(method.clone(), url.clone())
                .header("X-Auth-Token", session.token())
                .header("Accept", "application/json")
                .timeout(http::REQUEST_TIMEOUT);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request.send().await?;
            if response.status() == StatusCode::UNAUTHORIZED && !reauthenticated {
                self.keystone.invalidate(&session).await;
                session = self.keystone.session().await?;
                reauthenticated = true;
                continue;
            }
            return Ok(response);
        }
    }
}

fn join(base: &Url, segments: &[&str]) -> Result<Url> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|()| OpenStackError::InvalidResponse { service: "Keystone", detail: format!("catalog URL {base}") })?
        .pop_if_empty()
        .extend(segments);
    Ok(url)
}
