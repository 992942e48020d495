use actix_web::{HttpResponse, web};

use super::TABLE;
use crate::common::{Tenant, plain_subscriptions};
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnfpkgm/v1/subscriptions/{id}: 404 also for another project's.
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    plain_subscriptions::show(&state, &negotiated, &tenant, id.into_inner(), &TABLE).await
}
