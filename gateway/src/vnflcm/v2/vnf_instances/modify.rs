use actix_web::{HttpResponse, web};
use solgate_core::operation::LcmOperation;

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::tasks;

/// PATCH /vnflcm/v2/vnf_instances/{id}: JSON Merge Patch of the instance's information,
/// run as a MODIFY_INFO operation (202 + Location of the occurrence).
pub async fn modify(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    tasks::accept(&state, &negotiated, &tenant, id.into_inner(), LcmOperation::ModifyInfo, body.0).await
}
