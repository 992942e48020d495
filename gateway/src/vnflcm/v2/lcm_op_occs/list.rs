use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::ops;

/// GET /vnflcm/v2/vnf_lcm_op_occs
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    ops::list(&state, &req, &negotiated).await
}
