//! Tasks on an operation occurrence: retry, rollback (202), fail (200 with the
//! occurrence), cancel (202, body CancelMode optional).

use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{Negotiated, OptionalJsonBody};
use crate::state::AppState;
use crate::vnflcm::common::ops;

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
