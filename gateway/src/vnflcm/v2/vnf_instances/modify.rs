use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::operation::LcmOperation;

use crate::common::{Tenant, etag};
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::tasks;

/// PATCH /vnflcm/v2/vnf_instances/{id}: JSON Merge Patch of the instance's information,
/// run as a MODIFY_INFO operation (202 + Location of the occurrence). With `If-Match`, only
/// if the instance is still the representation it names (else 412).
pub async fn modify(
    state: web::Data<AppState>,
    req: HttpRequest,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let if_match = etag::if_match(&req, &negotiated.version());
    tasks::accept(&state, &negotiated, &tenant, id.into_inner(), LcmOperation::ModifyInfo, body.0, if_match).await
}
