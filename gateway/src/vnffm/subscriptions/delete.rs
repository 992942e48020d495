use actix_web::{HttpResponse, web};
use solgate_db::repo::{fm_subscriptions, notifications};
use solgate_db::write_transaction;

use super::not_found;
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::state::AppState;

/// DELETE /vnffm/v1/subscriptions/{id}: 204; its undelivered notifications go with it.
pub async fn delete(state: web::Data<AppState>, tenant: Tenant, id: web::Path<String>) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let target = id.clone();
    let dropped = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let visible = fm_subscriptions::find(conn, &target)?.is_some_and(|record| tenant.sees(&record.project));
                if !visible || !fm_subscriptions::delete(conn, &target)? {
                    return Err(not_found(&target));
                }
                Ok(notifications::drop_for_subscription(conn, &target)?)
            })
        })
        .await?;
    tracing::info!(subscription = %id, dropped_notifications = dropped, "VNF FM subscription deleted");
    Ok(HttpResponse::NoContent().finish())
}
