//! VNF Lifecycle Management (SOL003): `/vnflcm/v1` and `/vnflcm/v2` side by side, thin
//! controllers per major over [`common`].

pub mod common;
pub mod v1;
pub mod v2;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    v1::configure(cfg);
    v2::configure(cfg);
}
