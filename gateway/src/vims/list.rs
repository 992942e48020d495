use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;
use solgate_core::vims::{self, ListQuery};

use super::answer;
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::state::AppState;

/// GET /v1.0/vims: `{"vims": [...]}`, filtered as Tacker's list is ([`ListQuery`]).
pub async fn list(state: web::Data<AppState>, tenant: Tenant, req: HttpRequest) -> ApiResult<HttpResponse> {
    let query = ListQuery::parse(tenant.scope(), url::form_urlencoded::parse(req.query_string().as_bytes()))?;
    let listed = vims::list(&state.db, query).await?;
    Ok(answer(StatusCode::OK, "vims", &Value::Array(listed)))
}
