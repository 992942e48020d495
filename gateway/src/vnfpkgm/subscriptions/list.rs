use actix_web::{HttpRequest, HttpResponse, web};

use super::TABLE;
use crate::common::plain_subscriptions;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnfpkgm/v1/subscriptions: SOL013 filter and paging; a non-admin sees its own project's only.
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    plain_subscriptions::list(&state, &req, &negotiated, &TABLE).await
}
