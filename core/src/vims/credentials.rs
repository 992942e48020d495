//! `auth_cred` and `vim_project` of a registration or an update: checked and completed with
//! Tacker's defaults (domain `Default`, `cert_verify` `True`). The credentials are in clear
//! here; they are sealed before they are stored.

use serde_json::{Map, Value};

use super::document::{AuthCred, VimProject};
use super::fields::{optional_string, refuse_unknown, required_string};
use super::{OPENSTACK, VimError, VimResult, bad_request};

const OPENSTACK_CRED_KEYS: &[&str] =
    &["username", "password", "user_domain_name", "cert_verify", "project_name", "project_domain_name", "auth_url"];
const KUBERNETES_CRED_KEYS: &[&str] = &[
    "bearer_token",
    "username",
    "password",
    "ssl_ca_cert",
    "oidc_token_url",
    "client_id",
    "client_secret",
    "auth_url",
];

/// Checks `auth_cred` and `vim_project` of a VIM of `vim_type` and returns them completed.
pub(super) fn normalize(
    vim_type: &str,
    auth_url: &str,
    auth_cred: &Map<String, Value>,
    vim_project: &Map<String, Value>,
) -> VimResult<(AuthCred, VimProject)> {
    let name = required_string(vim_project, "name", "vim_project.")?;
    let (mut cred, project) = if vim_type == OPENSTACK {
        openstack(auth_cred, vim_project, name)?
    } else {
        kubernetes(auth_cred, vim_project, name)?
    };
    cred.auth_url = Some(auth_url.to_owned());
    Ok((cred, project))
}

/// The typed credentials of a checked map: every known member is a string (or absent).
fn typed(auth_cred: &Map<String, Value>, known: &[&str]) -> VimResult<AuthCred> {
    for key in known {
        optional_string(auth_cred, key, "auth_cred.")?;
    }
    serde_json::from_value(Value::Object(auth_cred.clone()))
        .map_err(|error| bad_request(format!("auth_cred is malformed: {error}.")))
}

fn openstack(
    auth_cred: &Map<String, Value>,
    vim_project: &Map<String, Value>,
    name: String,
) -> VimResult<(AuthCred, VimProject)> {
    refuse_unknown(auth_cred, OPENSTACK_CRED_KEYS, "auth_cred")?;
    refuse_unknown(vim_project, &["name", "project_domain_name"], "vim_project")?;
    required_string(auth_cred, "username", "auth_cred.")?;
    required_string(auth_cred, "password", "auth_cred.")?;
    let mut cred = typed(auth_cred, OPENSTACK_CRED_KEYS)?;
    let cert_verify = cred.cert_verify.take().unwrap_or_else(|| "True".into());
    if cert_verify != "True" && cert_verify != "False" {
        return Err(bad_request("auth_cred.cert_verify must be 'True' or 'False'."));
    }
    cred.cert_verify = Some(cert_verify);
    let domain = |value: Option<String>| value.filter(|text| !text.is_empty()).unwrap_or_else(|| "Default".into());
    cred.user_domain_name = Some(domain(cred.user_domain_name.take()));
    let project_domain = domain(optional_string(vim_project, "project_domain_name", "vim_project.")?);
    cred.project_name = Some(name.clone());
    cred.project_domain_name = Some(project_domain.clone());
    Ok((cred, VimProject { name, project_domain_name: Some(project_domain) }))
}

fn kubernetes(
    auth_cred: &Map<String, Value>,
    vim_project: &Map<String, Value>,
    name: String,
) -> VimResult<(AuthCred, VimProject)> {
    refuse_unknown(auth_cred, KUBERNETES_CRED_KEYS, "auth_cred")?;
    refuse_unknown(vim_project, &["name"], "vim_project")?;
    let cred = typed(auth_cred, KUBERNETES_CRED_KEYS)?;
    let has = |value: &Option<String>| AuthCred::non_empty(value).is_some();
    if has(&cred.oidc_token_url) {
        for key in ["username", "password", "client_id"] {
            required_string(auth_cred, key, "auth_cred.")?;
        }
    } else if !(has(&cred.bearer_token) || (has(&cred.username) && has(&cred.password))) {
        return Err(bad_request(
            "auth_cred needs bearer_token, or username and password, or oidc_token_url (Kubernetes VIM).",
        ));
    }
    if let Some(pem) = AuthCred::non_empty(&cred.ssl_ca_cert) {
        ca_certificates(pem)?;
    }
    Ok((cred, VimProject { name, project_domain_name: None }))
}

/// The certificates of `ssl_ca_cert`, 400 when it holds none.
pub(super) fn ca_certificates(pem: &str) -> VimResult<Vec<reqwest::Certificate>> {
    reqwest::Certificate::from_pem_bundle(pem.as_bytes())
        .ok()
        .filter(|certificates| !certificates.is_empty())
        .ok_or_else(|| VimError::BadRequest("auth_cred.ssl_ca_cert is not a PEM certificate.".into()))
}

/// Tacker keeps Keystone's URL with its version (`.../identity/v3`).
pub(super) fn keystone_v3(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    if trimmed.ends_with("/v3") { trimmed.to_owned() } else { format!("{trimmed}/v3") }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::KUBERNETES;
    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn keystone_urls_keep_their_version() {
        assert_eq!(keystone_v3("http://192.0.2.1/identity"), "http://192.0.2.1/identity/v3");
        assert_eq!(keystone_v3("http://192.0.2.1/identity/v3/"), "http://192.0.2.1/identity/v3");
    }

    #[test]
    fn openstack_credentials_get_tackers_defaults_and_unknown_keys_are_refused() {
        let cred = map(json!({"username": "nfv_user", "password": "secret"}));
        let project = map(json!({"name": "nfv"}));
        let (cred, completed) = normalize(OPENSTACK, "http://k/v3", &cred, &project).unwrap();
        assert_eq!(cred.cert_verify.as_deref(), Some("True"));
        assert_eq!(cred.user_domain_name.as_deref(), Some("Default"));
        assert_eq!(completed.project_domain_name.as_deref(), Some("Default"));
        assert_eq!(cred.project_name.as_deref(), Some("nfv"));
        assert_eq!(cred.auth_url.as_deref(), Some("http://k/v3"));

        let error = normalize(
            OPENSTACK,
            "http://k/v3",
            &map(json!({"username": "u", "password": "p", "token": "t"})),
            &project,
        )
        .unwrap_err();
        assert!(error.to_string().contains("token"), "{error}");
        let error = normalize(OPENSTACK, "http://k/v3", &map(json!({"username": "u"})), &project).unwrap_err();
        assert_eq!(error.to_string(), "auth_cred.password is required.");
        let namespace = map(json!({"name": "default"}));
        let error = normalize(KUBERNETES, "https://k8s", &map(json!({})), &namespace).unwrap_err();
        assert!(error.to_string().contains("bearer_token"), "{error}");
    }
}
