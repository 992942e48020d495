//! Turning options, the environment and a named cloud of the configuration file into a
//! [`ClientConfig`]. The file, like OpenStack's clouds.yaml:
//!
//! ```yaml
//! clouds:
//!   lab:
//!     endpoint: https://vnfm.lab.example:9890
//!     api_version: "2"
//!     cacert: /etc/solgate/ca.pem
//!     auth_type: oauth2
//!     auth:
//!       client_id: nfvo
//!       client_secret: "..."
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use solgate_client::{ApiVersionChoice, AuthConfig, ClientConfig, KeystoneAuth, OAuth2Auth, TlsOptions};

use crate::cli::{AuthType, Global};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CloudsFile {
    #[serde(default)]
    clouds: BTreeMap<String, Cloud>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cloud {
    endpoint: Option<String>,
    api_version: Option<String>,
    cacert: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    #[serde(default)]
    insecure: bool,
    auth_type: Option<AuthType>,
    #[serde(default)]
    auth: CloudAuth,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CloudAuth {
    token: Option<String>,
    token_url: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    scope: Option<String>,
    auth_url: Option<String>,
    username: Option<String>,
    password: Option<String>,
    project_name: Option<String>,
    user_domain_name: Option<String>,
    project_domain_name: Option<String>,
}

impl<'de> Deserialize<'de> for AuthType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        <AuthType as clap::ValueEnum>::from_str(&text, true)
            .map_err(|_| serde::de::Error::custom(format!("auth_type '{text}': none, token, oauth2 or keystone")))
    }
}

fn default_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("solctl").join("clouds.yaml"))
}

fn load_cloud(global: &Global) -> Result<Cloud, String> {
    let Some(name) = &global.cloud else { return Ok(Cloud::default()) };
    let path = global.config.clone().or_else(default_config_path).ok_or("no configuration file for --cloud")?;
    let text = std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))?;
    let file: CloudsFile = serde_yaml_ng::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
    file.clouds.get(name).cloned().ok_or_else(|| {
        format!(
            "{}: no cloud '{name}' (it has: {})",
            path.display(),
            file.clouds.keys().cloned().collect::<Vec<_>>().join(", ")
        )
    })
}

/// The client configuration; an `Err` is a usage error (exit code 2).
pub fn client_config(global: &Global) -> Result<ClientConfig, String> {
    let cloud = load_cloud(global)?;
    let pick = |flag: &Option<String>, file: &Option<String>| flag.clone().or_else(|| file.clone());
    let endpoint = pick(&global.endpoint, &cloud.endpoint).unwrap_or_else(|| "http://127.0.0.1:9890".into());
    let mut config = ClientConfig::new(&endpoint).map_err(|error| error.to_string())?;
    if let Some(version) = pick(&global.api_version, &cloud.api_version) {
        config.api_version = version.parse::<ApiVersionChoice>()?;
    }
    config.tls = TlsOptions {
        ca_file: global.cacert.clone().or(cloud.cacert),
        cert_file: global.cert.clone().or(cloud.cert),
        key_file: global.key.clone().or(cloud.key),
        insecure: global.insecure || cloud.insecure,
    };
    config.timeout = Duration::from_secs(global.http_timeout.max(1));
    config.user_agent = concat!("solctl/", env!("CARGO_PKG_VERSION")).to_owned();
    let auth = &cloud.auth;
    let token = pick(&global.token, &auth.token);
    let token_url = pick(&global.token_url, &auth.token_url);
    let client_id = pick(&global.client_id, &auth.client_id);
    let client_secret = pick(&global.client_secret, &auth.client_secret);
    let scope = pick(&global.scope, &auth.scope);
    let auth_url = pick(&global.auth_url, &auth.auth_url);
    let auth_type = global.auth_type.or(cloud.auth_type).unwrap_or(if auth_url.is_some() {
        AuthType::Keystone
    } else if client_id.is_some() {
        AuthType::Oauth2
    } else if token.is_some() {
        AuthType::Token
    } else {
        AuthType::None
    });
    let required = |value: Option<String>, what: &str| {
        value.filter(|value| !value.is_empty()).ok_or_else(|| format!("auth type {auth_type:?} needs {what}"))
    };
    let url = |text: String, what: &str| url::Url::parse(&text).map_err(|error| format!("{what} '{text}': {error}"));
    config.auth = match auth_type {
        AuthType::None => AuthConfig::None,
        AuthType::Token => AuthConfig::Token(required(token, "--token")?),
        AuthType::Oauth2 => AuthConfig::OAuth2(OAuth2Auth {
            token_url: token_url.map(|text| url(text, "--token-url")).transpose()?,
            client_id: required(client_id, "--client-id")?,
            client_secret: required(client_secret, "--client-secret")?,
            scope,
        }),
        AuthType::Keystone => AuthConfig::Keystone(KeystoneAuth {
            auth_url: url(required(auth_url, "--auth-url")?, "--auth-url")?,
            username: required(pick(&global.username, &auth.username), "--username")?,
            password: required(pick(&global.password, &auth.password), "--password")?,
            project_name: required(pick(&global.project_name, &auth.project_name), "--project-name")?,
            user_domain_name: pick(&global.user_domain_name, &auth.user_domain_name)
                .unwrap_or_else(|| "Default".into()),
            project_domain_name: pick(&global.project_domain_name, &auth.project_domain_name)
                .unwrap_or_else(|| "Default".into()),
        }),
    };
    Ok(config)
}
