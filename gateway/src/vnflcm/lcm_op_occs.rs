//! VnfLcmOpOccsController (SOL003 clauses 5.4.12 to 5.4.17): the occurrences and their
//! tasks: retry, rollback (202), fail (200 with the occurrence), cancel (202, body
//! CancelMode optional).

use actix_web::{HttpRequest, HttpResponse, web};

use super::common::ops;
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{Negotiated, OptionalJsonBody};
use crate::state::AppState;

/// GET vnf_lcm_op_occs
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    ops::list(&state, &req, &negotiated).await
}

/// GET vnf_lcm_op_occs/{vnfLcmOpOccId}
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    ops::show(&state, &negotiated, &tenant, id.into_inner()).await
}

pub async fn retry(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    ops::retry(&state, &negotiated, &tenant, id.into_inner()).await
}

pub async fn rollback(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    ops::rollback(&state, &negotiated, &tenant, id.into_inner()).await
}

pub async fn fail(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    ops::fail(&state, &negotiated, &tenant, id.into_inner()).await
}

pub async fn cancel(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: OptionalJsonBody,
) -> ApiResult<HttpResponse> {
    ops::cancel(&state, &negotiated, &tenant, id.into_inner(), body.0).await
}
