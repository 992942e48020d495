use actix_web::{HttpResponse, web};

use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnfpkgm::common;

/// GET /vnfpkgm/v1/vnf_packages/{id}: the whole VnfPkgInfo (selectors do not apply).
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let record = common::load(&state, &tenant, &id).await?;
    let body = common::render(&state, &negotiated, &record);
    Ok(HttpResponse::Ok()
        .insert_header((
            actix_web::http::header::ETAG,
            crate::common::etag::etag(record.row_version, &negotiated.version()),
        ))
        .content_type("application/json")
        .body(body.to_string()))
}
