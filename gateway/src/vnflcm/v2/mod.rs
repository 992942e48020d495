//! `/vnflcm/v2` (API 2.x, SOL003 v3.3.1): VnfInstancesController, VnfLcmOpOccsController
//! and SubscriptionsController.

pub mod lcm_op_occs;
pub mod subscriptions;
pub mod vnf_instances;

use actix_web::web;

use crate::route::resource;

pub fn configure(cfg: &mut web::ServiceConfig) {
    use lcm_op_occs as ops;
    use vnf_instances as instances;
    const BASE: &str = "/vnflcm/v2";
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
    instances::tasks::configure(cfg, BASE, 2);
    cfg.service(resource(&format!("{BASE}/vnf_lcm_op_occs")).get(ops::list::list).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}")).get(ops::show::show).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/retry")).post(ops::tasks::retry).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/rollback")).post(ops::tasks::rollback).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/fail")).post(ops::tasks::fail).finish())
        .service(resource(&format!("{BASE}/vnf_lcm_op_occs/{{id}}/cancel")).post(ops::tasks::cancel).finish());
    cfg.service(
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
