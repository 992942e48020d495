use actix_web::{HttpResponse, web};
use solgate_core::pm::rules::Owner;
use solgate_db::repo::{notifications, vnfpm};
use solgate_db::write_transaction;

use super::{find, not_found};
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::state::AppState;

/// DELETE /vnfpm/v2/pm_jobs/{id}: 204; its reports and undelivered notifications go with it,
/// then its Prometheus rules.
pub async fn delete(state: web::Data<AppState>, tenant: Tenant, id: web::Path<String>) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let target = id.clone();
    state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                find(conn, &tenant, &target)?;
                if !vnfpm::delete_job(conn, &target)? {
                    return Err(not_found(&target));
                }
                notifications::drop_for_subscription(conn, &target)?;
                Ok(())
            })
        })
        .await?;
    state.vnfpm.remove(Owner::Job(&id)).await;
    tracing::info!(pm_job = %id, "PM job deleted");
    Ok(HttpResponse::NoContent().finish())
}
