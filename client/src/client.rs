//! The HTTP side: one reqwest client with the configured TLS, a credential fetched once
//! (and again after a 401), the `Version` header of the negotiated version on every
//! request, ProblemDetails for every error status, `Link` paging.

use std::collections::HashMap;
use std::sync::Mutex;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, LOCATION};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use url::Url;

use crate::auth::{self, Credential};
use crate::config::{ApiVersionChoice, AuthConfig, ClientConfig};
use crate::error::{Error, ProblemDetails, Result, transport};
use crate::versions::{self, Api, ApiVersions};

/// Response headers announcing a deprecated version (RFC 9745, RFC 8594) and which.
const DEPRECATION: &str = "deprecation";
const SUNSET: &str = "sunset";
/// SOL013 clause 4.2: the version the response is of.
const VERSION: &str = "version";

/// A request body.
pub(crate) enum Body {
    None,
    Json(Value),
    /// `application/merge-patch+json` (PATCH of instances and packages).
    MergePatch(Value),
    Zip(Vec<u8>),
}

/// A 2xx response, read whole.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Result<Value> {
        serde_json::from_slice(&self.body)
            .map_err(|error| Error::Unexpected(format!("a {} response that is not JSON: {error}", self.status)))
    }
}

/// A task the server accepted (202): the operation occurrence it started, when it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The `Location` of the VNF LCM operation occurrence.
    pub location: Option<String>,
}

impl Accepted {
    /// The occurrence id, the last segment of `Location`.
    pub fn op_id(&self) -> Option<&str> {
        self.location.as_deref().and_then(|location| location.trim_end_matches('/').rsplit('/').next())
    }
}

/// A response that announced its version is deprecated (RFC 9745 `Deprecation`, RFC 8594
/// `Sunset`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    pub version: String,
    pub sunset: Option<String>,
}

pub struct Client {
    http: reqwest::Client,
    config: ClientConfig,
    credential: tokio::sync::Mutex<Option<Credential>>,
    negotiated: Mutex<HashMap<(Api, u64), String>>,
    deprecations: Mutex<Vec<Deprecation>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("config", &self.config).finish_non_exhaustive()
    }
}

fn read(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|error| Error::io(path, error))
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client> {
        let mut builder = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(std::time::Duration::from_secs(10))
            .user_agent(config.user_agent.clone());
        let tls = &config.tls;
        if let Some(ca_file) = &tls.ca_file {
            let certificates = reqwest::Certificate::from_pem_bundle(&read(ca_file)?)
                .map_err(|error| Error::Config(format!("{}: {error}", ca_file.display())))?;
            if certificates.is_empty() {
                return Err(Error::Config(format!("{}: no PEM certificate in it", ca_file.display())));
            }
            builder = builder.tls_certs_merge(certificates);
        }
        match (&tls.cert_file, &tls.key_file) {
            (Some(cert_file), Some(key_file)) => {
                let mut pem = read(cert_file)?;
                pem.push(b'\n');
                pem.extend(read(key_file)?);
                let identity = reqwest::Identity::from_pem(&pem).map_err(|error| {
                    Error::Config(format!(
                        "client certificate {} / {}: {error}",
                        cert_file.display(),
                        key_file.display()
                    ))
                })?;
                builder = builder.identity(identity);
            }
            (None, None) => {}
            _ => return Err(Error::Config("a client certificate needs both a certificate and a key file".into())),
        }
        if tls.insecure {
            builder = builder.tls_danger_accept_invalid_certs(true);
        }
        let http = builder.build().map_err(|error| Error::Config(format!("HTTP client: {error}")))?;
        let credential = match &config.auth {
            AuthConfig::Token(token) => Some(Credential::Bearer(token.clone())),
            _ => None,
        };
        Ok(Client {
            http,
            config,
            credential: tokio::sync::Mutex::new(credential),
            negotiated: Mutex::new(HashMap::new()),
            deprecations: Mutex::new(Vec::new()),
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The VNF LCM major requests go to.
    pub fn lcm_major(&self) -> u64 {
        self.config.api_version.major()
    }

    /// Deprecated versions the server announced on the responses so far.
    pub fn deprecations(&self) -> Vec<Deprecation> {
        self.deprecations.lock().map(|list| list.clone()).unwrap_or_default()
    }

    pub(crate) fn url(&self, path: &str) -> Result<Url> {
        self.config
            .endpoint
            .join(path.trim_start_matches('/'))
            .map_err(|error| Error::Config(format!("{path}: {error}")))
    }

    /// Resolves a URL the server handed out (`Location`, `Link`): absolute, or relative
    /// to the endpoint.
    pub(crate) fn resolve(&self, href: &str) -> Result<Url> {
        Url::parse(href).or_else(|_| self.url(href))
    }

    async fn credential(&self, renew: bool) -> Result<Option<Credential>> {
        let mut slot = self.credential.lock().await;
        if renew && !matches!(self.config.auth, AuthConfig::Token(_)) {
            *slot = None;
        }
        if slot.is_none() {
            *slot = match &self.config.auth {
                AuthConfig::None => None,
                AuthConfig::Token(token) => Some(Credential::Bearer(token.clone())),
                AuthConfig::OAuth2(oauth2) => {
                    Some(auth::oauth2_token(&self.http, &self.config.endpoint, oauth2).await?)
                }
                AuthConfig::Keystone(keystone) => Some(auth::keystone_token(&self.http, keystone).await?),
            };
        }
        Ok(slot.clone())
    }

    /// The version sent to `api` major `major`: the exact one configured, or the newest
    /// minor the server offers that this client knows (one GET of `api_versions`, then
    /// remembered).
    pub async fn version(&self, api: Api, major: u64) -> Result<String> {
        if let (Api::Vnflcm, ApiVersionChoice::Exact(version)) = (api, &self.config.api_version)
            && version.major == major
        {
            return Ok(version.to_string());
        }
        if let Some(version) = self.negotiated.lock().ok().and_then(|map| map.get(&(api, major)).cloned()) {
            return Ok(version);
        }
        let chosen = match self.api_versions(api, Some(major)).await {
            Ok(offered) => offered
                .choose(major, versions::known(api, major).as_ref(), chrono::Utc::now())
                .map(|info| info.version.clone())
                .ok_or_else(|| {
                    Error::Unexpected(format!(
                        "the server offers no {} v{major} version this client can use ({})",
                        api.name(),
                        offered.api_versions.iter().map(|info| info.version.as_str()).collect::<Vec<_>>().join(", ")
                    ))
                })?,
            Err(Error::Api(problem)) if problem.status == 404 => versions::baseline(api, major),
            Err(error) => return Err(error),
        };
        if let Ok(mut map) = self.negotiated.lock() {
            map.insert((api, major), chosen.clone());
        }
        Ok(chosen)
    }

    /// GET `/{api}/api_versions` (all majors) or `/{api}/v{major}/api_versions`.
    pub async fn api_versions(&self, api: Api, major: Option<u64>) -> Result<ApiVersions> {
        let path = match major {
            Some(major) => format!("{}/v{major}/api_versions", api.name()),
            None => format!("{}/api_versions", api.name()),
        };
        let version = versions::baseline(api, major.unwrap_or(1));
        let reply =
            self.exchange(Method::GET, self.url(&path)?, Some(&version), Body::None, "application/json").await?;
        serde_json::from_slice(&reply.body).map_err(|error| Error::Unexpected(format!("{path}: {error}")))
    }

    /// One request to `api` v`major`, with the negotiated `Version`.
    pub(crate) async fn send(
        &self,
        api: Api,
        major: u64,
        method: Method,
        url: Url,
        body: Body,
        accept: &str,
    ) -> Result<Reply> {
        let version = self.version(api, major).await?;
        self.exchange(method, url, Some(&version), body, accept).await
    }

    /// As [`Client::send`], with one more header (`If-Match`).
    pub(crate) async fn send_with_header(
        &self,
        api: Api,
        major: u64,
        method: Method,
        url: Url,
        body: Body,
        header: (&str, &str),
    ) -> Result<Reply> {
        let version = self.version(api, major).await?;
        self.exchange_with(method, url, Some(&version), body, "application/json", Some(header)).await
    }

    pub(crate) async fn exchange(
        &self,
        method: Method,
        url: Url,
        version: Option<&str>,
        body: Body,
        accept: &str,
    ) -> Result<Reply> {
        self.exchange_with(method, url, version, body, accept, None).await
    }

    async fn exchange_with(
        &self,
        method: Method,
        url: Url,
        version: Option<&str>,
        body: Body,
        accept: &str,
        extra: Option<(&str, &str)>,
    ) -> Result<Reply> {
        let (content_type, bytes) = match body {
            Body::None => (None, None),
            Body::Json(value) => (Some("application/json"), Some(serde_json::to_vec(&value).unwrap_or_default())),
            Body::MergePatch(value) => {
                (Some("application/merge-patch+json"), Some(serde_json::to_vec(&value).unwrap_or_default()))
            }
            Body::Zip(bytes) => (Some("application/zip"), Some(bytes)),
        };
        let mut renewed = false;
        loop {
            let mut request = self.http.request(method.clone(), url.clone()).header(ACCEPT, accept);
            if let Some(version) = version {
                request = request.header("Version", version);
            }
            if let Some((name, value)) = extra {
                request = request.header(name, value);
            }
            if let (Some(content_type), Some(bytes)) = (content_type, &bytes) {
                request = request.header(CONTENT_TYPE, content_type).body(bytes.clone());
            }
            if let Some(credential) = self.credential(renewed).await? {
                request = credential.apply(request);
            }
            let response = request.send().await.map_err(|error| transport(url.as_str(), &error))?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await.map_err(|error| transport(url.as_str(), &error))?.to_vec();
            // api_versions is asked with a baseline version, not the one requests use.
            if !url.path().ends_with("/api_versions") {
                self.note_deprecation(&headers);
            }
            // A fetched token may have expired since: fetch a new one, once.
            let fetched = matches!(self.config.auth, AuthConfig::OAuth2(_) | AuthConfig::Keystone(_));
            if status == StatusCode::UNAUTHORIZED && fetched && !renewed {
                renewed = true;
                continue;
            }
            if !status.is_success() {
                return Err(Error::Api(ProblemDetails::from_response(status.as_u16(), &body)));
            }
            return Ok(Reply { status, headers, body });
        }
    }

    fn note_deprecation(&self, headers: &HeaderMap) {
        if !headers.contains_key(DEPRECATION) {
            return;
        }
        let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
        let deprecation = Deprecation { version: text(VERSION).unwrap_or_default(), sunset: text(SUNSET) };
        if let Ok(mut list) = self.deprecations.lock()
            && !list.contains(&deprecation)
        {
            list.push(deprecation);
        }
    }

    pub(crate) async fn get_json(&self, api: Api, major: u64, path: &str) -> Result<Value> {
        self.send(api, major, Method::GET, self.url(path)?, Body::None, "application/json").await?.json()
    }

    /// GET of a list, following `Link: <…>; rel="next"` to the end.
    pub(crate) async fn get_list(&self, api: Api, major: u64, mut url: Url) -> Result<Vec<Value>> {
        let mut items = Vec::new();
        loop {
            let reply = self.send(api, major, Method::GET, url.clone(), Body::None, "application/json").await?;
            match reply.json()? {
                Value::Array(page) => items.extend(page),
                other => return Err(Error::Unexpected(format!("{url}: a list was expected, got {other}"))),
            }
            match next_link(&reply.headers) {
                Some(next) => url = self.resolve(&next)?,
                None => return Ok(items),
            }
        }
    }

    pub(crate) fn location(reply: &Reply) -> Accepted {
        Accepted { location: reply.headers.get(LOCATION).and_then(|value| value.to_str().ok()).map(str::to_owned) }
    }
}

/// The target of the `rel="next"` link among the `Link` headers (RFC 8288).
fn next_link(headers: &HeaderMap) -> Option<String> {
    headers.get_all("link").iter().filter_map(|value| value.to_str().ok()).flat_map(|value| value.split(',')).find_map(
        |link| {
            let (target, params) = link.trim().split_once(';')?;
            let is_next = params.split(';').any(|param| {
                let param = param.trim().replace(' ', "");
                param == "rel=\"next\"" || param == "rel=next"
            });
            is_next.then(|| target.trim().trim_start_matches('<').trim_end_matches('>').to_owned())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_links_in_both_spellings() {
        let mut headers = HeaderMap::new();
        headers.append(
            "link",
            "<http://h/vnflcm/v2/vnf_instances?nextpage_opaque_marker=abc>; rel=\"next\"".parse().unwrap(),
        );
        assert_eq!(next_link(&headers).unwrap(), "http://h/vnflcm/v2/vnf_instances?nextpage_opaque_marker=abc");
        let mut tacker = HeaderMap::new();
        tacker.append("link", "<http://h/a?m=1>;rel=\"next\"".parse().unwrap());
        assert_eq!(next_link(&tacker).unwrap(), "http://h/a?m=1");
        let mut other = HeaderMap::new();
        other.append("link", "<http://h/a>; rel=\"prev\"".parse().unwrap());
        assert_eq!(next_link(&other), None);
    }

    #[test]
    fn accepted_names_its_occurrence() {
        let accepted = Accepted { location: Some("http://h/vnflcm/v2/vnf_lcm_op_occs/abc".into()) };
        assert_eq!(accepted.op_id(), Some("abc"));
    }
}
