//! The version registry: which API versions solgate serves, which ETSI document each
//! implements, and (per minor version) the dictionary of JSON Schemas for its request
//! bodies and resource representations.
//!
//! Everything that needs a version string (negotiation, `api_versions`, deprecation
//! headers, validation) reads it from [`Registry`]; nothing else hard-codes one.

mod catalog;
pub mod delta;
pub mod dictionary;
pub mod document;
pub mod registry;
mod render;
pub mod version;

pub use delta::{Delta, DeltaOp};
pub use dictionary::{Dictionary, MAX_LISTED_FAILURES, ValidationFailure, ValidationFailures};
pub use document::VersionDocument;
pub use registry::{Api, MajorInfo, NegotiationError, Registry, RegistryError, VersionEntry, VersionPolicy};
pub use version::{ApiVersionId, VersionParseError};
