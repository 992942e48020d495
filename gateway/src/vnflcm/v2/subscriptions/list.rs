use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::subscriptions;

/// GET /vnflcm/v2/subscriptions
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    subscriptions::list(&state, &req, &negotiated).await
}
