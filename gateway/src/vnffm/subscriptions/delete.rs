use actix_web::{HttpResponse, web};

use super::TABLE;
use crate::common::{Tenant, plain_subscriptions};
use crate::error::ApiResult;
use crate::state::AppState;

/// DELETE /vnffm/v1/subscriptions/{id}: 204; its undelivered notifications go with it.
pub async fn delete(state: web::Data<AppState>, tenant: Tenant, id: web::Path<String>) -> ApiResult<HttpResponse> {
    plain_subscriptions::delete(&state, tenant, id.into_inner(), &TABLE).await
}
