use std::fmt;

use serde_json::Value;
use url::Url;

use super::http::{Auth, Secret, TlsSettings};
use super::{KubernetesError, Result};
use crate::infra::VimConnection;
use crate::vim_info::interface_and_access;

/// `vimConnectionInfo.vimType` of a Kubernetes VIM (ETSI NFV registry).
pub const VIM_TYPE: &str = crate::infra::VIM_TYPE_KUBERNETES;
/// Tacker's legacy value, which Tacker rewrites to [`VIM_TYPE`].
pub const LEGACY_VIM_TYPE: &str = "kubernetes";

/// Namespace used when neither the VIM nor the manifest names one (Tacker does the same).
const DEFAULT_NAMESPACE: &str = "default";

/// Access to one Kubernetes API server.
///
/// From a SOL003 `VimConnectionInfo`: `interfaceInfo.endpoint` (API server URL),
/// `accessInfo.bearer_token` (or `username` + `password`), optional `ssl_ca_cert`
/// (`interfaceInfo`, where Tacker's `vim_to_conn_info` puts it, or `accessInfo`) and the
/// namespace from `extra.namespace` (default `default`). Tokens stay out of `Debug`.
#[derive(Clone)]
pub struct VimCredentials {
    pub endpoint: Url,
    pub(crate) auth: Auth,
    /// Namespace for manifests that name none.
    pub namespace: String,
    pub(crate) tls: TlsSettings,
}

impl VimCredentials {
    /// Bearer-token credentials for `endpoint`, namespace `default`.
    pub fn new(endpoint: &str, bearer_token: impl Into<String>) -> Result<Self> {
        Ok(Self {
            endpoint: api_server_url(endpoint)?,
            auth: Auth::Bearer(Secret::new(bearer_token)),
            namespace: DEFAULT_NAMESPACE.to_owned(),
            tls: TlsSettings::default(),
        })
    }

    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Reads a SOL003 `VimConnectionInfo` (v1 list item or v2 map value).
    pub fn from_vim_connection(vim: &VimConnection) -> Result<Self> {
        Self::from_vim_connection_of(vim, VIM_TYPE)
    }

    /// As [`VimCredentials::from_vim_connection`], for a connection of `vim_type` (a Helm
    /// VIM is a Kubernetes cluster reached the same way).
    pub fn from_vim_connection_of(vim: &VimConnection, vim_type: &str) -> Result<Self> {
        let (interface, access) = interface_and_access(vim, vim_type).map_err(invalid)?;
        let endpoint = interface.required(&["endpoint"]).map_err(invalid)?;

        let auth = if let Some(token) = access.string(&["bearer_token"]) {
            Auth::Bearer(Secret::new(token))
        } else if let (Some(username), Some(password)) = (access.string(&["username"]), access.string(&["password"])) {
            if access.get("oidc_token_url").is_some() {
                return Err(invalid("accessInfo.oidc_token_url (OpenID Connect) is not supported; use bearer_token"));
            }
            Auth::Basic { username, password: Secret::new(password) }
        } else {
            return Err(invalid("accessInfo.bearer_token is missing"));
        };
        let namespace = vim
            .extra
            .get("namespace")
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
            .unwrap_or(DEFAULT_NAMESPACE)
            .to_owned();
        Ok(Self {
            endpoint: api_server_url(&endpoint)?,
            auth,
            namespace,
            tls: TlsSettings {
                ca_cert: interface.string(&["ssl_ca_cert"]).or_else(|| access.string(&["ssl_ca_cert"])),
                skip_certificate_verification: interface.flag("skipCertificateVerification"),
                trust: crate::VimTrust::default(),
            },
        })
    }
}

impl fmt::Debug for VimCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VimCredentials")
            .field("endpoint", &self.endpoint.as_str())
            .field("auth", &self.auth)
            .field("namespace", &self.namespace)
            .field("ssl_ca_cert", &self.tls.ca_cert.is_some())
            .finish()
    }
}

fn invalid(msg: impl Into<String>) -> KubernetesError {
    KubernetesError::InvalidVimConnectionInfo(msg.into())
}

fn api_server_url(endpoint: &str) -> Result<Url> {
    let url = Url::parse(endpoint.trim()).map_err(|e| invalid(format!("interfaceInfo.endpoint: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(invalid(format!("interfaceInfo.endpoint must be an http(s) URL, got {endpoint}")));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Shape written by Tacker's vim_utils.vim_to_conn_info for a bearer-token VIM.
    fn sol003_vim() -> VimConnection {
        VimConnection {
            id: "vim-1".into(),
            vim_id: Some("8a3adb69-0784-43c7-833e-aab0b6ab4470".into()),
            vim_type: LEGACY_VIM_TYPE.into(),
            interface_info: json!({"endpoint": "http://192.0.2.20:6443",
                "ssl_ca_cert": "-----BEGIN CERTIFICATE----- x -----END CERTIFICATE-----"}),
            access_info: json!({"bearer_token": "secret_token"}),
            extra: json!({"namespace": "vnf-ns"}),
        }
    }

    #[test]
    fn reads_bearer_token_ca_and_namespace() {
        let creds = VimCredentials::from_vim_connection(&sol003_vim()).unwrap();
        assert_eq!(creds.endpoint.as_str(), "http://192.0.2.20:6443/");
        assert_eq!(creds.namespace, "vnf-ns");
        assert!(creds.tls.ca_cert.is_some());
        assert!(matches!(&creds.auth, Auth::Bearer(t) if t.expose() == "secret_token"));
        assert!(!format!("{creds:?}").contains("secret_token"));
    }

    #[test]
    fn namespace_defaults_to_default_and_basic_auth_is_accepted() {
        let vim = VimConnection {
            vim_type: VIM_TYPE.into(),
            interface_info: json!({"endpoint": "http://k8s:6443"}),
            access_info: json!({"username": "admin", "password": "pw"}),
            ..VimConnection::default()
        };
        let creds = VimCredentials::from_vim_connection(&vim).unwrap();
        assert_eq!(creds.namespace, "default");
        assert!(matches!(&creds.auth, Auth::Basic { username, .. } if username == "admin"));
    }

    #[test]
    fn missing_or_foreign_values_are_named() {
        let mut vim = sol003_vim();
        vim.access_info = json!({});
        assert_eq!(
            VimCredentials::from_vim_connection(&vim).unwrap_err().to_string(),
            "invalid vimConnectionInfo: accessInfo.bearer_token is missing"
        );
        let mut vim = sol003_vim();
        vim.interface_info = json!({});
        assert_eq!(
            VimCredentials::from_vim_connection(&vim).unwrap_err().to_string(),
            "invalid vimConnectionInfo: interfaceInfo.endpoint is missing"
        );
        let mut vim = sol003_vim();
        vim.vim_type = "ETSINFV.OPENSTACK_KEYSTONE.V_3".into();
        assert!(VimCredentials::from_vim_connection(&vim).unwrap_err().to_string().contains("vimType"));
    }
}
