//! Tasks on operation occurrences (retry, rollback, fail, cancel), shared by v1 and v2.
//! Retry, rollback and fail only from FAILED_TEMP; cancel only from STARTING, PROCESSING
//! or ROLLING_BACK (SOL003); 409 otherwise.

use actix_web::HttpResponse;
use serde_json::Value;
use solgate_core::op_occ::{ACTION_RETRY, ACTION_ROLLBACK};
use solgate_core::work::RpcMessage;
use solgate_core::{requests, shapes, without_private};
use solgate_db::AnyConnection;
use solgate_db::repo::lcm::{self, RawDocument};

use super::{major_of, present};
use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("VnfLcmOpOcc {id} not found."))
}

/// Retry or rollback: records the request for a conductor, 202 (no body, no Location,
/// as Tacker).
async fn request(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    id: String,
    action: &'static str,
) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let op_id = id.clone();
    let scope = tenant.scope().map(str::to_owned);
    let outbox_id = state
        .db(move |conn| {
            Ok(requests::request_action(conn, major, shapes::for_major(major), scope.as_deref(), &id, action)?)
        })
        .await?;
    state.dispatch(outbox_id, RpcMessage::lcm(op_id, major.number()));
    Ok(HttpResponse::Accepted().finish())
}

pub async fn retry(state: &AppState, negotiated: &Negotiated, tenant: &Tenant, id: String) -> ApiResult<HttpResponse> {
    request(state, negotiated, tenant, id, ACTION_RETRY).await
}

pub async fn rollback(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    id: String,
) -> ApiResult<HttpResponse> {
    request(state, negotiated, tenant, id, ACTION_ROLLBACK).await
}

/// Fail: FAILED_TEMP → FAILED at once (no conductor involved); 200 with the occurrence.
pub async fn fail(state: &AppState, negotiated: &Negotiated, tenant: &Tenant, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let op = requests::fail(&state.machine, major, tenant.scope(), &id).await?;
    let links = present::op_occ_links(&state.links, major.number(), &op.body);
    let body = present::render(negotiated, "VnfLcmOpOcc", &op.body, links);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}

/// Cancel (SOL003): 202; the body (CancelMode) is optional.
pub async fn cancel(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    id: String,
    body: Option<Value>,
) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let mode = match &body {
        Some(body) => {
            super::validate(negotiated, "CancelMode", body)?;
            body["cancelMode"].as_str().unwrap_or("GRACEFUL").to_owned()
        }
        None => "GRACEFUL".to_owned(),
    };
    requests::cancel(&state.machine, major, tenant.scope(), &id, &mode).await?;
    Ok(HttpResponse::Accepted().finish())
}

/// GET vnf_lcm_op_occs: filter, selectors, paging.
pub async fn list(state: &AppState, req: &actix_web::HttpRequest, negotiated: &Negotiated) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let query = crate::common::list::parse(req, negotiated, "VnfLcmOpOcc")?;
    let page = crate::common::list::run(
        state,
        req,
        &query,
        crate::common::list::Source {
            columns: lcm::columns::OP_OCCS,
            page_size: state.paging.lcm_op_occ_page_size,
            fetch: move |conn: &mut AnyConnection, backend, spec: &_| lcm::list_ops_raw(conn, backend, major, spec),
            document: |raw: &RawDocument| without_private(serde_json::from_str(&raw.body).unwrap_or(Value::Null)),
            id: |raw: &RawDocument| raw.id.clone(),
        },
    )
    .await?;
    let version = negotiated.version();
    let selectors = crate::common::list::selector_key(&query);
    let known = present::operation_types(negotiated);
    let entries: Vec<_> = page
        .items
        .iter()
        .filter(|raw| {
            // Occurrences of operation types a later minor added are left out of an earlier
            // minor's pages (rarely: only then is the stored body read here).
            known.is_none() || present::operation_shown(known, &serde_json::from_str(&raw.body).unwrap_or(Value::Null))
        })
        .map(|raw| {
            let key = format!("o{}|{}|{}|{version}|{selectors}", major.number(), raw.id, raw.stamp);
            state.render_cache.get_or_render(key, || {
                let stored: Value = serde_json::from_str(&raw.body).unwrap_or(Value::Null);
                let links = present::op_occ_links(&state.links, major.number(), &stored);
                let rendered = present::render(negotiated, "VnfLcmOpOcc", &stored, links);
                present::select(&query.selector, &present::OP_OCC_SELECTORS, rendered).to_string()
            })
        })
        .collect();
    Ok(crate::common::list::respond_serialized(&entries, page.next_link))
}

/// GET vnf_lcm_op_occs/{id}.
pub async fn show(state: &AppState, negotiated: &Negotiated, tenant: &Tenant, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let lookup = id.clone();
    let op = state
        .read(move |conn| Ok(lcm::find_op(conn, major, &lookup)?))
        .await?
        .filter(|op| tenant.sees(&op.project))
        .ok_or_else(|| not_found(&id))?;
    if !present::operation_shown(present::operation_types(negotiated), &op.body) {
        return Err(ApiError::not_acceptable(format!(
            "VnfLcmOpOcc {id} is a {} operation, which version {} does not define; ask for a later version.",
            op.body["operation"].as_str().unwrap_or_default(),
            negotiated.version()
        )));
    }
    let links = present::op_occ_links(&state.links, major.number(), &op.body);
    let body = present::render(negotiated, "VnfLcmOpOcc", &op.body, links);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}
