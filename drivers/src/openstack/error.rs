use std::time::Duration;

/// Everything the Keystone and Heat clients can fail with.
///
/// Remote failures keep the HTTP status and the service's own message (Heat's
/// `error.message`, Keystone's `error.message`) so the conductor can put them into the
/// operation's ProblemDetails `detail`, as Tacker does with `StackOperationFailed`.
#[derive(Debug, thiserror::Error)]
pub enum OpenStackError {
    /// The VimConnectionInfo lacks a key or holds a value of the wrong shape.
    #[error("invalid vimConnectionInfo: {0}")]
    InvalidVimConnectionInfo(String),

    /// Keystone refused the password authentication (wrong password, unknown project, ...).
    #[error("Keystone authentication failed with HTTP {status}: {message}")]
    Authentication { status: u16, message: String },

    /// The token's service catalog has no matching endpoint.
    #[error("no {interface} endpoint for service type '{service_type}'{} in the Keystone catalog",
        region.as_deref().map(|r| format!(" in region '{r}'")).unwrap_or_default())]
    EndpointNotFound { service_type: String, interface: String, region: Option<String> },

    /// Heat (or Keystone outside authentication) answered with an unexpected status.
    #[error("{service} returned HTTP {status}: {message}")]
    Api {
        service: &'static str,
        status: u16,
        /// Heat's `error.message` (or `explanation`/`title`), Keystone's `error.message`, else the raw text.
        message: String,
        /// Heat's exception class name (`error.type`), e.g. `StackExists`, `EntityNotFound`.
        error_type: Option<String>,
    },

    /// A stack reached a `*_FAILED` (or rolled-back) status; `reason` is Heat's `stack_status_reason`.
    #[error("stack {stack} reached {status}: {reason}")]
    StackFailed { stack: String, status: String, reason: String },

    /// The stack does not exist (Heat answered 404) while it was expected to.
    #[error("stack {stack} not found")]
    StackNotFound { stack: String },

    /// The stack showed a status that belongs to none of the awaited action's states.
    #[error("stack {stack} is {status} while waiting for {target}")]
    UnexpectedStatus { stack: String, status: String, target: String },

    /// `wait_for` gave up.
    #[error("timed out after {waited:?} waiting for stack {stack} to reach {target} (last status: {last_status})")]
    Timeout { stack: String, target: String, last_status: String, waited: Duration },

    /// A HOT template or a nested file could not be parsed.
    #[error("invalid HOT template: {0}")]
    Template(String),

    /// A 2xx answer whose body is not what the API reference documents.
    #[error("unexpected response from {service}: {detail}")]
    InvalidResponse { service: &'static str, detail: String },

    /// Connection refused, timeout, broken body, ...
    /// The cause chain is shown: "error sending request" alone hides a refused TLS
    /// certificate or a refused connection.
    #[error("HTTP transport error: {}", crate::http_error::with_causes(.0))]
    Transport(#[from] reqwest::Error),
}

impl OpenStackError {
    /// The HTTP status the remote service answered with, when the error came from one.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Self::Authentication { status, .. } | Self::Api { status, .. } => Some(*status),
            Self::StackNotFound { .. } => Some(404),
            Self::Transport(e) => e.status().map(|s| s.as_u16()),
            _ => None,
        }
    }

    /// Whether asking again may succeed: Keystone, Heat or Nova unreachable, a connection
    /// reset or a request timeout, HTTP 429 or 500/502/503/504 (also from Keystone while
    /// authenticating). Not: any other 4xx (a bad template, a quota's 403/413, a missing
    /// stack), bad credentials (Keystone's 401, and Heat's 401 after a fresh token), an
    /// untrusted certificate, or a stack Heat itself put into a `*_FAILED` state. A wait
    /// that timed out is not either: the operator's limit was reached.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Authentication { status, .. } | Self::Api { status, .. } => crate::run::transient_status(*status),
            Self::Transport(error) => crate::http_error::transport_is_transient(error),
            Self::InvalidVimConnectionInfo(_)
            | Self::EndpointNotFound { .. }
            | Self::StackFailed { .. }
            | Self::StackNotFound { .. }
            | Self::UnexpectedStatus { .. }
            | Self::Timeout { .. }
            | Self::Template(_)
            | Self::InvalidResponse { .. } => false,
        }
    }
}

impl crate::run::VimFailure for OpenStackError {
    fn is_transient(&self) -> bool {
        OpenStackError::is_transient(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_failures_are_those_asking_again_may_cure() {
        let api = |status| OpenStackError::Api { service: "Heat", status, message: String::new(), error_type: None };
        for status in [429, 500, 502, 503, 504] {
            assert!(api(status).is_transient(), "{status}");
        }
        for status in [400, 401, 403, 404, 409, 413, 501] {
            assert!(!api(status).is_transient(), "{status}");
        }
        let auth = |status| OpenStackError::Authentication { status, message: String::new() };
        assert!(auth(503).is_transient());
        assert!(!auth(401).is_transient());
        let failed = OpenStackError::StackFailed {
            stack: "vnf-1".into(),
            status: "CREATE_FAILED".into(),
            reason: "No valid host was found".into(),
        };
        assert!(!failed.is_transient());
    }
}
