use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use solgate_core::vims::{self, Requester};

use super::answer;
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::JsonBody;
use crate::state::AppState;

/// POST /v1.0/vims: registers a VIM after checking it is reachable; 201 `{"vim": {...}}`.
pub async fn create(state: web::Data<AppState>, tenant: Tenant, body: JsonBody) -> ApiResult<HttpResponse> {
    let requester = Requester { project: tenant.project(), scope: tenant.scope() };
    let document = vims::register(&state.outbound, requester, body.0).await?;
    let record = vims::sealed_record(&state.secrets, &document);
    vims::insert(&state.db, record.clone()).await?;
    tracing::info!(vim = %record.id, name = %record.name, vim_type = %record.vim_type, "VIM registered");
    Ok(answer(StatusCode::CREATED, "vim", &vims::shown(&record)))
}
