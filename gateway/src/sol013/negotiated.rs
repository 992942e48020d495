//! The version the SOL013 layer negotiated for this request, as a handler extractor.

use std::future::{Ready, ready};

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use std::sync::Arc;

use solgate_schemas::{Api, Dictionary, VersionEntry};

use super::scope::ScopeKind;
use crate::error::ApiError;

#[derive(Debug, Clone)]
pub struct Negotiated {
    pub api: Api,
    pub major: u64,
    pub scope_kind: ScopeKind,
    pub entry: VersionEntry,
    /// The newest minor of the major, in whose shape resources are stored: what tells a
    /// member of a later minor from one no version defines.
    pub stored_shape: Arc<Dictionary>,
}

impl Negotiated {
    pub fn version(&self) -> String {
        self.entry.version_string()
    }
}

impl FromRequest for Negotiated {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            req.extensions()
                .get::<Negotiated>()
                .cloned()
                .ok_or_else(|| ApiError::internal(anyhow::anyhow!("route {} is outside the SOL013 layer", req.path()))),
        )
    }
}
