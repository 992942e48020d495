use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::subscriptions;

/// GET /vnflcm/v2/subscriptions/{id}
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    subscriptions::show(&state, &negotiated, &tenant, id.into_inner()).await
}
