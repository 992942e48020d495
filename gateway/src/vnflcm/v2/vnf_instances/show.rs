use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::instances;

/// GET /vnflcm/v2/vnf_instances/{id}
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    instances::show(&state, &negotiated, &tenant, id.into_inner()).await
}
