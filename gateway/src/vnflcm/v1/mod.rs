//! `/vnflcm/v1` (API 1.x, SOL003 v2.6.1). The handlers are the v2 ones: each serves the
//! major its request negotiated, on that major's tables and schemas, so v1 differs only in
//! its route table (SOL003 v2.6.1 has no change_vnfpkg, `LcmOperation::in_major`) and in the
//! shapes its schemas and `solgate_core::shapes::V1Shapes` give (e.g. `vimConnectionInfo` as
//! an array). Instances created through
//! v1 are only visible through v1, as ETSI keeps resources per major.

use actix_web::web;

use super::v2::{lcm_op_occs as ops, subscriptions, vnf_instances as instances};
use crate::route::resource;

pub fn configure(cfg: &mut web::ServiceConfig) {
    const BASE: &str = "/vnflcm/v1";
    cfg.service(
        resource(&format!("{BASE}/vnf_instances")).get(instances::list::list).post(instances::create::create).finish(),
    )
    .service(
        resource(&format!("{BASE}/vnf_instances/{{id}}"))
            .get(instances::show::show)
            .patch(instances::modify::modify)
            .delete(instances::delete::delete)
            .finish(),
    );
    instances::tasks::configure(cfg, BASE, 1);
    cfg.service(resource(&format!("{BASE}/vnf_lcm_op_occs")).get(ops::list::list).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}")).get(ops::show::show).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/retry")).post(ops::tasks::retry).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/rollback")).post(ops::tasks::rollback).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/fail")).post(ops::tasks::fail).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/cancel")).post(ops::tasks::cancel).finish())
        .service(
            resource(&format!("{BASE}/subscriptions"))
                .get(subscriptions::list::list)
                .post(subscriptions::create::create)
                .finish(),
        )
        .service(
            resource(&format!("{BASE}/subscriptions/{{id}}"))
                .get(subscriptions::show::show)
                .delete(subscriptions::delete::delete)
                .finish(),
        );
}
