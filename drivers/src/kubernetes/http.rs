//! HTTP plumbing of the Kubernetes client.

use std::time::Duration;

use serde_json::Value;

pub(crate) use crate::secret::Secret;

use super::{KubernetesError, Result};
use crate::settings::{SKIP_REFUSED, VimTrust};

/// Timeout of one non-watch call; watches run until their own `timeoutSeconds`.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How requests authenticate (Tacker's `AuthContextManager.init_k8s_api_client`).
#[derive(Clone, Debug)]
pub(crate) enum Auth {
    /// `Authorization: Bearer <accessInfo.bearer_token>` (service-account token).
    Bearer(Secret),
    /// `Authorization: Basic`, from `accessInfo.username` / `password`.
    Basic { username: String, password: Secret },
}

impl Auth {
    pub(crate) fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Self::Bearer(token) => request.bearer_auth(token.expose()),
            Self::Basic { username, password } => request.basic_auth(username, Some(password.expose())),
        }
    }
}

/// TLS settings from `interfaceInfo`, plus the operator's trust settings.
#[derive(Debug, Clone, Default)]
pub(crate) struct TlsSettings {
    /// PEM of the cluster CA (`interfaceInfo.ssl_ca_cert`); when set it is the only trusted root.
    pub(crate) ca_cert: Option<String>,
    pub(crate) skip_certificate_verification: bool,
    /// The `[tls]` table: extra trust anchors, and whether a VIM may turn verification off.
    pub(crate) trust: VimTrust,
}

pub(crate) fn build_client(tls: &TlsSettings) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .user_agent(concat!("solgate/", env!("CARGO_PKG_VERSION")));
    if tls.skip_certificate_verification {
        if !tls.trust.allow_skip_verification {
            return Err(KubernetesError::InvalidVimConnectionInfo(SKIP_REFUSED.to_owned()));
        }
        builder = builder.tls_danger_accept_invalid_certs(true);
    }
    if let Some(pem) = &tls.ca_cert {
        let certs = reqwest::Certificate::from_pem_bundle(normalize_pem(pem).as_bytes())
            .map_err(|e| KubernetesError::InvalidVimConnectionInfo(format!("ssl_ca_cert: {e}")))?;
        builder = builder.tls_certs_only(certs);
    } else if let Some(pem) = &tls.trust.extra_ca_pem {
        let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
            .map_err(|e| KubernetesError::InvalidVimConnectionInfo(format!("tls.ca_file: {e}")))?;
        builder = builder.tls_certs_merge(certs);
    }
    Ok(builder.build()?)
}

/// VIM registrations often carry the CA with its line breaks flattened to spaces; Tacker
/// rebuilds the PEM by turning whitespace back into newlines and re-joining the
/// `BEGIN CERTIFICATE` / `END CERTIFICATE` markers. Same here, for PEM text without newlines.
pub(crate) fn normalize_pem(pem: &str) -> String {
    let pem = pem.trim();
    if pem.contains('\n') {
        return format!("{pem}\n");
    }
    let mut out = pem.split_whitespace().collect::<Vec<_>>().join("\n");
    for marker in ["BEGIN", "END"] {
        out = out.replace(&format!("{marker}\nCERTIFICATE"), &format!("{marker} CERTIFICATE"));
    }
    out.push('\n');
    out
}

/// Turns a non-success answer into [`KubernetesError::Api`] using the `Status` object the
/// API server returns (`{"kind":"Status","status":"Failure","message","reason","code"}`).
pub(crate) async fn api_error(response: reqwest::Response) -> KubernetesError {
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    status_error(status.as_u16(), &text)
}

pub(crate) fn status_error(status: u16, text: &str) -> KubernetesError {
    let body: Option<Value> = serde_json::from_str(text).ok();
    status_object_error(status, body.as_ref(), text)
}

pub(crate) fn status_object_error(status: u16, body: Option<&Value>, raw: &str) -> KubernetesError {
    let field = |key: &str| body.and_then(|b| b.get(key)).and_then(Value::as_str).map(str::to_owned);
    let message =
        field("message").or_else(|| (!raw.trim().is_empty()).then(|| raw.trim().to_owned())).unwrap_or_else(|| {
            reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("no reason")
                .to_owned()
        });
    KubernetesError::Api { status, reason: field("reason"), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattened_ca_is_rebuilt_as_pem() {
        let flat = "-----BEGIN CERTIFICATE----- MIIBszCCAVmgAwIBAgIUS AbCd== -----END CERTIFICATE-----";
        assert_eq!(
            normalize_pem(flat),
            "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUS\nAbCd==\n-----END CERTIFICATE-----\n"
        );
        let proper = "-----BEGIN CERTIFICATE-----\nAbCd==\n-----END CERTIFICATE-----";
        assert_eq!(normalize_pem(proper), format!("{proper}\n"));
    }

    #[test]
    fn status_object_gives_reason_and_message() {
        let err = status_error(
            403,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
            "message":"pods is forbidden: User \"system:serviceaccount:default:tacker\" cannot list resource \"pods\"",
            "reason":"Forbidden","details":{"kind":"pods"},"code":403}"#,
        );
        assert_eq!(
            err.to_string(),
            "Kubernetes API returned HTTP 403 (Forbidden): pods is forbidden: User \
             \"system:serviceaccount:default:tacker\" cannot list resource \"pods\""
        );
        assert_eq!(status_error(502, "").to_string(), "Kubernetes API returned HTTP 502: Bad Gateway");
    }

    #[test]
    fn secret_debug_is_redacted() {
        let auth = Auth::Bearer(Secret::new("eyJhbGciOi"));
        assert!(!format!("{auth:?}").contains("eyJhbGciOi"));
    }
}
