//! The VIM registry's domain, compatible with Tacker's legacy NFVO API `/v1.0/vims`: a VIM
//! is registered with its credentials, which are checked against the VIM (Keystone or the
//! Kubernetes API), stored sealed ([`crate::secrets`]) and never shown again.
//!
//! A VIM belongs to the project that registered it; each project has at most one default
//! VIM. An LCM request's `vimConnectionInfo` may name a registered VIM by `vimId` alone, and
//! an instantiation without `vimConnectionInfo` runs on the project's default VIM
//! ([`complete_vim_connections`]): the connection is copied, credentials still sealed, into
//! the request.

mod connections;
mod credentials;
mod document;
mod fields;
mod reachability;
mod registry;

pub use connections::{complete_vim_connections, connection_info};
pub use document::{AuthCred, PlacementAttr, VimDocument, VimProject, shown};
pub use registry::{
    ListQuery, Requester, amend, find_visible, insert, list, register, remove, sealed_record, store, update_request,
};

use crate::CoreError;
use crate::callbacks::Refused;

/// Tacker's VIM types.
pub const OPENSTACK: &str = "openstack";
pub const KUBERNETES: &str = "kubernetes";

/// Why a VIM request cannot be carried out; the gateway answers each with its status.
#[derive(Debug, thiserror::Error)]
pub enum VimError {
    /// 400.
    #[error("{0}")]
    BadRequest(String),
    /// 403.
    #[error("{0}")]
    Forbidden(String),
    /// 404.
    #[error("{0}")]
    NotFound(String),
    /// 409: a name taken or a second default.
    #[error("{0}")]
    Conflict(String),
    /// 422: the VIM is not reachable, or a connection names no registered VIM.
    #[error("{0}")]
    Unprocessable(String),
    /// An `auth_url` the egress guard refuses.
    #[error("{}", .0.detail)]
    Refused(Refused),
    /// Ours (500): a stored document that does not read, a client that cannot be built.
    #[error("{0}")]
    Internal(String),
    /// Ours (500), or the database (503 when it has no connection).
    #[error(transparent)]
    Core(#[from] CoreError),
}

impl From<solgate_db::DbError> for VimError {
    fn from(error: solgate_db::DbError) -> Self {
        VimError::Core(error.into())
    }
}

impl From<diesel::result::Error> for VimError {
    fn from(error: diesel::result::Error) -> Self {
        VimError::Core(error.into())
    }
}

impl From<tokio::task::JoinError> for VimError {
    fn from(error: tokio::task::JoinError) -> Self {
        VimError::Core(error.into())
    }
}

impl From<Refused> for VimError {
    fn from(refused: Refused) -> Self {
        VimError::Refused(refused)
    }
}

pub type VimResult<T> = Result<T, VimError>;

fn bad_request(detail: impl Into<String>) -> VimError {
    VimError::BadRequest(detail.into())
}

fn not_found(id: &str) -> VimError {
    VimError::NotFound(format!("VIM {id} could not be found."))
}
