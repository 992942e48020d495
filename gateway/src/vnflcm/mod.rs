//! VNF Lifecycle Management (SOL003): `/vnflcm/v1` and `/vnflcm/v2` side by side, thin
//! controllers over [`common`].
//!
//! `/vnflcm/v1` (API 1.x, SOL003 v2.6.1) has the v2 handlers: each serves the major its
//! request negotiated, on that major's tables and schemas, so v1 differs only in the task
//! resources of its operations (SOL003 v2.6.1 has no change_vnfpkg,
//! `LcmOperation::in_major`) and in the shapes its schemas and
//! `solgate_core::shapes::V1Shapes` give (e.g. `vimConnectionInfo` as an array). Instances
//! created through v1 are only visible through v1, as ETSI keeps resources per major.

pub mod common;
pub mod v2;

use actix_web::web;

use crate::route::resource;
use v2::{lcm_op_occs as ops, subscriptions, vnf_instances as instances};

/// Each major's routes are a scope: its static prefix is compared once, instead of every
/// route of the other major being matched (a regular expression each) first, which was a
/// tenth of a GET of one instance. Nothing else is served under these prefixes: the
/// api_versions and openapi.json routes are registered before them, and a path the scope
/// does not know falls through to the application's 404.
pub fn configure(cfg: &mut web::ServiceConfig) {
    for major in [1, 2] {
        cfg.service(web::scope(&format!("/vnflcm/v{major}")).configure(|cfg| configure_major(cfg, major)));
    }
}

/// The routes of one major, relative to its scope: the same resources and handlers (each
/// serves the major its request negotiated), the task resources its operations have.
fn configure_major(cfg: &mut web::ServiceConfig, major: u64) {
    let base = "";
    cfg.service(
        resource(&format!("{base}/vnf_instances")).get(instances::list::list).post(instances::create::create).finish(),
    )
    .service(
        resource(&format!("{base}/vnf_instances/{{id}}"))
            .get(instances::show::show)
            .patch(instances::modify::modify)
            .delete(instances::delete::delete)
            .finish(),
    );
    instances::tasks::configure(cfg, base, major);
    cfg.service(resource(&format!("{base}/vnf_lcm_op_occs")).get(ops::list::list).finish())
        .service(resource(&format!("{base}/vnf_lcm_op_occs/{{id}}")).get(ops::show::show).finish())
        .service(resource(&format!("{base}/vnf_lcm_op_occs/{{id}}/retry")).post(ops::tasks::retry).finish())
        .service(resource(&format!("{base}/vnf_lcm_op_occs/{{id}}/rollback")).post(ops::tasks::rollback).finish())
        .service(resource(&format!("{base}/vnf_lcm_op_occs/{{id}}/fail")).post(ops::tasks::fail).finish())
        .service(resource(&format!("{base}/vnf_lcm_op_occs/{{id}}/cancel")).post(ops::tasks::cancel).finish())
        .service(
            resource(&format!("{base}/subscriptions"))
                .get(subscriptions::list::list)
                .post(subscriptions::create::create)
                .finish(),
        )
        .service(
            resource(&format!("{base}/subscriptions/{{id}}"))
                .get(subscriptions::show::show)
                .delete(subscriptions::delete::delete)
                .finish(),
        );
}
