use actix_web::{HttpResponse, web};
use solgate_core::vims;

use super::vim_id;
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::state::AppState;

/// DELETE /v1.0/vims/{id}: 204. Instances keep the connection they were instantiated
/// with (it was copied into them).
pub async fn delete(state: web::Data<AppState>, tenant: Tenant, path: web::Path<String>) -> ApiResult<HttpResponse> {
    let record = vims::find_visible(&state.db, tenant.scope(), vim_id(&path)).await?;
    vims::remove(&state.db, &record.id).await?;
    tracing::info!(vim = %record.id, "VIM deleted");
    Ok(HttpResponse::NoContent().finish())
}
