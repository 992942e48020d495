use actix_web::http::header;
use actix_web::{HttpResponse, web};
use solgate_db::repo::fm_subscriptions;

use super::{not_found, rendered};
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnffm/v1/subscriptions/{id}: 404 also for another project's.
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let lookup = id.clone();
    let record = state
        .db(move |conn| Ok(fm_subscriptions::find(conn, &lookup)?))
        .await?
        .filter(|record| tenant.sees(&record.project))
        .ok_or_else(|| not_found(&id))?;
    // A subscription never changes: its tag only tells representations apart.
    let body = rendered(&state, &negotiated, &record).to_string();
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, crate::common::etag::digest_etag(&body)))
        .content_type("application/json")
        .body(body))
}
