use std::time::Duration;

/// Everything the Kubernetes client can fail with.
#[derive(Debug, thiserror::Error)]
pub enum KubernetesError {
    /// The VimConnectionInfo lacks a key or holds a value of the wrong shape.
    #[error("invalid vimConnectionInfo: {0}")]
    InvalidVimConnectionInfo(String),

    /// A manifest document is not YAML, or lacks `apiVersion`, `kind` or `metadata.name`.
    #[error("invalid Kubernetes manifest: {0}")]
    InvalidManifest(String),

    /// A kind this client cannot map to a REST path.
    #[error("unsupported Kubernetes kind {kind} ({api_version})")]
    UnsupportedKind { api_version: String, kind: String },

    /// `scale` on a kind without a `scale` subresource.
    #[error("{0} cannot be scaled (only Deployment, StatefulSet and ReplicaSet)")]
    NotScalable(String),

    /// The API server answered with an error; `reason` and `message` come from its `Status`
    /// object (e.g. 422 `Invalid` with the field that failed).
    #[error("Kubernetes API returned HTTP {status}{}: {message}", reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default())]
    Api { status: u16, reason: Option<String>, message: String },

    /// The Deployment controller gave up (`Progressing` condition `ProgressDeadlineExceeded`).
    #[error("deployment {name} failed: {message}")]
    DeploymentFailed { name: String, message: String },

    /// A wait did not reach its condition in time; `last_state` tells what was seen last.
    #[error("timed out after {waited:?} waiting for {what} ({last_state})")]
    Timeout { what: String, waited: Duration, last_state: String },

    /// A 2xx answer that is not what the API reference documents.
    #[error("unexpected response from the Kubernetes API: {0}")]
    InvalidResponse(String),

    /// Connection refused, timeout, broken body, ...
    /// The cause chain is shown: "error sending request" alone hides a refused TLS
    /// certificate or a refused connection.
    #[error("HTTP transport error: {}", crate::http_error::with_causes(.0))]
    Transport(#[from] reqwest::Error),
}

impl KubernetesError {
    /// The HTTP status the API server answered with, when the error came from one.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } => Some(*status),
            Self::Transport(e) => e.status().map(|s| s.as_u16()),
            _ => None,
        }
    }

    /// Whether asking again may succeed: the API server unreachable, a connection reset or
    /// a request timeout, HTTP 429 (API priority and fairness) or 500/502/503/504. Not: any
    /// other 4xx (an invalid manifest's 422, a forbidden 403, bad credentials' 401), an
    /// untrusted certificate, a Deployment the controller gave up on, or a wait that
    /// reached its time limit.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Api { status, .. } => crate::run::transient_status(*status),
            Self::Transport(error) => crate::http_error::transport_is_transient(error),
            Self::InvalidVimConnectionInfo(_)
            | Self::InvalidManifest(_)
            | Self::UnsupportedKind { .. }
            | Self::NotScalable(_)
            | Self::DeploymentFailed { .. }
            | Self::Timeout { .. }
            | Self::InvalidResponse(_) => false,
        }
    }
}

impl crate::run::VimFailure for KubernetesError {
    fn is_transient(&self) -> bool {
        KubernetesError::is_transient(self)
    }
}
