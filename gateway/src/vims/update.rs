use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use solgate_core::vims;

use super::{answer, vim_id};
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::JsonBody;
use crate::state::AppState;

/// PUT /v1.0/vims/{id}: changes name, description, `is_default`, credentials or project
/// (re-checked against the VIM); type and `auth_url` stay.
pub async fn update(
    state: web::Data<AppState>,
    tenant: Tenant,
    path: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let vim = vims::update_request(body.0)?;
    let record = vims::find_visible(&state.db, tenant.scope(), vim_id(&path)).await?;
    let record = vims::amend(&state.outbound, &state.secrets, &record, &vim).await?;
    vims::store(&state.db, record.clone()).await?;
    tracing::info!(vim = %record.id, "VIM updated");
    Ok(answer(StatusCode::OK, "vim", &vims::shown(&record)))
}
