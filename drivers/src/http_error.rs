//! Transport errors of the remote drivers with their causes.

/// A reqwest error and its source chain (`error sending request ...: client error
/// (Connect): invalid peer certificate: UnknownIssuer`).
pub(crate) fn with_causes(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Whether a transport failure may pass when the call is made again: the connection
/// refused, reset or timed out, a body cut short, a proxy's 5xx. A TLS certificate that
/// is not trusted (or a name that does not match it) stays refused, and a request that
/// could not even be built will not build next time either.
pub(crate) fn transport_is_transient(error: &reqwest::Error) -> bool {
    if let Some(status) = error.status() {
        return crate::run::transient_status(status.as_u16());
    }
    if error.is_builder() || error.is_redirect() || error.is_decode() || certificate_problem(error) {
        return false;
    }
    error.is_connect() || error.is_timeout() || error.is_request() || error.is_body()
}

/// A certificate the TLS stack refused, found in the cause chain (rustls: "invalid peer
/// certificate: UnknownIssuer"; native TLS: "certificate verify failed").
fn certificate_problem(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause.to_string().to_ascii_lowercase().contains("certificate") {
            return true;
        }
        source = cause.source();
    }
    false
}
