//! SubscriptionsController (SOL003 clauses 5.4.18 and 5.4.19) of both majors.

use actix_web::{HttpRequest, HttpResponse, web};

use super::common::subscriptions;
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;

/// GET subscriptions
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    subscriptions::list(&state, &req, &negotiated).await
}

/// POST subscriptions
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    subscriptions::create(&state, &negotiated, &tenant, body.0).await
}

/// GET subscriptions/{subscriptionId}
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    subscriptions::show(&state, &negotiated, &tenant, id.into_inner()).await
}

/// DELETE subscriptions/{subscriptionId}
pub async fn delete(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    subscriptions::delete(&state, &negotiated, &tenant, id.into_inner()).await
}
