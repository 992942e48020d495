//! How to reach a solgate: endpoint, API version, TLS and authentication.

use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use crate::error::{Error, Result};

/// Which VNF LCM version requests use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiVersionChoice {
    /// A major (1 or 2): the newest minor both the server and this client know.
    Major(u64),
    /// An exact version, sent as is (`2.0.0`).
    Exact(semver::Version),
}

impl ApiVersionChoice {
    pub fn major(&self) -> u64 {
        match self {
            ApiVersionChoice::Major(major) => *major,
            ApiVersionChoice::Exact(version) => version.major,
        }
    }
}

impl std::str::FromStr for ApiVersionChoice {
    type Err = String;

    /// `2`, `2.1` or `2.1.0`.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let choice = match text.split('.').count() {
            1 => ApiVersionChoice::Major(text.parse().map_err(|_| format!("'{text}' is not an API version"))?),
            2 => ApiVersionChoice::Exact(
                semver::Version::parse(&format!("{text}.0")).map_err(|_| format!("'{text}' is not an API version"))?,
            ),
            _ => ApiVersionChoice::Exact(
                semver::Version::parse(text).map_err(|_| format!("'{text}' is not an API version"))?,
            ),
        };
        match choice.major() {
            1 | 2 => Ok(choice),
            major => Err(format!("VNF LCM API major version {major} does not exist (1 or 2)")),
        }
    }
}

/// TLS of the connection to solgate (and to the authorization server).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// PEM trust anchors added to the platform's.
    pub ca_file: Option<PathBuf>,
    /// A client certificate (PEM, the chain) for mutual TLS, with its key.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    /// Skip verification of the server's certificate (testing only).
    pub insecure: bool,
}

/// OAuth 2.0 client credentials (RFC 6749 clause 4.4).
#[derive(Clone, PartialEq, Eq)]
pub struct OAuth2Auth {
    /// The token endpoint; solgate's own `{endpoint}/oauth2/token` when `None`.
    pub token_url: Option<Url>,
    pub client_id: String,
    pub client_secret: String,
    /// Space-separated scopes to ask for (SOL013 clause 8.3), if any.
    pub scope: Option<String>,
}

impl std::fmt::Debug for OAuth2Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth2Auth")
            .field("token_url", &self.token_url.as_ref().map(Url::as_str))
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("scope", &self.scope)
            .finish()
    }
}

/// Keystone v3 password authentication, project-scoped.
#[derive(Clone, PartialEq, Eq)]
pub struct KeystoneAuth {
    /// Keystone's base URL, with or without the trailing `/v3`.
    pub auth_url: Url,
    pub username: String,
    pub password: String,
    pub project_name: String,
    pub user_domain_name: String,
    pub project_domain_name: String,
}

impl std::fmt::Debug for KeystoneAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeystoneAuth")
            .field("auth_url", &self.auth_url.as_str())
            .field("username", &self.username)
            .field("password", &"***")
            .field("project_name", &self.project_name)
            .field("user_domain_name", &self.user_domain_name)
            .field("project_domain_name", &self.project_domain_name)
            .finish()
    }
}

/// The server's auth modes, seen from the client.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum AuthConfig {
    /// Nothing sent (solgate's `[auth] mode = "none"`, or a client certificate alone).
    #[default]
    None,
    /// A bearer token obtained elsewhere.
    Token(String),
    OAuth2(OAuth2Auth),
    Keystone(KeystoneAuth),
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthConfig::None => f.write_str("None"),
            AuthConfig::Token(_) => f.write_str("Token(***)"),
            AuthConfig::OAuth2(oauth2) => oauth2.fmt(f),
            AuthConfig::Keystone(keystone) => keystone.fmt(f),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// solgate's base URL (`http://127.0.0.1:9890`); a path prefix is kept.
    pub endpoint: Url,
    pub api_version: ApiVersionChoice,
    pub tls: TlsOptions,
    pub auth: AuthConfig,
    /// Per request.
    pub timeout: Duration,
    /// The `User-Agent`.
    pub user_agent: String,
}

impl ClientConfig {
    pub fn new(endpoint: &str) -> Result<ClientConfig> {
        Ok(ClientConfig {
            endpoint: parse_endpoint(endpoint)?,
            api_version: ApiVersionChoice::Major(2),
            tls: TlsOptions::default(),
            auth: AuthConfig::None,
            timeout: Duration::from_secs(60),
            user_agent: concat!("solgate-client/", env!("CARGO_PKG_VERSION")).to_owned(),
        })
    }
}

/// An `http(s)://` URL whose path ends in `/`, so that relative joins keep a prefix.
pub fn parse_endpoint(text: &str) -> Result<Url> {
    let mut url = Url::parse(text.trim()).map_err(|error| Error::Config(format!("endpoint '{text}': {error}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::Config(format!("endpoint '{text}': the scheme must be http or https")));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_version_choices() {
        assert_eq!("2".parse::<ApiVersionChoice>().unwrap(), ApiVersionChoice::Major(2));
        assert_eq!("1.3.0".parse::<ApiVersionChoice>().unwrap().major(), 1);
        assert_eq!("2.1".parse::<ApiVersionChoice>().unwrap(), ApiVersionChoice::Exact(semver::Version::new(2, 1, 0)));
        assert!("3".parse::<ApiVersionChoice>().unwrap_err().contains("does not exist"));
        assert!("two".parse::<ApiVersionChoice>().is_err());
    }

    #[test]
    fn endpoints_keep_their_prefix_and_refuse_other_schemes() {
        assert_eq!(parse_endpoint("http://h:1").unwrap().as_str(), "http://h:1/");
        assert_eq!(
            parse_endpoint("https://h/nfv").unwrap().join("vnflcm/v2/x").unwrap().as_str(),
            "https://h/nfv/vnflcm/v2/x"
        );
        assert!(parse_endpoint("ftp://h").is_err());
        assert!(parse_endpoint("h:1").is_err());
    }

    #[test]
    fn secrets_are_redacted() {
        let auth = AuthConfig::OAuth2(OAuth2Auth {
            token_url: None,
            client_id: "c".into(),
            client_secret: "s3cr3t".into(),
            scope: None,
        });
        assert!(!format!("{auth:?}").contains("s3cr3t"));
        assert!(!format!("{:?}", AuthConfig::Token("t0k3n".into())).contains("t0k3n"));
    }
}
