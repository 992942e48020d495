use actix_web::http::header;
use actix_web::{HttpResponse, web};
use solgate_core::fm::not_found;
use solgate_db::repo::alarms;

use super::rendered;
use crate::common::{Tenant, etag};
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnffm/v1/alarms/{id}: the Alarm with its `ETag` (the tag a PATCH's `If-Match` names).
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let lookup = id.clone();
    let record = state
        .db(move |conn| Ok(alarms::find(conn, &lookup)?))
        .await?
        .filter(|record| tenant.sees(&record.project))
        .ok_or_else(|| ApiError::from(not_found(&id)))?;
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, etag::etag(record.row_version, &negotiated.version())))
        .content_type("application/json")
        .body(rendered(&state, &negotiated, &record).to_string()))
}
