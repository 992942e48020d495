use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::ops;

/// GET /vnflcm/v2/vnf_lcm_op_occs/{id}
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    ops::show(&state, &negotiated, &tenant, id.into_inner()).await
}
