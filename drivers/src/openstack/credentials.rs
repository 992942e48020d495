use std::fmt;

use serde_json::Value;
use url::Url;

use super::http::{Secret, TlsSettings};
use super::{OpenStackError, Result};
use crate::infra::VimConnection;
use crate::vim_info::interface_and_access;

/// `vimConnectionInfo.vimType` of an OpenStack VIM (ETSI NFV registry, SOL003 §4.4.1.6).
pub const VIM_TYPE: &str = crate::infra::VIM_TYPE_OPENSTACK;

/// Keystone v3 password credentials of one OpenStack VIM.
///
/// Built from a SOL003 `VimConnectionInfo`: `interfaceInfo.endpoint` is the Keystone URL,
/// `accessInfo` holds `username`, `password`, `project`, `projectDomain`, `userDomain` and
/// optionally `region` (the keys Tacker's `vim_utils.vim_to_conn_info` writes). Tacker's
/// VIM-registration spellings (`auth_url`, `project_name`, `project_domain_name`,
/// `user_domain_name`, `region_name`) are accepted too. The password is kept out of `Debug`.
#[derive(Clone)]
pub struct VimCredentials {
    /// Keystone v3 root, always ending in `/v3` (e.g. `http://host/identity/v3`).
    pub auth_url: Url,
    pub username: String,
    password: Secret,
    pub project_name: String,
    pub project_domain_name: String,
    pub user_domain_name: String,
    /// Region whose endpoints are used; `None` takes the first endpoint of the interface.
    pub region: Option<String>,
    pub(crate) tls: TlsSettings,
}

impl VimCredentials {
    /// Credentials from explicit values; `auth_url` gets `/v3` appended when it names no version.
    pub fn new(
        auth_url: &str,
        username: impl Into<String>,
        password: impl Into<String>,
        project_name: impl Into<String>,
        project_domain_name: impl Into<String>,
        user_domain_name: impl Into<String>,
    ) -> Result<Self> {
        Ok(Self {
            auth_url: identity_v3_url(auth_url)?,
            username: username.into(),
            password: Secret::new(password),
            project_name: project_name.into(),
            project_domain_name: project_domain_name.into(),
            user_domain_name: user_domain_name.into(),
            region: None,
            tls: TlsSettings::default(),
        })
    }

    /// Reads a SOL003 `VimConnectionInfo` (v1 list item or v2 map value).
    pub fn from_vim_connection(vim: &VimConnection) -> Result<Self> {
        let (interface, access) = interface_and_access(vim, VIM_TYPE).map_err(invalid)?;

        let endpoint = interface
            .string(&["endpoint"])
            .or_else(|| access.string(&["auth_url"]))
            .ok_or_else(|| invalid("interfaceInfo.endpoint is missing"))?;
        let required = |keys: &[&str]| access.required(keys).map_err(invalid);
        let mut creds = Self::new(
            &endpoint,
            required(&["username"])?,
            required(&["password"])?,
            required(&["project", "projectName", "project_name"])?,
            required(&["projectDomain", "projectDomainName", "project_domain_name"])?,
            required(&["userDomain", "userDomainName", "user_domain_name"])?,
        )?;
        creds.region = access.string(&["region", "regionName", "region_name"]);
        creds.tls = TlsSettings {
            skip_certificate_verification: interface.flag("skipCertificateVerification"),
            skip_certificate_hostname_check: interface.flag("skipCertificateHostnameCheck"),
            trusted_certificates: match interface.get("trustedCertificates") {
                Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                Some(Value::String(pem)) => vec![pem.clone()],
                _ => Vec::new(),
            },
            trust: crate::VimTrust::default(),
        };
        Ok(creds)
    }

    pub(crate) fn password(&self) -> &str {
        self.password.expose()
    }
}

impl fmt::Debug for VimCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VimCredentials")
            .field("auth_url", &self.auth_url.as_str())
            .field("username", &self.username)
            .field("password", &self.password)
            .field("project_name", &self.project_name)
            .field("project_domain_name", &self.project_domain_name)
            .field("user_domain_name", &self.user_domain_name)
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

fn invalid(msg: impl Into<String>) -> OpenStackError {
    OpenStackError::InvalidVimConnectionInfo(msg.into())
}

/// Keystone v3 root from a VIM endpoint. keystoneauth1 discovers the version from an
/// unversioned URL; we only talk v3, so `/v3` is appended when the path names no version
/// and any other version (e.g. the retired `/v2.0`) is refused.
fn identity_v3_url(endpoint: &str) -> Result<Url> {
    let mut url = Url::parse(endpoint.trim()).map_err(|e| invalid(format!("interfaceInfo.endpoint: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!("interfaceInfo.endpoint must be http(s), got {endpoint}")));
    }
    let last = url.path_segments().and_then(|mut s| s.rfind(|seg| !seg.is_empty())).unwrap_or("").to_owned();
    let is_version = last.len() > 1 && last.starts_with('v') && last[1..].starts_with(|c: char| c.is_ascii_digit());
    if is_version && last != "v3" {
        return Err(invalid(format!("interfaceInfo.endpoint {endpoint} is not a Keystone v3 URL")));
    }
    {
        let mut segments = url.path_segments_mut().map_err(|()| invalid("interfaceInfo.endpoint has no path"))?;
        segments.pop_if_empty();
        if !is_version {
            segments.push("v3");
        }
    }
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Shape written by Tacker's vim_utils.vim_to_conn_info (ETSINFV.OPENSTACK_KEYSTONE.V_3).
    fn sol003_vim() -> VimConnection {
        VimConnection {
            id: "vim-1".into(),
            vim_id: Some("c3369b54-e376-4423-bb61-afd255900fea".into()),
            vim_type: VIM_TYPE.into(),
            interface_info: json!({"endpoint": "http://192.0.2.10/identity/v3",
                "skipCertificateHostnameCheck": true, "skipCertificateVerification": true}),
            access_info: json!({"username": "nfv_user", "password": "devstack", "region": "RegionOne",
                "project": "nfv", "projectDomain": "Default", "userDomain": "Default"}),
            extra: json!({}),
        }
    }

    #[test]
    fn reads_sol003_vim_connection_info() {
        let creds = VimCredentials::from_vim_connection(&sol003_vim()).unwrap();
        assert_eq!(creds.auth_url.as_str(), "http://192.0.2.10/identity/v3");
        assert_eq!(creds.username, "nfv_user");
        assert_eq!(creds.password(), "devstack");
        assert_eq!(creds.project_name, "nfv");
        assert_eq!(creds.project_domain_name, "Default");
        assert_eq!(creds.user_domain_name, "Default");
        assert_eq!(creds.region.as_deref(), Some("RegionOne"));
        assert!(creds.tls.skip_certificate_verification);
    }

    #[test]
    fn accepts_tacker_vim_registration_keys_and_unversioned_endpoint() {
        let vim = VimConnection {
            vim_type: "openstack".into(),
            access_info: json!({"auth_url": "http://192.0.2.10/identity/", "username": "admin", "password": "pw",
                "project_name": "admin", "project_domain_name": "Default", "user_domain_name": "Default"}),
            ..VimConnection::default()
        };
        let creds = VimCredentials::from_vim_connection(&vim).unwrap();
        assert_eq!(creds.auth_url.as_str(), "http://192.0.2.10/identity/v3");
        assert_eq!(creds.project_name, "admin");
        assert_eq!(creds.region, None);
    }

    #[test]
    fn missing_keys_are_named() {
        for (interface, key, expected) in [
            (false, "password", "accessInfo.password is missing"),
            (false, "projectDomain", "accessInfo.projectDomain is missing"),
            (true, "endpoint", "interfaceInfo.endpoint is missing"),
        ] {
            let mut vim = sol003_vim();
            let info = if interface { &mut vim.interface_info } else { &mut vim.access_info };
            info.as_object_mut().unwrap().remove(key);
            let err = VimCredentials::from_vim_connection(&vim).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid vimConnectionInfo: {expected}"));
        }
    }

    #[test]
    fn other_vim_types_and_identity_versions_are_refused() {
        let mut vim = sol003_vim();
        vim.vim_type = "ETSINFV.KUBERNETES.V_1".into();
        assert!(VimCredentials::from_vim_connection(&vim).unwrap_err().to_string().contains("vimType"));
        let mut vim = sol003_vim();
        vim.interface_info["endpoint"] = json!("http://192.0.2.10:5000/v2.0");
        assert!(VimCredentials::from_vim_connection(&vim).unwrap_err().to_string().contains("not a Keystone v3"));
    }

    #[test]
    fn debug_never_shows_the_password() {
        let creds = VimCredentials::from_vim_connection(&sol003_vim()).unwrap();
        let debug = format!("{creds:?}");
        assert!(!debug.contains("devstack"), "{debug}");
        assert!(debug.contains("nfv_user"));
    }
}
