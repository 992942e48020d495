//! The client's errors; an API error carries the server's ProblemDetails (SOL013 clause 6.4).

use serde::{Deserialize, Serialize};

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A SOL013 ProblemDetails, or one made up from a non-JSON error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProblemDetails {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub status: u16,
    #[serde(default)]
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

impl ProblemDetails {
    /// Reads an error body: a ProblemDetails when it is one, else the status and the text.
    pub fn from_response(status: u16, body: &[u8]) -> ProblemDetails {
        if let Ok(mut problem) = serde_json::from_slice::<ProblemDetails>(body) {
            if problem.status == 0 {
                problem.status = status;
            }
            return problem;
        }
        let text = String::from_utf8_lossy(body).trim().to_owned();
        ProblemDetails {
            type_: None,
            title: reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|code| code.canonical_reason())
                .map(str::to_owned),
            status,
            detail: if text.is_empty() { format!("HTTP {status} with no body") } else { text },
            instance: None,
        }
    }
}

impl std::fmt::Display for ProblemDetails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.title {
            Some(title) => write!(f, "{title} ({}): {}", self.status, self.detail),
            None => write!(f, "HTTP {}: {}", self.status, self.detail),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with an error status.
    #[error("{0}")]
    Api(ProblemDetails),
    /// No answer: connection, TLS or timeout, with the cause chain.
    #[error("{url}: {cause}")]
    Transport { url: String, cause: String },
    /// The authorization server (token endpoint or Keystone) refused or failed.
    #[error("authentication failed: {0}")]
    Auth(String),
    /// A bad setting: endpoint, certificate file, auth options.
    #[error("{0}")]
    Config(String),
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The server answered something this client cannot read.
    #[error("unexpected response: {0}")]
    Unexpected(String),
    /// `--wait` ran out of time; the last state seen.
    #[error("timed out after {seconds} s waiting for {what} (last state {state})")]
    Timeout { what: String, seconds: u64, state: String },
}

impl Error {
    pub(crate) fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Error {
        Error::Io { path: path.as_ref().display().to_string(), source }
    }

    /// The ProblemDetails of an API error.
    pub fn problem(&self) -> Option<&ProblemDetails> {
        match self {
            Error::Api(problem) => Some(problem),
            _ => None,
        }
    }
}

/// The `source()` chain of a reqwest error, so "error sending request" says why.
pub(crate) fn transport(url: &str, error: &reqwest::Error) -> Error {
    let mut cause = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        let text = inner.to_string();
        if !cause.contains(&text) {
            cause.push_str(": ");
            cause.push_str(&text);
        }
        source = inner.source();
    }
    Error::Transport { url: url.to_owned(), cause }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_details_from_json_and_from_text() {
        let problem = ProblemDetails::from_response(
            404,
            br#"{"title":"Not Found","status":404,"detail":"VNF instance x not found."}"#,
        );
        assert_eq!(problem.to_string(), "Not Found (404): VNF instance x not found.");
        let text = ProblemDetails::from_response(502, b"bad gateway");
        assert_eq!(text.to_string(), "Bad Gateway (502): bad gateway");
        let empty = ProblemDetails::from_response(500, b"");
        assert_eq!(empty.detail, "HTTP 500 with no body");
    }
}
