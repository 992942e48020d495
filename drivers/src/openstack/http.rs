//! HTTP plumbing shared by the Keystone and Heat clients.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

pub(crate) use crate::secret::Secret;

use super::{OpenStackError, Result};
use crate::settings::{SKIP_REFUSED, VimTrust};

/// TLS settings from `interfaceInfo` (SOL003 VimConnectionInfo, ETSI registry entry
/// ETSINFV.OPENSTACK_KEYSTONE.V_3), plus the operator's trust settings.
#[derive(Debug, Clone, Default)]
pub(crate) struct TlsSettings {
    pub(crate) skip_certificate_verification: bool,
    pub(crate) skip_certificate_hostname_check: bool,
    pub(crate) trusted_certificates: Vec<String>,
    /// The `[tls]` table: extra trust anchors, and whether a VIM may turn verification off.
    pub(crate) trust: VimTrust,
}

/// Default per-request timeout; Heat calls return quickly, the long waits are polling loops.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Builds the reqwest client for one VIM. Redirects are handled by hand: reqwest turns a
/// PATCH/DELETE that gets 302 into a GET, while Heat answers every call on
/// `/stacks/{name}` with 302 to `/stacks/{name}/{id}` and expects the same method again
/// (keystoneauth1, which Tacker uses, re-sends it).
pub(crate) fn build_client(tls: &TlsSettings) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(30))
        .user_agent(concat!("solgate/", env!("CARGO_PKG_VERSION")));
    if tls.skip_certificate_verification || tls.skip_certificate_hostname_check {
        if !tls.trust.allow_skip_verification {
            return Err(OpenStackError::InvalidVimConnectionInfo(SKIP_REFUSED.to_owned()));
        }
        builder = builder
            .tls_danger_accept_invalid_certs(tls.skip_certificate_verification)
            .tls_danger_accept_invalid_hostnames(tls.skip_certificate_hostname_check);
    }
    let extra = tls.trust.extra_ca_pem.as_deref().map(|pem| ("tls.ca_file", pem));
    let listed = tls.trusted_certificates.iter().map(|pem| ("trustedCertificates", pem.as_str()));
    for (source, pem) in listed.chain(extra) {
        let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
            .map_err(|e| OpenStackError::InvalidVimConnectionInfo(format!("{source}: {e}")))?;
        builder = builder.tls_certs_merge(certs);
    }
    Ok(builder.build()?)
}

/// Turns a non-success answer into [`OpenStackError::Api`], keeping the service's message.
///
/// Heat's fault middleware (heat/api/middleware/fault.py) answers
/// `{"code", "title", "explanation", "error": {"type", "message", "traceback"}}`;
/// Keystone answers `{"error": {"code", "title", "message"}}`.
pub(crate) async fn api_error(service: &'static str, response: reqwest::Response) -> OpenStackError {
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let (message, error_type) = error_message(status, &text);
    OpenStackError::Api { service, status: status.as_u16(), message, error_type }
}

pub(crate) fn error_message(status: StatusCode, text: &str) -> (String, Option<String>) {
    let body: Option<Value> = serde_json::from_str(text).ok();
    let pick = |ptr: &str| body.as_ref().and_then(|b| b.pointer(ptr)).and_then(Value::as_str).map(str::to_owned);
    let message = pick("/error/message")
        .or_else(|| pick("/explanation"))
        .or_else(|| pick("/error/title"))
        .or_else(|| pick("/title"))
        .or_else(|| wrapped_message(body.as_ref()))
        .or_else(|| (!text.trim().is_empty()).then(|| text.trim().to_owned()))
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("no reason").to_owned());
    (message, pick("/error/type"))
}

/// Nova wraps its faults in one key named after the fault (`{"conflictingRequest": {"code": 409,
/// "message": ...}}`, `itemNotFound`, `badRequest`; nova/api/openstack/wsgi.py `Fault`).
fn wrapped_message(body: Option<&Value>) -> Option<String> {
    let fields = body?.as_object()?;
    if fields.len() != 1 {
        return None;
    }
    fields.values().find_map(|fault| fault.get("message")?.as_str().map(str::to_owned))
}

/// Reads a JSON body, mapping a malformed one to [`OpenStackError::InvalidResponse`].
pub(crate) async fn json_body<T: serde::de::DeserializeOwned>(
    service: &'static str,
    response: reqwest::Response,
) -> Result<T> {
    let bytes = response.bytes().await?;
    serde_json::from_slice(&bytes).map_err(|e| OpenStackError::InvalidResponse { service, detail: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_fault_message_wins_over_explanation() {
        let body = r#"{"explanation": "There was a conflict when trying to complete your request.",
            "code": 409, "error": {"message": "The Stack (vnf-1) already exists.", "traceback": null,
            "type": "StackExists"}, "title": "Conflict"}"#;
        let (message, error_type) = error_message(StatusCode::CONFLICT, body);
        assert_eq!(message, "The Stack (vnf-1) already exists.");
        assert_eq!(error_type.as_deref(), Some("StackExists"));
    }

    #[test]
    fn unsafe_heat_fault_falls_back_to_explanation_and_plain_text_is_kept() {
        // Heat leaves `error.message` out of faults that are not marked safe.
        let body = r#"{"code": 500, "title": "Internal Server Error", "explanation": "The server has either erred",
            "error": {"type": "KeyError", "traceback": null}}"#;
        assert_eq!(error_message(StatusCode::INTERNAL_SERVER_ERROR, body).0, "The server has either erred");
        assert_eq!(error_message(StatusCode::BAD_GATEWAY, "upstream down\n").0, "upstream down");
        assert_eq!(error_message(StatusCode::BAD_GATEWAY, "").0, "Bad Gateway");
    }

    #[test]
    fn nova_fault_message_is_unwrapped() {
        let body = r#"{"conflictingRequest": {"code": 409, "message": "Cannot 'os-stop' instance 4a1c while it is in vm_state stopped"}}"#;
        let (message, error_type) = error_message(StatusCode::CONFLICT, body);
        assert_eq!(message, "Cannot 'os-stop' instance 4a1c while it is in vm_state stopped");
        assert_eq!(error_type, None);
    }

    #[test]
    fn secret_debug_is_redacted() {
        assert_eq!(format!("{:?}", Secret::new("hunter2")), "\"***\"");
    }
}
