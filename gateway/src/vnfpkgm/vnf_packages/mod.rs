//! VnfPkgmController: one file per operation.

pub mod create;
pub mod delete;
pub mod fetch_artifact;
pub mod fetch_content;
pub mod fetch_vnfd;
pub mod list;
pub mod modify;
pub mod show;
pub mod upload_content;
pub mod upload_from_uri;
