use actix_web::{HttpResponse, web};

use super::{find, rendered};
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnfpm/v2/thresholds/{id}: 404 also for another project's.
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let record = state.db(move |conn| find(conn, &tenant, &id)).await?;
    Ok(HttpResponse::Ok().content_type("application/json").body(rendered(&state, &negotiated, &record).to_string()))
}
