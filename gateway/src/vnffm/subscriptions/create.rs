use actix_web::{HttpResponse, web};

use super::TABLE;
use crate::common::{Tenant, plain_subscriptions};
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;

/// POST /vnffm/v1/subscriptions: 201 with the FmSubscription and `Location`, or 303 to the
/// existing duplicate.
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    plain_subscriptions::create(&state, &negotiated, &tenant, body.0, &TABLE).await
}
