//! The VIM registry, compatible with Tacker's legacy NFVO API `/v1.0/vims` (what
//! python-tackerclient's `openstack vim register/list/show/set/delete` send). Its rules are
//! the domain's ([`solgate_core::vims`]); these handlers parse, call them and render.
//!
//! python-tackerclient appends `.json` to every path (`/v1.0/vims.json`,
//! `/v1.0/vims/{id}.json`); both spellings are served.

mod create;
mod delete;
mod list;
mod show;
mod update;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use serde_json::{Value, json};
use solgate_core::vims::VimError;

pub use create::create;
pub use delete::delete;
pub use list::list;
pub use show::show;
pub use update::update;

use crate::error::{ApiError, ErrorKind};

/// `{id}` or `{id}.json`.
fn vim_id(path: &str) -> &str {
    path.strip_suffix(".json").unwrap_or(path)
}

/// `{"<member>": <body>}` with `status`.
fn answer(status: StatusCode, member: &str, body: &Value) -> HttpResponse {
    HttpResponse::build(status).content_type("application/json").body(json!({ member: body }).to_string())
}

/// The domain's refusals keep their status and detail.
impl From<VimError> for ApiError {
    #[track_caller]
    fn from(error: VimError) -> Self {
        match error {
            VimError::BadRequest(detail) => ApiError::bad_request(detail),
            VimError::Forbidden(detail) => ApiError::new(ErrorKind::Forbidden, detail),
            VimError::NotFound(detail) => ApiError::not_found(detail),
            VimError::Conflict(detail) => ApiError::conflict(detail),
            VimError::Unprocessable(detail) => ApiError::unprocessable(detail),
            VimError::Refused(refused) => refused.into(),
            VimError::Core(error) => error.into(),
            VimError::Internal(detail) => ApiError::internal(anyhow::anyhow!(detail)),
        }
    }
}
