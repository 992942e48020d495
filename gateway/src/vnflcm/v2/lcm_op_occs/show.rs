use actix_web::{HttpResponse, web};

use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::ops;

/// GET /vnflcm/v2/vnf_lcm_op_occs/{id}
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    ops::show(&state, &negotiated, id.into_inner()).await
}
