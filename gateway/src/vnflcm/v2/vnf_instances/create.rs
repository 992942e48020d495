use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::instances;

/// POST /vnflcm/v2/vnf_instances
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    instances::create(&state, &negotiated, &tenant, body.0).await
}
