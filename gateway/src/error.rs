//! The gateway's one error type. Every failure a handler or the SOL013 layer can meet is
//! an [`ApiError`]; it renders as a SOL013 ProblemDetails (`application/problem+json`,
//! `status` + `detail`). Client mistakes carry their own status; anything else becomes a
//! 500 whose detail names only the request id, while the log gets the cause.

use std::fmt;
use std::panic::Location;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde_json::{Map, Value, json};

use crate::sol013::request_id;

pub type ApiResult<T> = Result<T, ApiError>;

/// What went wrong, as the client sees it (the HTTP status and the extra headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    BadRequest,
    NotFound,
    MethodNotAllowed {
        allow: String,
    },
    NotAcceptable,
    Conflict,
    Gone,
    PayloadTooLarge,
    UnsupportedMediaType,
    RangeNotSatisfiable {
        complete_length: u64,
    },
    UnprocessableEntity,
    Internal,
    ServiceUnavailable {
        retry_after_secs: u32,
    },
    /// 401 with this `WWW-Authenticate` challenge.
    Unauthorized {
        challenge: String,
    },
    Forbidden,
    /// 412: an `If-Match` that names no current representation.
    PreconditionFailed,
}

impl ErrorKind {
    pub fn status(&self) -> StatusCode {
        match self {
            ErrorKind::BadRequest => StatusCode::BAD_REQUEST,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ErrorKind::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::Gone => StatusCode::GONE,
            ErrorKind::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorKind::RangeNotSatisfiable { .. } => StatusCode::RANGE_NOT_SATISFIABLE,
            ErrorKind::UnprocessableEntity => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorKind::ServiceUnavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ErrorKind::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            ErrorKind::Forbidden => StatusCode::FORBIDDEN,
            ErrorKind::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
        }
    }
}

/// Boxed so that `Result<T, ApiError>` stays small on every path.
pub struct ApiError(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    detail: String,
    /// For 500s: the cause, logged and never shown.
    cause: Option<anyhow::Error>,
    /// Where the error was raised (from `#[track_caller]`), for the log.
    location: &'static Location<'static>,
    extensions: Map<String, Value>,
}

impl ApiError {
    #[track_caller]
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Self(Box::new(Inner {
            kind,
            detail: detail.into(),
            cause: None,
            location: Location::caller(),
            extensions: Map::new(),
        }))
    }

    #[track_caller]
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadRequest, detail)
    }

    #[track_caller]
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, detail)
    }

    #[track_caller]
    pub fn conflict(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, detail)
    }

    #[track_caller]
    pub fn unprocessable(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnprocessableEntity, detail)
    }

    #[track_caller]
    pub fn not_acceptable(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotAcceptable, detail)
    }

    #[track_caller]
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        let mut error = Self::new(ErrorKind::Internal, String::new());
        error.0.cause = Some(cause.into());
        error
    }

    #[track_caller]
    pub fn unavailable(detail: impl Into<String>, retry_after_secs: u32) -> Self {
        Self::new(ErrorKind::ServiceUnavailable { retry_after_secs }, detail)
    }

    /// Adds a non-standard member to the ProblemDetails (RFC 7807 extension).
    pub fn with_extension(mut self, key: &str, value: Value) -> Self {
        self.0.extensions.insert(key.to_owned(), value);
        self
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    /// The ProblemDetails body this error renders as.
    pub fn problem_details(&self) -> Value {
        let inner = &self.0;
        let status = inner.kind.status();
        let detail = match inner.kind {
            ErrorKind::Internal => match request_id::current() {
                Some(id) => format!("An internal error occurred; quote request id {id} when reporting it."),
                None => "An internal error occurred.".to_owned(),
            },
            _ => inner.detail.clone(),
        };
        let mut body = json!({
            "status": status.as_u16(),
            "detail": detail,
            "title": status.canonical_reason().unwrap_or("Error"),
        });
        if let Value::Object(map) = &mut body {
            for (key, value) in &inner.extensions {
                map.insert(key.clone(), value.clone());
            }
        }
        body
    }
}

impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {} (at {})", self.0.kind, self.0.detail, self.0.location)?;
        if let Some(cause) = &self.0.cause {
            write!(f, ": {cause:?}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.cause {
            Some(cause) => write!(f, "{cause:#}"),
            None => f.write_str(&self.0.detail),
        }
    }
}

/// Errors that are never the client's: a 500 with the cause in the log and, through
/// `#[track_caller]`, the place the `?` was, so a 500's log line names where.
macro_rules! internal_from {
    ($($source:ty),* $(,)?) => {$(
        impl From<$source> for ApiError {
            #[track_caller]
            fn from(cause: $source) -> Self {
                ApiError::internal(cause)
            }
        }
    )*};
}

internal_from!(
    solgate_db::DbError,
    diesel::result::Error,
    std::io::Error,
    serde_json::Error,
    anyhow::Error,
    tokio::task::JoinError,
);

/// The domain's refusals keep their status; anything else is ours (500, cause logged).
/// A subscription or package URI the domain refuses: 400 for a malformed one, 422 otherwise.
impl From<solgate_core::callbacks::Refused> for ApiError {
    fn from(refused: solgate_core::callbacks::Refused) -> Self {
        match refused.status {
            400 => ApiError::bad_request(refused.detail),
            _ => ApiError::unprocessable(refused.detail),
        }
    }
}

impl From<solgate_core::CoreError> for ApiError {
    #[track_caller]
    fn from(error: solgate_core::CoreError) -> Self {
        use solgate_core::CoreError;
        match error {
            CoreError::BadRequest(detail) => ApiError::bad_request(detail),
            CoreError::NotFound(detail) => ApiError::not_found(detail),
            CoreError::Conflict(detail) => ApiError::conflict(detail),
            CoreError::Unprocessable(detail) => ApiError::unprocessable(detail),
            CoreError::PreconditionFailed(detail) => ApiError::new(ErrorKind::PreconditionFailed, detail),
            CoreError::Db(solgate_db::DbError::Pool(error)) => {
                tracing::error!(%error, "no database connection");
                ApiError::unavailable("The database is not available; try again later.", 5)
            }
            other => ApiError::internal(other),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.0.kind.status()
    }

    fn error_response(&self) -> HttpResponse {
        if let Some(cause) = &self.0.cause {
            tracing::error!(
                request_id = request_id::current().as_deref().unwrap_or("-"),
                at = %self.0.location,
                "internal error: {cause:?}"
            );
        }
        problem_response(&self.0.kind, &self.problem_details())
    }
}

/// Builds the HTTP response for a ProblemDetails body, with the headers its status needs.
pub fn problem_response(kind: &ErrorKind, body: &Value) -> HttpResponse {
    let mut response = HttpResponse::build(kind.status());
    response.insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json")));
    match kind {
        ErrorKind::MethodNotAllowed { allow } => {
            response.insert_header((header::ALLOW, allow.as_str()));
        }
        ErrorKind::RangeNotSatisfiable { complete_length } => {
            response.insert_header((header::CONTENT_RANGE, format!("bytes */{complete_length}")));
        }
        ErrorKind::ServiceUnavailable { retry_after_secs } => {
            response.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
        }
        ErrorKind::Unauthorized { challenge } => {
            response.insert_header((header::WWW_AUTHENTICATE, challenge.as_str()));
        }
        _ => {}
    }
    response.body(body.to_string())
}
