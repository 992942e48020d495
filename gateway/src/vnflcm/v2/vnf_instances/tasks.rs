//! The task resources of an instance, one per operation of the domain's table that has a
//! task path in the negotiated major: each is a POST with its SOL003 request body,
//! answered 202 with the `Location` of the new operation occurrence.

use actix_web::web;
use solgate_core::operation::LcmOperation;

use crate::common::Tenant;
use crate::route::resource;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::tasks;

/// Registers `{base}/vnf_instances/{id}/{task}` for every task of `major`.
pub fn configure(cfg: &mut web::ServiceConfig, base: &str, major: u64) {
    for operation in LcmOperation::ALL.into_iter().filter(|operation| operation.in_major(major)) {
        // Operations a later minor added have their own handler (the version check).
        let Some(path) = operation.task_path().filter(|_| operation.since().is_none()) else { continue };
        let handler = move |state: web::Data<AppState>,
                            negotiated: Negotiated,
                            tenant: Tenant,
                            id: web::Path<String>,
                            body: JsonBody| async move {
            tasks::accept(&state, &negotiated, &tenant, id.into_inner(), operation, body.0, None).await
        };
        cfg.service(resource(&format!("{base}/vnf_instances/{{id}}/{path}")).post(handler).finish());
    }
    super::select_depl_mods::configure(cfg, base, major);
}
