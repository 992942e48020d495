//! A typed client of solgate's APIs: VNF LCM v1 and v2 (SOL003), VNF package management
//! (SOL005), VNF fault management (SOL003 clause 7), VNF performance management (SOL003 clause
//! 6) and the SOL013 `api_versions` resources. `solctl` is a thin front end over it;
//! tests and the bench reuse it.
//!
//! Resources are kept as `serde_json::Value` (as python-tackerclient passes request files
//! through untouched, the server validates them against the negotiated version's schema);
//! what the client itself acts on — ProblemDetails, api_versions, an operation
//! occurrence's state — is typed.

mod archive;
mod auth;
mod client;
mod config;
mod error;
mod fm;
mod lcm;
mod packages;
mod pm;
pub mod records;
mod versions;
mod vims;
mod wait;

pub use archive::zip_directory;
pub use client::{Accepted, Client, Deprecation};
pub use config::{ApiVersionChoice, AuthConfig, ClientConfig, KeystoneAuth, OAuth2Auth, TlsOptions};
pub use error::{Error, ProblemDetails, Result};
pub use lcm::{ListQuery, OpAction};
pub use packages::{PackageContent, VnfdFormat};
pub use pm::PmResource;
pub use versions::{Api, ApiVersionInformation, ApiVersions, KNOWN_VERSIONS, VersionReport};
pub use wait::{OpState, WaitOptions};
