use actix_web::{HttpResponse, web};
use solgate_db::repo::vnfpm;
use solgate_db::write_transaction;

use super::find;
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnfpm::modifications;

/// PATCH /vnfpm/v2/pm_jobs/{id} (PmJobModifications, JSON Merge Patch): a new callback URI
/// and/or credentials, tested as at creation (422). 200 with the modifications, never the
/// credentials (SOL003 clause 6.5.2.12).
pub async fn modify(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let (lookup, who) = (id.clone(), tenant.clone());
    let current = state.db(move |conn| find(conn, &who, &lookup)).await?;
    let (uri, authentication, answer) = modifications(
        &state,
        &negotiated,
        "PmJobModifications",
        &body.0,
        current.callback_uri(),
        current.authentication.as_ref(),
    )
    .await?;
    state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let mut record = find(conn, &tenant, &id)?;
                record.body["callbackUri"] = serde_json::json!(uri);
                record.authentication = authentication;
                vnfpm::update_job(conn, &record)?;
                Ok(())
            })
        })
        .await?;
    let body = negotiated.entry.dictionary.render("PmJobModifications", &answer);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}
