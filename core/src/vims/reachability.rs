//! The reachability check of a registration (credentials in clear): Keystone issues a
//! project-scoped token (`POST /v3/auth/tokens`), or the Kubernetes API answers
//! `GET /version`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::credentials::ca_certificates;
use super::document::{AuthCred, VimDocument};
use super::{OPENSTACK, VimError, VimResult, bad_request};
use crate::egress::Outbound;

/// How long the reachability check waits for the VIM.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// Checks an `auth_url`: absolute http(s), no credentials in it, and allowed by `[egress]`.
pub(super) async fn check_auth_url(outbound: &Outbound, url: &str) -> VimResult<()> {
    let parsed = url::Url::parse(url).map_err(|_| bad_request(format!("auth_url '{url}' is not a URL.")))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad_request("auth_url must not carry credentials; put them in auth_cred."));
    }
    outbound.policy().check_uri_resolved("auth_url", url).await?;
    Ok(())
}

/// Checks that the VIM of `document` answers its credentials; returns the regions of
/// Keystone's catalog (Tacker's `placement_attr`).
pub(super) async fn check_reachable(outbound: &Outbound, document: &VimDocument) -> VimResult<Vec<String>> {
    let cred = &document.auth_cred;
    // Certificates are always verified here (`cert_verify: 'False'` only reaches the drivers,
    // which honour it when `[tls] allow_vim_skip_verification` is set): trust a private CA
    // with `[tls] ca_file`.
    let internal = |error: &dyn std::fmt::Display| VimError::Internal(error.to_string());
    let mut builder = outbound.client_builder(false)?.timeout(CHECK_TIMEOUT);
    if let Some(pem) = AuthCred::non_empty(&cred.ssl_ca_cert) {
        builder = builder.tls_certs_merge(ca_certificates(pem)?);
    }
    let client = builder.build().map_err(|error| internal(&error))?;
    if document.vim_type == OPENSTACK {
        keystone(&client, &document.auth_url, cred).await
    } else {
        kubernetes(&client, &document.auth_url, cred).await.map(|()| Vec::new())
    }
}

fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// A request error with its causes ("error sending request: ... Connection refused"),
/// without the URL (the message names the VIM already).
fn causes(error: reqwest::Error) -> String {
    use std::error::Error as _;
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn unreachable(what: &str, detail: impl std::fmt::Display) -> VimError {
    VimError::Unprocessable(format!("The VIM is not reachable with these credentials: {what}: {detail}."))
}

/// Keystone's token, as far as the check reads it (its catalog's regions).
#[derive(Deserialize, Default)]
#[serde(default)]
struct TokenResponse {
    token: Token,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Token {
    catalog: Vec<CatalogService>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CatalogService {
    endpoints: Vec<CatalogEndpoint>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CatalogEndpoint {
    region_id: Option<String>,
    region: Option<String>,
}

async fn keystone(client: &reqwest::Client, auth_url: &str, cred: &AuthCred) -> VimResult<Vec<String>> {
    let what = format!("Keystone at {auth_url}");
    let request = json!({"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": text(&cred.username), "domain": {"name": text(&cred.user_domain_name)},
            "password": text(&cred.password)}}},
        "scope": {"project": {"name": text(&cred.project_name), "domain": {"name": text(&cred.project_domain_name)}}}
    }});
    let response = client
        .post(format!("{auth_url}/auth/tokens"))
        .json(&request)
        .send()
        .await
        .map_err(|error| unreachable(&what, causes(error)))?;
    let status = response.status();
    if status.as_u16() == 401 {
        let refused = format!(
            "it refused the credentials of user '{}' for project '{}' (401)",
            text(&cred.username),
            text(&cred.project_name)
        );
        return Err(unreachable(&what, refused));
    }
    if !status.is_success() {
        return Err(unreachable(&what, format!("POST /auth/tokens answered {status}")));
    }
    let token: TokenResponse = response.json().await.unwrap_or_default();
    let mut regions: Vec<String> = token
        .token
        .catalog
        .into_iter()
        .flat_map(|service| service.endpoints)
        .filter_map(|endpoint| endpoint.region_id.or(endpoint.region))
        .collect();
    regions.sort();
    regions.dedup();
    Ok(regions)
}

/// The Kubernetes API's `GET /version`, as far as the check reads it.
#[derive(Deserialize)]
struct KubernetesVersion {
    #[serde(rename = "gitVersion")]
    _git_version: String,
}

async fn kubernetes(client: &reqwest::Client, auth_url: &str, cred: &AuthCred) -> VimResult<()> {
    let mut request = client.get(format!("{}/version", auth_url.trim_end_matches('/')));
    if let Some(token) = AuthCred::non_empty(&cred.bearer_token) {
        request = request.bearer_auth(token);
    } else if cred.oidc_token_url.is_none() && !text(&cred.username).is_empty() {
        request = request.basic_auth(text(&cred.username), Some(text(&cred.password)));
    }
    let what = format!("the Kubernetes API at {auth_url}");
    let response = request.send().await.map_err(|error| unreachable(&what, causes(error)))?;
    let status = response.status();
    if status.as_u16() == 401 || status.as_u16() == 403 {
        return Err(unreachable(&what, format!("it refused the credentials ({status})")));
    }
    if !status.is_success() {
        return Err(unreachable(&what, format!("GET /version answered {status}")));
    }
    if response.json::<KubernetesVersion>().await.is_err() {
        return Err(unreachable(&what, "GET /version did not answer a Kubernetes version"));
    }
    Ok(())
}
