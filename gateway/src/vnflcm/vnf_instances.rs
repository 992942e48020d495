//! VnfInstancesController (SOL003 clauses 5.4.2 to 5.4.9): the handlers of both majors
//! (each serves the major its request negotiated) over [`super::common`].

use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::operation::LcmOperation;

use super::common::{instances, tasks};
use crate::common::{Tenant, etag};
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;

/// GET vnf_instances
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    instances::list(&state, &req, &negotiated).await
}

/// POST vnf_instances
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    instances::create(&state, &negotiated, &tenant, body.0).await
}

/// GET vnf_instances/{vnfInstanceId}
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    instances::show(&state, &negotiated, &tenant, id.into_inner()).await
}

/// PATCH vnf_instances/{vnfInstanceId}: JSON Merge Patch of the instance's information,
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

/// DELETE vnf_instances/{vnfInstanceId}
pub async fn delete(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    instances::delete(&state, &negotiated, &tenant, id.into_inner()).await
}

/// POST vnf_instances/{vnfInstanceId}/{task}: the route of one operation's task resource,
/// its SOL003 request body answered 202 with the `Location` of the new occurrence.
pub fn task(route: actix_web::Route, operation: LcmOperation) -> actix_web::Route {
    route.to(
        move |state: web::Data<AppState>,
              negotiated: Negotiated,
              tenant: Tenant,
              id: web::Path<String>,
              body: JsonBody| async move {
            tasks::accept(&state, &negotiated, &tenant, id.into_inner(), operation, body.0, None).await
        },
    )
}
