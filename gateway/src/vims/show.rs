use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use solgate_core::vims;

use super::{answer, vim_id};
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::state::AppState;

/// GET /v1.0/vims/{id}: `{"vim": {...}}`.
pub async fn show(state: web::Data<AppState>, tenant: Tenant, path: web::Path<String>) -> ApiResult<HttpResponse> {
    let record = vims::find_visible(&state.db, tenant.scope(), vim_id(&path)).await?;
    Ok(answer(StatusCode::OK, "vim", &vims::shown(&record)))
}
