use actix_web::{HttpResponse, web};
use solgate_db::repo::vnfpm;

use super::find;
use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnfpm/v2/pm_jobs/{id}/reports/{report_id}: the PerformanceReport (clause 6.4.4); 404
/// for a report of another job, or of a job the request may not see.
pub async fn show(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    path: web::Path<(String, String)>,
) -> ApiResult<HttpResponse> {
    let (id, report_id) = path.into_inner();
    let report = state
        .db(move |conn| {
            find(conn, &tenant, &id)?;
            vnfpm::find_report(conn, &id, &report_id)?
                .ok_or_else(|| ApiError::not_found(format!("PerformanceReport {report_id} of PmJob {id} not found.")))
        })
        .await?;
    let body = negotiated.entry.dictionary.render("PerformanceReport", &report.body);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}
