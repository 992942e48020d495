use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnfpm::shared::PmResource;

/// PATCH /vnfpm/v2/pm_jobs/{id} (PmJobModifications, SOL003 clause 6.5.2.12; see [`PmResource::modify`]).
pub async fn modify(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    PmResource::Job.modify(&state, &negotiated, tenant, id.into_inner(), &body.0).await
}
