//! `POST /vnflcm/v2/vnf_instances/{id}/select_depl_mods` (SOL003 V4.5.1, VNF LCM 2.12.0):
//! the SELECT_DEPL_MODS task. Earlier minors do not have the resource: to a client that
//! negotiated one, the path does not exist (404).

use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::operation::LcmOperation;

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::route::resource;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::tasks;

const OPERATION: LcmOperation = LcmOperation::SelectDeplMods;

/// Registers the task resource under `{base}` (major 2 only).
pub fn configure(cfg: &mut web::ServiceConfig, base: &str, major: u64) {
    let Some(path) = OPERATION.task_path().filter(|_| OPERATION.in_major(major)) else { return };
    cfg.service(resource(&format!("{base}/vnf_instances/{{id}}/{path}")).post(select_depl_mods).finish());
}

async fn select_depl_mods(
    state: web::Data<AppState>,
    req: HttpRequest,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    if OPERATION.since().is_some_and(|since| negotiated.entry.version < since) {
        return Err(ApiError::not_found(format!("The resource {} could not be found.", req.path())));
    }
    // SelectVnfDeployableModulesRequest: selectedDeployableModule, 1..N (the schema says so
    // too; this holds whatever the minor's dictionary has).
    if body.0["selectedDeployableModule"].as_array().is_none_or(Vec::is_empty) {
        return Err(ApiError::bad_request("selectedDeployableModule is required: at least one deployable module id."));
    }
    tasks::accept(&state, &negotiated, &tenant, id.into_inner(), OPERATION, body.0, None).await
}
