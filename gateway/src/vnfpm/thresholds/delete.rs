use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::vnfpm::shared::PmResource;

/// DELETE /vnfpm/v2/thresholds/{id}: 204 (see [`PmResource::delete`]).
pub async fn delete(state: web::Data<AppState>, tenant: Tenant, id: web::Path<String>) -> ApiResult<HttpResponse> {
    PmResource::Threshold.delete(&state, tenant, id.into_inner()).await
}
