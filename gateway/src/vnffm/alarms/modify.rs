use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;
use solgate_db::write_transaction;

use crate::common::{Tenant, etag};
use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::validate;

/// PATCH /vnffm/v1/alarms/{id} (clause 7.4.3.3.4, JSON Merge Patch; Tacker takes
/// `application/json` too): AlarmModifications with the new `ackState`. 200 with the
/// AlarmModifications and the new `ETag`; 409 when the alarm is in that state already (as
/// SOL003 says); 412 when `If-Match` names another representation.
pub async fn modify(
    state: web::Data<AppState>,
    req: HttpRequest,
    negotiated: Negotiated,
    tenant: Tenant,
    id: web::Path<String>,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let request = body.0;
    validate(&negotiated, "AlarmModifications", &request)?;
    let ack_state = request["ackState"].as_str().unwrap_or_default().to_owned();
    let id = id.into_inner();
    let if_match = etag::if_match(&req, &negotiated.version());
    let wanted = ack_state.clone();
    let record = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                Ok(solgate_core::fm::acknowledge(conn, tenant.scope(), &id, &wanted, if_match.as_ref())?)
            })
        })
        .await?;
    tracing::info!(alarm = %record.id, ack_state, "alarm acknowledgement changed");
    let body = negotiated.entry.dictionary.render("AlarmModifications", &json!({ "ackState": ack_state }));
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, etag::etag(record.row_version, &negotiated.version())))
        .content_type("application/json")
        .body(body.to_string()))
}
